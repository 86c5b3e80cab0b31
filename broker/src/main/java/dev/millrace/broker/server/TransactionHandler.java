package dev.millrace.broker.server;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.AddOffsetsToTxnResponseData;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData.AddPartitionsToTxnResultCollection;
import org.apache.kafka.common.message.DescribeProducersRequestData;
import org.apache.kafka.common.message.DescribeProducersResponseData;
import org.apache.kafka.common.message.DescribeTransactionsResponseData;
import org.apache.kafka.common.message.EndTxnResponseData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.message.ListTransactionsRequestData;
import org.apache.kafka.common.message.ListTransactionsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AddOffsetsToTxnRequest;
import org.apache.kafka.common.requests.AddOffsetsToTxnResponse;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.requests.DescribeProducersRequest;
import org.apache.kafka.common.requests.DescribeProducersResponse;
import org.apache.kafka.common.requests.DescribeTransactionsRequest;
import org.apache.kafka.common.requests.DescribeTransactionsResponse;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.requests.EndTxnResponse;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.ListTransactionsRequest;
import org.apache.kafka.common.requests.ListTransactionsResponse;
import org.apache.kafka.common.utils.Utils;

import dev.millrace.broker.group.OffsetsTopic;
import dev.millrace.broker.log.PartitionLog;
import dev.millrace.broker.txn.TransactionCoordinator;
import dev.millrace.protocol.ext.TxnAddSharePartition;
import dev.millrace.broker.txn.TransactionMetadata;
import dev.millrace.broker.txn.TransactionState;

/**
 * The transaction APIs, translated between Kafka's messages and the {@link TransactionCoordinator}:
 * InitProducerId with a transactional id, AddPartitionsToTxn (v0-3, the client versions; v4 from brokers, verify only),
 * AddOffsetsToTxn, EndTxn, and the admin APIs DescribeTransactions, ListTransactions and
 * DescribeProducers (the latter from the partitions' producer state).
 *
 * <p>AddPartitionsToTxn with a partition the metadata does not know answers that partition
 * UNKNOWN_TOPIC_OR_PARTITION and the others OPERATION_NOT_ATTEMPTED, adding none, as Kafka does (the partitions
 * need not be hosted by this broker: their markers go to their leaders). DescribeTransactions answers
 * NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS per id whose partition is not led and loaded here;
 * ListTransactions lists the ids of the partitions led here (an admin client asks every broker).
 *
 * <p>Thread-safe; called on request threads.
 */
final class TransactionHandler {

    private final TransactionCoordinator coordinator;
    private final PartitionManager partitions;
    private final int offsetsPartitionCount;
    private final Predicate<TopicPartition> exists;

    /** @param exists whether the metadata knows a partition (the coordinator need not host it) */
    TransactionHandler(TransactionCoordinator coordinator, PartitionManager partitions, int offsetsPartitionCount,
                       Predicate<TopicPartition> exists) {
        this.coordinator = coordinator;
        this.partitions = partitions;
        this.offsetsPartitionCount = offsetsPartitionCount;
        this.exists = exists;
    }

    TransactionCoordinator coordinator() {
        return coordinator;
    }

    /**
     * TxnAddSharePartition (broker to broker, {@link TxnAddSharePartition}): adds a share-partition to an Ongoing
     * transaction coordinated here; a partition the metadata does not know is refused (INVALID_REQUEST).
     */
    CompletableFuture<TxnAddSharePartition.Response> addSharePartition(TxnAddSharePartition.Request request) {
        TopicPartition tp = new TopicPartition(request.topic(), request.partition());
        if (request.transactionalId().isEmpty() || !exists.test(tp)) {
            return CompletableFuture.completedFuture(TxnAddSharePartition.Response.error(Errors.INVALID_REQUEST.code(),
                    request.transactionalId().isEmpty() ? "transactional_id must not be empty"
                            : "the metadata knows no partition " + tp));
        }
        return coordinator.addSharePartition(request.transactionalId(), tp).thenApply(r -> r.error() == Errors.NONE
                ? new TxnAddSharePartition.Response(Errors.NONE.code(), null, r.producerId(), r.producerEpoch())
                : TxnAddSharePartition.Response.error(r.error().code(), null));
    }

    CompletableFuture<InitProducerIdResponse> initProducerId(InitProducerIdRequest request) {
        var data = request.data();
        return coordinator.initProducerId(data.transactionalId(), data.transactionTimeoutMs(), data.producerId(),
                data.producerEpoch()).thenApply(r -> new InitProducerIdResponse(new InitProducerIdResponseData()
                .setErrorCode(r.error().code()).setProducerId(r.producerId()).setProducerEpoch(r.producerEpoch())));
    }

