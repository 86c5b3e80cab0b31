package dev.millrace.broker.server;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.message.ProduceResponseData.PartitionProduceResponse;
import org.apache.kafka.common.message.ProduceResponseData.TopicProduceResponse;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.log.AppendOrigin;
import dev.millrace.broker.log.LogAppendInfo;
import dev.millrace.broker.log.TxnVerification;
import dev.millrace.broker.replica.BrokerEndpoints;

/**
 * Produce: appends each partition's batches to its log as leader and answers per partition.
 *
 * <p>Only the leader appends: another broker answers NOT_LEADER_OR_FOLLOWER, with the leader it knows of (KIP-951:
 * CurrentLeader and NodeEndpoints in versions 10 and up) so that clients move without a metadata refresh.
 *
 * <p>acks: with 0 no response is sent; 1 answers once the batches are in the leader's log (and fsynced
 * when the topic's flush policy says so). -1 (all) first checks the committed ISR against the topic's
 * {@code min.insync.replicas} (NOT_ENOUGH_REPLICAS, nothing written), then appends and waits in the
 * {@link ProducePurgatory} until the high watermark passes the batches (the whole ISR has them), up to the request's
 * timeout (REQUEST_TIMED_OUT); see {@link DelayedProduce} for the other outcomes. With an ISR of the leader alone the
 * high watermark is the log end, so acks=-1 answers at once, as acks=1.
 *
 * <p>Idempotent batches (a producer id on the batch) go through the log's producer state: a retried
 * batch is not written twice and is answered with its original offset; stale epochs and sequence
 * gaps get INVALID_PRODUCER_EPOCH and OUT_OF_ORDER_SEQUENCE_NUMBER.
 *
 * <p>Transactional batches are written only for a partition that the producer (transactional id,
 * producer id and epoch of the request) has added to its open transaction at the transaction
 * coordinator; otherwise INVALID_TXN_STATE, or PRODUCER_FENCED for a producer whose epoch was
 * bumped by a newer producer with its transactional id (a zombie). This keeps a batch from opening a transaction that
 * no coordinator will ever close, which would hold back the last stable offset for good: a batch for a partition the
 * producer never added, or one that arrives after its transaction's marker (a Produce held up or retried in a
 * failover after the client gave up on it and aborted). A batch that would open a transaction on the partition is
 * verified with the coordinator first (Kafka's KIP-890, part 1: {@link TxnVerifier}, directly when this broker
 * coordinates the transactional id, with AddPartitionsToTxn {@code verify_only} otherwise), and appended only if no
 * marker of its producer reached the partition meanwhile ({@link TxnVerification}); later batches of a transaction
 * already open on the partition need no answer. The coordinator's NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS and
 * COORDINATOR_NOT_AVAILABLE (it moves, or cannot be reached) are answered as NOT_ENOUGH_REPLICAS, retriable, as Kafka
 * brokers do, with the cause in the message. A request waiting for a remote coordinator's answer holds its
 * connection's next request back (responses stay in order) and goes on on a request thread.
 *
 * <p>Thread-safe; called on request threads.
 */
final class ProduceHandler {

    private static final Logger log = LoggerFactory.getLogger(ProduceHandler.class);

    private final PartitionManager partitions;
    private final FetchPurgatory purgatory;
    private final ProducePurgatory producePurgatory;
    private final BrokerEndpoints endpoints;
    private final TxnVerifier verifier;
    private final Executor requestThreads;
    private final Map<String, BiConsumer<String, MemoryRecords>> topicValidators;

    /**
     * @param verifier        asks transaction coordinators about transactional batches
     * @param requestThreads  where a request goes on after a remote coordinator answered
     * @param topicValidators checks for appends to particular topics (the delay topic's headers), given the
     *        request's transactional id (or null) and the records, run before the append; a validator refuses by
     *        throwing an ApiException
     */
    ProduceHandler(PartitionManager partitions, FetchPurgatory purgatory, ProducePurgatory producePurgatory,
                   BrokerEndpoints endpoints, TxnVerifier verifier, Executor requestThreads,
                   Map<String, BiConsumer<String, MemoryRecords>> topicValidators) {
        this.partitions = partitions;
        this.purgatory = purgatory;
        this.producePurgatory = producePurgatory;
        this.endpoints = endpoints;
        this.verifier = verifier;
        this.requestThreads = requestThreads;
        this.topicValidators = Map.copyOf(topicValidators);
    }

