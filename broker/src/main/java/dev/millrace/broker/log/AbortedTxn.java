package dev.millrace.broker.log;

import org.apache.kafka.common.record.internal.RecordBatch;

/**
 * One aborted transaction of one producer on one partition: its data lies between
 * {@code firstOffset} and the abort marker at {@code lastOffset}. {@code lastStableOffset} is the
 * partition's last stable offset right after the marker was written (kept for diagnostics, as
 * Kafka's index does).
 */
public record AbortedTxn(long producerId, long firstOffset, long lastOffset, long lastStableOffset) {

    /** Whether {@code batch} is data of this aborted transaction (its producer, between its first offset and marker). */
    public boolean covers(RecordBatch batch) {
        return batch.isTransactional() && !batch.isControlBatch() && batch.producerId() == producerId
                && batch.baseOffset() >= firstOffset && batch.lastOffset() < lastOffset;
    }

    /** Whether {@code batch} is data of one of the {@code aborted} transactions. */
    public static boolean anyCovers(java.util.List<AbortedTxn> aborted, RecordBatch batch) {
        if (!batch.isTransactional()) {
            return false;
        }
        for (AbortedTxn txn : aborted) {
            if (txn.covers(batch)) {
                return true;
            }
        }
        return false;
    }
}
