package dev.millrace.broker.server;

import java.util.Collection;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.group.GroupCoordinator;
import dev.millrace.broker.group.OffsetsTopic;
import dev.millrace.broker.log.AppendOrigin;
import dev.millrace.broker.txn.TxnMarkerWriter;

/**
 * Writes transaction markers to partitions of this broker: one control batch per partition
 * (producer id, the transaction's epoch, coordinator epoch 0), appended with
 * {@link AppendOrigin#COORDINATOR}. Afterwards it has read-committed fetches, share fetches and the
 * delay service woken for the partition on the purgatory's wake-up thread
 * ({@link FetchPurgatory#onAppendLater}: the coordinator's thread does not complete them itself before
 * EndTxn answers), and for a {@code __consumer_offsets} partition it makes the group coordinator apply or
 * drop the producer's pending offsets. A partition that no longer exists (its topic was deleted)
 * is skipped. Once all are written the {@link MarkerListener} hears of it (share acknowledgements
 * held for the transaction are settled then).
 *
 * <p>Thread-safe.
 */
final class LocalTxnMarkerWriter implements TxnMarkerWriter {

    private static final Logger log = LoggerFactory.getLogger(LocalTxnMarkerWriter.class);
    private static final int COORDINATOR_EPOCH = 0;

    private final PartitionManager partitions;
    private final FetchPurgatory purgatory;
    private final GroupCoordinator groups;
    private final Time time;
    private volatile MarkerListener listener = (producerId, commit) -> { };

    /** Told after all markers of a transaction were written (again after a retry that rewrote them). */
    @FunctionalInterface
    interface MarkerListener {
        void onMarkers(long producerId, boolean commit);
    }

    LocalTxnMarkerWriter(PartitionManager partitions, FetchPurgatory purgatory, GroupCoordinator groups, Time time) {
        this.partitions = partitions;
        this.purgatory = purgatory;
        this.groups = groups;
        this.time = time;
    }

    void setMarkerListener(MarkerListener listener) {
        this.listener = listener;
    }

    @Override
    public void writeMarkers(long producerId, short producerEpoch, boolean commit,
                             Collection<TopicPartition> targets) {
        EndTransactionMarker marker = new EndTransactionMarker(commit ? ControlRecordType.COMMIT
                : ControlRecordType.ABORT, COORDINATOR_EPOCH);
        for (TopicPartition tp : targets) {
            Partition partition = partitions.partition(tp).orElse(null);
            if (partition == null) {
                log.warn("Skipping the {} marker of producer {} for {}: the partition no longer exists",
                        commit ? "commit" : "abort", producerId, tp);
                continue;
            }
            partition.appendAsLeader(MemoryRecords.withEndTransactionMarker(time.milliseconds(), producerId,
                    producerEpoch, marker), AppendOrigin.COORDINATOR);
            purgatory.onAppendLater(tp);
            if (tp.topic().equals(OffsetsTopic.NAME)) {
                groups.onTransactionMarker(tp.partition(), producerId, commit).join();
            }
        }
        listener.onMarkers(producerId, commit);
    }
}
