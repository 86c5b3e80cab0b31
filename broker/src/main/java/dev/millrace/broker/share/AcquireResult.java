package dev.millrace.broker.share;

import java.util.List;

import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Records;

/**
 * What one acquisition handed a member: the batches that hold the acquired offsets (they may hold
 * other offsets too; the client keeps only the acquired ones) and the acquired offset ranges.
 */
public record AcquireResult(Records records, List<AcquiredBatch> acquired) {

    public static final AcquireResult EMPTY = new AcquireResult(MemoryRecords.EMPTY, List.of());

    public boolean isEmpty() {
        return acquired.isEmpty();
    }

    public int recordCount() {
        long count = 0;
        for (AcquiredBatch batch : acquired) {
            count += batch.lastOffset() - batch.firstOffset() + 1;
        }
        return (int) count;
    }
}
