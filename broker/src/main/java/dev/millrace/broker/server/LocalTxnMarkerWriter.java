package dev.millrace.broker.server;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.CoordinatorNotAvailableException;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.utils.Time;

import dev.millrace.broker.group.GroupCoordinator;
import dev.millrace.broker.group.OffsetsTopic;
import dev.millrace.broker.log.AppendOrigin;

/**
 * Writes transaction markers to partitions this broker leads, for the local coordinator
 * ({@link ClusterTxnMarkerWriter}) and for WriteTxnMarkers requests of other brokers' coordinators
 * ({@link WriteTxnMarkersHandler}): one control batch per partition (producer id, the transaction's epoch, the
 * coordinator epoch), appended with {@link AppendOrigin#COORDINATOR}. Afterwards it has read-committed fetches, share
 * fetches and the delay service woken for the partition on the purgatory's wake-up thread
 * ({@link FetchPurgatory#onAppendLater}: the coordinator's thread does not complete them itself before EndTxn answers),
 * and for a {@code __consumer_offsets} partition it makes the group coordinator apply or drop the producer's pending
 * offsets. A marker counts as written once it is on the partition's in-sync replicas (the high watermark passed it, as
 * an acks=all produce waits), so a committed transaction's markers survive the loss of the partition's leader. Once
 * all markers of one call are written, the {@link MarkerListener} hears of it, and the call is answered once the
 * listener is done (share acknowledgements held for the
 * transaction are settled then).
 *
 * <p>Thread-safe; never blocks.
 */
final class LocalTxnMarkerWriter {

    private final PartitionManager partitions;
    private final FetchPurgatory purgatory;
    private final GroupCoordinator groups;
    private final ReplicationWaiters replication;
    private final Time time;
    private volatile MarkerListener listener = (producerId, commit, written) -> CompletableFuture.completedFuture(null);

    /** Told after all markers of a call were written (again after a retry that rewrote them). */
    @FunctionalInterface
    interface MarkerListener {
        /**
         * {@code written}: the partitions of the call, each with its marker on the in-sync replicas. The call is
         * answered once the returned future completes (it must not fail); it must not block: it is called on the
         * thread that found the markers replicated, often one serving a follower's fetch.
         */
        CompletableFuture<Void> onMarkers(long producerId, boolean commit, Collection<TopicPartition> written);
    }

    LocalTxnMarkerWriter(PartitionManager partitions, FetchPurgatory purgatory, GroupCoordinator groups,
                         ReplicationWaiters replication, Time time) {
        this.partitions = partitions;
        this.purgatory = purgatory;
        this.groups = groups;
        this.replication = replication;
        this.time = time;
    }

    void setMarkerListener(MarkerListener listener) {
        this.listener = listener;
    }

    /**
     * Writes the marker to each of {@code targets}; completes with each partition's outcome (NONE once the marker is
     * on the in-sync replicas; NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS_AFTER_APPEND,
     * or the log's refusal otherwise). Never completes exceptionally.
     */
    CompletableFuture<Map<TopicPartition, Errors>> write(long producerId, short producerEpoch, int coordinatorEpoch,
                                                         boolean commit, Collection<TopicPartition> targets) {
        EndTransactionMarker marker = new EndTransactionMarker(commit ? ControlRecordType.COMMIT
                : ControlRecordType.ABORT, coordinatorEpoch);
        Map<TopicPartition, CompletableFuture<Errors>> outcomes = new LinkedHashMap<>();
        for (TopicPartition tp : targets) {
            outcomes.put(tp, writeOne(producerId, producerEpoch, commit, marker, tp));
        }
        List<CompletableFuture<Errors>> all = new ArrayList<>(outcomes.values());
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).thenCompose(v -> {
            Map<TopicPartition, Errors> errors = new LinkedHashMap<>();
            outcomes.forEach((tp, outcome) -> errors.put(tp, outcome.join()));
            if (errors.values().stream().allMatch(e -> e == Errors.NONE)) {
                return listener.onMarkers(producerId, commit, errors.keySet()).handle((done, e) -> errors);
            }
            return CompletableFuture.completedFuture(errors);
        });
    }

    private CompletableFuture<Errors> writeOne(long producerId, short producerEpoch, boolean commit,
                                               EndTransactionMarker marker, TopicPartition tp) {
        CompletableFuture<Void> done;
        try {
            Partition partition = partitions.partition(tp).orElseThrow(() ->
                    new UnknownTopicOrPartitionException("This broker does not host " + tp));
            partition.appendAsLeader(MemoryRecords.withEndTransactionMarker(time.milliseconds(), producerId,
                    producerEpoch, marker), AppendOrigin.COORDINATOR);
            purgatory.onAppendLater(tp);
            CompletableFuture<Void> replicated = replication.awaitLogEnd(tp);
            done = tp.topic().equals(OffsetsTopic.NAME)
                    ? replicated.thenCompose(v -> groups.onTransactionMarker(tp.partition(), producerId, commit))
                    : replicated;
        } catch (RuntimeException e) {
            done = CompletableFuture.failedFuture(e);
        }
        return done.handle((v, error) -> error == null ? Errors.NONE : errorOf(error));
    }

    private static Errors errorOf(Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (cause instanceof NotCoordinatorException) {
            return Errors.NOT_LEADER_OR_FOLLOWER; // the awaiter's words for "leadership moved"
        }
        if (cause instanceof CoordinatorNotAvailableException) {
            return Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND; // the replicas did not catch up in time
        }
        return Errors.forException(cause);
    }
}