    /** A transactional batch's verification: its producer and epoch, and the partition's guard. */
    private record TxnCheck(long producerId, short epoch, TxnVerification verification) {
    }

    /** A producer id and epoch whose batches are verified together. */
    private record ProducerKey(long producerId, short epoch) {
    }

    CompletableFuture<ProduceResponse> handle(ProduceRequest request) {
        String transactionalId = request.transactionalId();
        Map<TopicPartition, TxnCheck> checks = transactionalId == null ? Map.of() : startVerifications(request);
        Map<ProducerKey, List<TopicPartition>> toAsk = new LinkedHashMap<>();
        checks.forEach((tp, check) -> {
            if (check.verification().needed()) {
                toAsk.computeIfAbsent(new ProducerKey(check.producerId(), check.epoch()), k -> new ArrayList<>())
                        .add(tp);
            }
        });
        if (toAsk.isEmpty()) {
            return appendAll(request, checks, Map.of());
        }
        List<CompletableFuture<Map<TopicPartition, Errors>>> asked = new ArrayList<>();
        toAsk.forEach((producer, tps) -> asked.add(verifier.verify(transactionalId, producer.producerId(),
                producer.epoch(), tps)));
        CompletableFuture<Map<TopicPartition, Errors>> verdicts = CompletableFuture.allOf(
                asked.toArray(CompletableFuture[]::new)).thenApply(v -> {
                    Map<TopicPartition, Errors> all = new LinkedHashMap<>();
                    asked.forEach(f -> all.putAll(f.join()));
                    return all;
                });
        if (verdicts.isDone()) {
            return appendAll(request, checks, verdicts.join());
        }
        return verdicts.thenComposeAsync(v -> appendAll(request, checks, v), requestThreads);
    }

    /** Starts the verification of each transactional batch for a partition led here. */
    private Map<TopicPartition, TxnCheck> startVerifications(ProduceRequest request) {
        Map<TopicPartition, TxnCheck> checks = new LinkedHashMap<>();
        for (ProduceRequestData.TopicProduceData topic : request.data().topicData()) {
            for (ProduceRequestData.PartitionProduceData data : topic.partitionData()) {
                TopicPartition tp = new TopicPartition(topic.name(), data.index());
                RecordBatch batch = firstBatch((MemoryRecords) data.records());
                if (batch == null || !batch.isTransactional() || batch.isControlBatch()) {
                    continue;
                }
                partitions.partition(tp).filter(Partition::isLeader).ifPresent(partition -> checks.put(tp,
                        new TxnCheck(batch.producerId(), batch.producerEpoch(), partition.log()
                                .startTxnVerification(batch.producerId(), batch.producerEpoch()))));
            }
        }
        return checks;
    }

    private static RecordBatch firstBatch(MemoryRecords records) {
        if (records == null) {
            return null;
        }
        for (RecordBatch batch : records.batches()) {
            return batch;
        }
        return null;
    }

    private CompletableFuture<ProduceResponse> appendAll(ProduceRequest request, Map<TopicPartition, TxnCheck> checks,
                                                         Map<TopicPartition, Errors> verdicts) {
        ProduceResponseData response = new ProduceResponseData();
        List<DelayedProduce.Waiting> waiting = new ArrayList<>();
        LeaderHints hints = new LeaderHints(endpoints);
        for (ProduceRequestData.TopicProduceData topic : request.data().topicData()) {
            TopicProduceResponse topicResponse = new TopicProduceResponse().setName(topic.name())
                    .setTopicId(topic.topicId());
            for (ProduceRequestData.PartitionProduceData data : topic.partitionData()) {
                TopicPartition tp = new TopicPartition(topic.name(), data.index());
                topicResponse.partitionResponses().add(append(tp, (MemoryRecords) data.records(), request.acks(),
                        request.transactionalId(), checks.get(tp), verdicts.get(tp), waiting, hints));
            }
            response.responses().add(topicResponse);
        }
        if (request.version() >= 10) {
            hints.addTo(response);
        }
        if (waiting.isEmpty()) {
            return CompletableFuture.completedFuture(new ProduceResponse(response));
        }
        CompletableFuture<Void> replicated = new CompletableFuture<>();
        producePurgatory.watch(new DelayedProduce(request.data().timeoutMs(), waiting, replicated));
        return replicated.thenApply(v -> new ProduceResponse(response));
    }