    CompletableFuture<AddPartitionsToTxnResponse> addPartitions(AddPartitionsToTxnRequest request) {
        AddPartitionsToTxnRequestData data = request.data();
        if (request.version() >= 4) {
            return CompletableFuture.completedFuture(verifyPartitions(data));
        }
        List<TopicPartition> requested = AddPartitionsToTxnRequest.getPartitions(data.v3AndBelowTopics());
        Map<TopicPartition, Errors> unknown = new HashMap<>();
        for (TopicPartition tp : requested) {
            if (!exists.test(tp)) {
                unknown.put(tp, Errors.UNKNOWN_TOPIC_OR_PARTITION);
            }
        }
        if (!unknown.isEmpty()) {
            Map<TopicPartition, Errors> errors = new HashMap<>();
            requested.forEach(tp -> errors.put(tp, unknown.getOrDefault(tp, Errors.OPERATION_NOT_ATTEMPTED)));
            return CompletableFuture.completedFuture(addPartitionsResponse(errors));
        }
        return coordinator.addPartitions(data.v3AndBelowTransactionalId(), data.v3AndBelowProducerId(),
                data.v3AndBelowProducerEpoch(), requested).thenApply(error -> {
                    Map<TopicPartition, Errors> errors = new HashMap<>();
                    requested.forEach(tp -> errors.put(tp, error));
                    return addPartitionsResponse(errors);
                });
    }

    /**
     * AddPartitionsToTxn version 4 (broker to broker, {@link TxnVerifier}): for each transaction with
     * {@code verify_only}, whether each partition is in its ongoing transaction
     * ({@link TransactionCoordinator#verifyTransactionalBatch}); nothing changes. A transaction without
     * {@code verify_only} (Kafka's transaction version 2 adds partitions this way) is not served: INVALID_REQUEST for
     * its partitions.
     */
    private AddPartitionsToTxnResponse verifyPartitions(AddPartitionsToTxnRequestData data) {
        AddPartitionsToTxnResultCollection results = new AddPartitionsToTxnResultCollection();
        for (AddPartitionsToTxnTransaction txn : data.transactions()) {
            Map<TopicPartition, Errors> errors = new LinkedHashMap<>();
            for (TopicPartition tp : AddPartitionsToTxnRequest.getPartitions(txn.topics())) {
                errors.put(tp, txn.verifyOnly() ? coordinator.verifyTransactionalBatch(txn.transactionalId(),
                        txn.producerId(), txn.producerEpoch(), tp) : Errors.INVALID_REQUEST);
            }
            results.add(AddPartitionsToTxnResponse.resultForTransaction(txn.transactionalId(), errors));
        }
        return new AddPartitionsToTxnResponse(new AddPartitionsToTxnResponseData().setResultsByTransaction(results));
    }

    private static AddPartitionsToTxnResponse addPartitionsResponse(Map<TopicPartition, Errors> errors) {
        return new AddPartitionsToTxnResponse(new AddPartitionsToTxnResponseData().setResultsByTopicV3AndBelow(
                AddPartitionsToTxnResponse.resultForTransaction(AddPartitionsToTxnResponse.V3_AND_BELOW_TXN_ID, errors)
                        .topicResults()));
    }

    CompletableFuture<AddOffsetsToTxnResponse> addOffsets(AddOffsetsToTxnRequest request) {
        var data = request.data();
        if (data.groupId() == null || data.groupId().isEmpty()) {
            return CompletableFuture.completedFuture(new AddOffsetsToTxnResponse(new AddOffsetsToTxnResponseData()
                    .setErrorCode(Errors.INVALID_GROUP_ID.code())));
        }
        TopicPartition offsetsPartition = new TopicPartition(OffsetsTopic.NAME,
                Utils.abs(data.groupId().hashCode()) % offsetsPartitionCount);
        return coordinator.addPartitions(data.transactionalId(), data.producerId(), data.producerEpoch(),
                List.of(offsetsPartition)).thenApply(error -> new AddOffsetsToTxnResponse(
                new AddOffsetsToTxnResponseData().setErrorCode(error.code())));
    }

    CompletableFuture<EndTxnResponse> endTxn(EndTxnRequest request) {
        var data = request.data();
        return coordinator.endTransaction(data.transactionalId(), data.producerId(), data.producerEpoch(),
                data.committed()).thenApply(error -> new EndTxnResponse(new EndTxnResponseData()
                .setErrorCode(error.code()).setProducerId(data.producerId()).setProducerEpoch(data.producerEpoch())));
    }

