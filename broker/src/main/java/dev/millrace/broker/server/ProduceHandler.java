package dev.millrace.broker.server;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
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
import dev.millrace.broker.replica.BrokerEndpoints;
import dev.millrace.broker.txn.TransactionCoordinator;

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
 * bumped by a newer producer with its transactional id (a zombie). This keeps a batch from opening a transaction that no coordinator will
 * ever close, which would hold back the last stable offset for good. The check is made only where this broker is the
 * transactional id's coordinator (COORDINATOR_LOAD_IN_PROGRESS, retriable, while it loads); a batch whose coordinator
 * is another broker is written unverified (see {@link TransactionCoordinator#verifyTransactionalBatch} for why and
 * for the gap this leaves).
 *
 * <p>Thread-safe; called on request threads.
 */
final class ProduceHandler {

    private static final Logger log = LoggerFactory.getLogger(ProduceHandler.class);

    private final PartitionManager partitions;
    private final FetchPurgatory purgatory;
    private final ProducePurgatory producePurgatory;
    private final BrokerEndpoints endpoints;
    private final TransactionCoordinator transactions;
    private final Map<String, BiConsumer<String, MemoryRecords>> topicValidators;

    /**
     * @param topicValidators checks for appends to particular topics (the delay topic's headers), given the
     *        request's transactional id (or null) and the records, run before the append; a validator refuses by
     *        throwing an ApiException
     */
    ProduceHandler(PartitionManager partitions, FetchPurgatory purgatory, ProducePurgatory producePurgatory,
                   BrokerEndpoints endpoints, TransactionCoordinator transactions,
                   Map<String, BiConsumer<String, MemoryRecords>> topicValidators) {
        this.partitions = partitions;
        this.purgatory = purgatory;
        this.producePurgatory = producePurgatory;
        this.endpoints = endpoints;
        this.transactions = transactions;
        this.topicValidators = Map.copyOf(topicValidators);
    }

    CompletableFuture<ProduceResponse> handle(ProduceRequest request) {
        ProduceResponseData response = new ProduceResponseData();
        List<DelayedProduce.Waiting> waiting = new ArrayList<>();
        LeaderHints hints = new LeaderHints(endpoints);
        for (ProduceRequestData.TopicProduceData topic : request.data().topicData()) {
            TopicProduceResponse topicResponse = new TopicProduceResponse().setName(topic.name())
                    .setTopicId(topic.topicId());
            for (ProduceRequestData.PartitionProduceData data : topic.partitionData()) {
                TopicPartition tp = new TopicPartition(topic.name(), data.index());
                topicResponse.partitionResponses().add(append(tp, (MemoryRecords) data.records(), request.acks(),
                        request.transactionalId(), waiting, hints));
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
                                            String transactionalId, List<DelayedProduce.Waiting> waiting,
                                            LeaderHints hints) {
        PartitionProduceResponse out = new PartitionProduceResponse().setIndex(tp.partition())
                .setBaseOffset(-1).setLogAppendTimeMs(RecordBatch.NO_TIMESTAMP).setLogStartOffset(-1);
        Partition partition = null;
        try {
            partition = partitions.partition(tp).orElseThrow(() ->
                    new UnknownTopicOrPartitionException("This broker does not host " + tp));
            partition.checkLeader();
            for (RecordBatch batch : records.batches()) {
                if (!batch.isTransactional()) {
                    continue;
                }
                Errors verdict = transactions.verifyTransactionalBatch(transactionalId, batch.producerId(),
                        batch.producerEpoch(), tp);
                if (verdict == Errors.PRODUCER_FENCED) {
                    throw new ProducerFencedException("Producer " + batch.producerId() + " (transactional id "
                            + transactionalId + ") sent epoch " + batch.producerEpoch() + " for " + tp
                            + ", but a newer producer with that transactional id has fenced it");
                }
                if (verdict == Errors.COORDINATOR_LOAD_IN_PROGRESS) {
                    throw verdict.exception("The transaction coordinator of " + transactionalId
                            + " is loading its state; retry");
                }
                if (verdict != Errors.NONE) {
                    throw new InvalidTxnStateException("Transactional batch for " + tp + " of producer "
                            + batch.producerId() + " (transactional id " + transactionalId + ", epoch "
                            + batch.producerEpoch() + "): the partition is not in that producer's open transaction");
                }
            }
            BiConsumer<String, MemoryRecords> validator = topicValidators.get(tp.topic());
            if (validator != null) {
                validator.accept(transactionalId, records);
            }
            if (acks == -1 && partition.isrSize() < partition.log().config().minInsyncReplicas()) {
                throw new NotEnoughReplicasException("The ISR of " + tp + " is " + partition.isr()
                        + ", below min.insync.replicas " + partition.log().config().minInsyncReplicas());
            }
            LogAppendInfo info = partition.appendAsLeader(records, AppendOrigin.CLIENT);
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
}