    private PartitionProduceResponse append(TopicPartition tp, MemoryRecords records, short acks,
                                            String transactionalId, TxnCheck check, Errors verdict,
                                            List<DelayedProduce.Waiting> waiting, LeaderHints hints) {
        PartitionProduceResponse out = new PartitionProduceResponse().setIndex(tp.partition())
                .setBaseOffset(-1).setLogAppendTimeMs(RecordBatch.NO_TIMESTAMP).setLogStartOffset(-1);
        Partition partition = null;
        try {
            partition = partitions.partition(tp).orElseThrow(() ->
                    new UnknownTopicOrPartitionException("This broker does not host " + tp));
            partition.checkLeader();
            TxnVerification.Guard guard = checkTransaction(tp, records, transactionalId, check, verdict);
            BiConsumer<String, MemoryRecords> validator = topicValidators.get(tp.topic());
            if (validator != null) {
                validator.accept(transactionalId, records);
            }
            if (acks == -1 && partition.isrSize() < partition.log().config().minInsyncReplicas()) {
                throw new NotEnoughReplicasException("The ISR of " + tp + " is " + partition.isr()
                        + ", below min.insync.replicas " + partition.log().config().minInsyncReplicas());
            }
            LogAppendInfo info = partition.appendAsLeader(records, AppendOrigin.CLIENT, guard);
            purgatory.onAppend(tp);
            out.setBaseOffset(info.firstOffset()).setLogStartOffset(partition.log().logStartOffset());
            if (partition.log().config().timestampType() == TimestampType.LOG_APPEND_TIME) {
                out.setLogAppendTimeMs(info.maxTimestamp());
            }
            if (acks == -1) {
                waiting.add(new DelayedProduce.Waiting(partition, partition.leaderEpoch(), info.lastOffset() + 1, out));
            }
        } catch (RuntimeException e) {
            Errors error = Errors.forException(e);
            if (error == Errors.UNKNOWN_SERVER_ERROR) {
                log.error("Produce to {} failed", tp, e);
            }
            out.setErrorCode(error.code()).setErrorMessage(e.getMessage());
            if (e instanceof NotLeaderOrFollowerException && partition != null) {
                hints.currentLeader(partition).ifPresent(leader -> out.setCurrentLeader(
                        new ProduceResponseData.LeaderIdAndEpoch().setLeaderId(leader.leaderId())
                                .setLeaderEpoch(leader.leaderEpoch())));
            }
        }
        return out;
    }

    /**
     * The guard to append {@code records} with if they hold a transactional batch that may be written (null when they
     * hold none); throws the producer's error otherwise.
     */
    private static TxnVerification.Guard checkTransaction(TopicPartition tp, MemoryRecords records,
                                                          String transactionalId, TxnCheck check, Errors verdict) {
        RecordBatch batch = firstBatch(records);
        if (batch == null || !batch.isTransactional() || batch.isControlBatch()) {
            return null; // a client's marker: the log refuses it (only coordinators write markers)
        }
        String producer = "producer " + batch.producerId() + " (transactional id " + transactionalId + ", epoch "
                + batch.producerEpoch() + ")";
        if (transactionalId == null) {
            throw new InvalidTxnStateException("Transactional batch for " + tp + " of producer " + batch.producerId()
                    + " in a Produce without a transactional id");
        }
        if (check == null) {
            throw new NotLeaderOrFollowerException("This broker did not lead " + tp + " when the transactional batch"
                    + " of " + producer + " arrived");
        }
        if (!check.verification().needed() || verdict == Errors.NONE) {
            return check.verification().guard();
        }
        switch (verdict) {
            case PRODUCER_FENCED -> throw new ProducerFencedException("Producer " + batch.producerId()
                    + " (transactional id " + transactionalId + ") sent epoch " + batch.producerEpoch() + " for " + tp
                    + ", but a newer producer with that transactional id has fenced it");
            case INVALID_TXN_STATE -> throw new InvalidTxnStateException("Transactional batch for " + tp + " of "
                    + producer + ": the partition is not in that producer's open transaction at its coordinator");
            case NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE ->
                    throw new NotEnoughReplicasException("The transaction of " + producer + " could not be verified "
                            + "with its coordinator (" + verdict.name() + "); retry");
            default -> throw verdict.exception("Verifying the transaction of " + producer + " for " + tp
                    + " failed: " + verdict.name());
        }
    }
}