    DescribeTransactionsResponse describeTransactions(DescribeTransactionsRequest request) {
        List<String> ids = request.data().transactionalIds();
        Map<String, TransactionMetadata> found = coordinator.describe(ids);
        DescribeTransactionsResponseData response = new DescribeTransactionsResponseData();
        for (String id : ids) {
            TransactionMetadata txn = found.get(id);
            var out = new DescribeTransactionsResponseData.TransactionState().setTransactionalId(id);
            Errors refused = coordinator.coordinatorError(id);
            if (refused != Errors.NONE) {
                out.setErrorCode(refused.code());
            } else if (txn == null) {
                out.setErrorCode(Errors.TRANSACTIONAL_ID_NOT_FOUND.code());
            } else {
                out.setTransactionState(txn.state().kafkaName()).setTransactionTimeoutMs(txn.timeoutMs())
                        .setTransactionStartTimeMs(txn.txnStartMs()).setProducerId(txn.producerId())
                        .setProducerEpoch(txn.producerEpoch());
                Map<String, List<Integer>> byTopic = new LinkedHashMap<>();
                for (TopicPartition tp : txn.partitions()) {
                    byTopic.computeIfAbsent(tp.topic(), t -> new ArrayList<>()).add(tp.partition());
                }
                byTopic.forEach((topic, indexes) -> out.topics().add(
                        new DescribeTransactionsResponseData.TopicData().setTopic(topic).setPartitions(indexes)));
            }
            response.transactionStates().add(out);
        }
        return new DescribeTransactionsResponse(response);
    }

    ListTransactionsResponse listTransactions(ListTransactionsRequest request) {
        ListTransactionsRequestData data = request.data();
        ListTransactionsResponseData response = new ListTransactionsResponseData();
        if (!coordinator.isLoaded()) {
            return new ListTransactionsResponse(response.setErrorCode(Errors.COORDINATOR_LOAD_IN_PROGRESS.code()));
        }
        Pattern pattern = null;
        if (data.transactionalIdPattern() != null && !data.transactionalIdPattern().isEmpty()) {
            try {
                pattern = Pattern.compile(data.transactionalIdPattern());
            } catch (PatternSyntaxException e) {
                return new ListTransactionsResponse(response.setErrorCode(Errors.INVALID_REGULAR_EXPRESSION.code()));
            }
        }
        Set<String> known = new java.util.HashSet<>();
        for (TransactionState state : TransactionState.values()) {
            known.add(state.kafkaName());
        }
        List<String> unknownStates = new ArrayList<>();
        for (String filter : data.stateFilters()) {
            if (!known.contains(filter)) {
                unknownStates.add(filter);
            }
        }
        response.setUnknownStateFilters(unknownStates);
        long now = System.currentTimeMillis();
        for (TransactionMetadata txn : coordinator.list()) {
            boolean stateOk = data.stateFilters().isEmpty() || data.stateFilters().contains(txn.state().kafkaName());
            boolean producerOk = data.producerIdFilters().isEmpty()
                    || data.producerIdFilters().contains(txn.producerId());
            boolean durationOk = data.durationFilter() < 0
                    || txn.state() == TransactionState.ONGOING && now - txn.txnStartMs() >= data.durationFilter();
            boolean idOk = pattern == null || pattern.matcher(txn.transactionalId()).matches();
            if (stateOk && producerOk && durationOk && idOk) {
                response.transactionStates().add(new ListTransactionsResponseData.TransactionState()
                        .setTransactionalId(txn.transactionalId()).setProducerId(txn.producerId())
                        .setTransactionState(txn.state().kafkaName()));
            }
        }
        return new ListTransactionsResponse(response);
    }

    DescribeProducersResponse describeProducers(DescribeProducersRequest request) {
        DescribeProducersResponseData response = new DescribeProducersResponseData();
        for (DescribeProducersRequestData.TopicRequest topic : request.data().topics()) {
            var outTopic = new DescribeProducersResponseData.TopicResponse().setName(topic.name());
            for (int index : topic.partitionIndexes()) {
                var outPartition = new DescribeProducersResponseData.PartitionResponse().setPartitionIndex(index);
                var partition = partitions.partition(new TopicPartition(topic.name(), index));
                if (partition.isEmpty()) {
                    outPartition.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code())
                            .setErrorMessage("This broker does not host " + topic.name() + "-" + index);
                } else {
                    for (PartitionLog.ProducerSnapshot producer : partition.get().log().producers()) {
                        outPartition.activeProducers().add(new DescribeProducersResponseData.ProducerState()
                                .setProducerId(producer.producerId()).setProducerEpoch(producer.epoch())
                                .setLastSequence(producer.lastSequence()).setLastTimestamp(producer.lastTimestamp())
                                .setCoordinatorEpoch(0).setCurrentTxnStartOffset(producer.currentTxnFirstOffset()));
                    }
                }
                outTopic.partitions().add(outPartition);
            }
            response.topics().add(outTopic);
        }
        return new DescribeProducersResponse(response);
    }
}
