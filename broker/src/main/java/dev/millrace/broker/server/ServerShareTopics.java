package dev.millrace.broker.server;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;

import dev.millrace.broker.controller.Controller;
import dev.millrace.broker.controller.Controller.NewTopic;
import dev.millrace.broker.log.AppendOrigin;
import dev.millrace.broker.log.AbortedTxn;
import dev.millrace.broker.log.LogConfig;
import dev.millrace.broker.replica.BrokerEndpoints;
import dev.millrace.broker.share.LogShareStateStore;
import dev.millrace.broker.share.ShareLog;
import dev.millrace.broker.share.ShareTopics;

/**
 * The broker's topics as the share package sees them: names and ids from the controller's latest
 * metadata image, logs from the {@link PartitionManager}, appends as leader that wake the fetches
 * (plain and share) waiting in the {@link FetchPurgatory}.
 *
 * <p>Thread-safe.
 */
final class ServerShareTopics implements ShareTopics {

    private final Controller controller;
    private final PartitionManager partitions;
    private final FetchPurgatory purgatory;
    private final BrokerEndpoints endpoints;
    private final int nodeId;
    private final BrokerRequestSender remote;
    /** Completes once the in-sync replicas of a partition led here have its log up to its current end. */
    private final java.util.function.Function<TopicPartition, CompletableFuture<Void>> awaitReplication;

    /** How long the leader of a dead-letter partition may take to have a copy on its in-sync replicas. */
    static final int REMOTE_APPEND_TIMEOUT_MS = 15_000;
    /** Produce v12: the newest this broker serves that names topics (v13 carries topic ids). */
    private static final short PRODUCE_VERSION = 12;

    ServerShareTopics(Controller controller, PartitionManager partitions, FetchPurgatory purgatory,
                      BrokerEndpoints endpoints, int nodeId, BrokerRequestSender remote,
                      java.util.function.Function<TopicPartition, CompletableFuture<Void>> awaitReplication) {
        this.controller = controller;
        this.partitions = partitions;
        this.purgatory = purgatory;
        this.endpoints = endpoints;
        this.nodeId = nodeId;
        this.remote = remote;
        this.awaitReplication = awaitReplication;
    }

    /**
     * Here when this broker leads {@code tp}, as an {@code acks=all} produce: refused below {@code min.insync.replicas}
     * (NOT_ENOUGH_REPLICAS), complete once the in-sync replicas have it (a copy only in this leader's log was lost with
     * it); else a Produce with {@code acks=all} to the leader the metadata names (the dead-letter partition of a
     * record is often led by another broker than its source partition, and the copy used to be dropped then).
     */
    @Override
    public CompletableFuture<Void> appendToLeader(TopicPartition tp, MemoryRecords records) {
        Partition local = partitions.partition(tp).filter(Partition::isLeader).orElse(null);
        if (local != null) {
            try {
                int minIsr = local.log().config().minInsyncReplicas();
                if (local.isrSize() < minIsr) {
                    throw new org.apache.kafka.common.errors.NotEnoughReplicasException("The ISR of " + tp + " is "
                            + local.isr() + ", below min.insync.replicas " + minIsr);
                }
                append(tp, records);
                return awaitReplication.apply(tp);
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        }
        Optional<Leader> leader = currentLeader(tp);
        if (leader.isEmpty()) {
            return CompletableFuture.failedFuture(new NotLeaderOrFollowerException("No leader of " + tp
                    + " is known to broker " + nodeId));
        }
        ProduceRequestData data = new ProduceRequestData().setAcks((short) -1)
                .setTimeoutMs(REMOTE_APPEND_TIMEOUT_MS);
        data.topicData().add(new ProduceRequestData.TopicProduceData().setName(tp.topic())
                .setPartitionData(List.of(new ProduceRequestData.PartitionProduceData().setIndex(tp.partition())
                        .setRecords(records))));
        int leaderId = leader.get().id();
        return remote.<ProduceResponse>send(leaderId, new ProduceRequest.Builder(PRODUCE_VERSION, PRODUCE_VERSION,
                data), PRODUCE_VERSION).thenAccept(response -> {
                    for (ProduceResponseData.TopicProduceResponse t : response.data().responses()) {
                        for (ProduceResponseData.PartitionProduceResponse p : t.partitionResponses()) {
                            Errors error = Errors.forCode(p.errorCode());
                            if (error != Errors.NONE) {
                                throw error.exception("Produce to " + tp + " at broker " + leaderId + " failed: "
                                        + error.name() + (p.errorMessage() == null ? "" : " " + p.errorMessage()));
                            }
                        }
                    }
                });
    }

    @Override
    public Optional<Leader> currentLeader(TopicPartition tp) {
        return controller.image().topic(tp.topic())
                .flatMap(t -> Optional.ofNullable(t.partitions().get(tp.partition())))
                .filter(p -> p.leader() >= 0 && p.leader() != nodeId)
                .flatMap(p -> endpoints.endpoint(p.leader()).map(address -> new Leader(p.leader(), p.leaderEpoch(),
                        address.getHostString(), address.getPort())));
    }

    @Override
    public Optional<Uuid> idOf(String topic) {
        return controller.image().topic(topic).map(t -> t.topicId());
    }

    @Override
    public Optional<String> nameOf(Uuid topicId) {
        return controller.image().topic(topicId).map(t -> t.name());
    }

    @Override
    public int leaderEpoch(Uuid topicId, int partition) {
        return controller.image().topic(topicId).flatMap(t -> Optional.ofNullable(t.partitions().get(partition)))
                .map(p -> p.leaderEpoch()).orElse(-1);
    }

    @Override
    public int partitionCount(String topic) {
        return controller.image().topic(topic).map(t -> t.partitions().size()).orElse(0);
    }

    @Override
    public Optional<ShareLog> log(TopicPartition tp) {
        return partitions.partition(tp).map(PartitionShareLog::new);
    }

    @Override
    public void append(TopicPartition tp, MemoryRecords records) {
        Partition partition = partitions.partition(tp).orElseThrow(() ->
                new UnknownTopicOrPartitionException("This broker does not host " + tp));
        partition.appendAsLeader(records, AppendOrigin.CLIENT);
        purgatory.onAppend(tp);
    }

    /** A partition's log, read up to the high watermark. */
    private record PartitionShareLog(Partition partition) implements ShareLog {

        @Override
        public long logStartOffset() {
            return partition.log().logStartOffset();
        }

        @Override
        public long highWatermark() {
            return partition.highWatermark();
        }

        @Override
        public long logEndOffset() {
            return partition.logEndOffset();
        }

        @Override
        public boolean isLeader() {
            return partition.isLeader();
        }

        @Override
        public int leaderEpoch() {
            return partition.leaderEpoch();
        }

        @Override
        public Records read(long offset, int maxBytes) {
            return partition.log().read(offset, maxBytes, true).records();
        }

        @Override
        public long lastStableOffset() {
            return partition.lastStableOffset();
        }

        @Override
        public boolean isAborted(RecordBatch batch) {
            return batch.isTransactional() && !batch.isControlBatch() && AbortedTxn.anyCovers(
                    partition.log().collectAbortedTransactions(batch.baseOffset(), batch.lastOffset() + 1), batch);
        }

        @Override
        public Optional<String> deadLetterTopic() {
            String topic = partition.log().config().shareDeadLetterTopic();
            return topic.isEmpty() ? Optional.empty() : Optional.of(topic);
        }
    }
}
