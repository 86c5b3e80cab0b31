package dev.millrace.broker.delay;

import java.util.Comparator;

/**
 * A delayed record waiting in the service: where it is in the delay topic, when it is due and
 * where it goes, and, while the service's cache budget allows, a copy of the record's content so
 * that delivering it needs no read. Without a copy the record is read from the log again when due,
 * so a pending delay then costs this object only.
 */
final class PendingDelay {

    static final Comparator<PendingDelay> BY_DUE = Comparator.comparingLong((PendingDelay p) -> p.dueMs)
            .thenComparingLong(p -> p.offset);

    final long offset;
    final long dueMs;
    final String targetTopic;
    final int targetPartition;
    /** The delayed record's size in the log (what a round counts against its byte bound). */
    final int sizeInBytes;
    /** The record's content when cached (else null and re-read from the log when due). */
    Copy copy;

    /** A copy of a delayed record's content; {@code bytes} is what it counts against the cache budget. */
    record Copy(long timestamp, byte[] key, byte[] value, org.apache.kafka.common.header.Header[] headers, int bytes) {
    }

    PendingDelay(long offset, long dueMs, String targetTopic, int targetPartition, int sizeInBytes) {
        this.offset = offset;
        this.dueMs = dueMs;
        this.targetTopic = targetTopic;
        this.targetPartition = targetPartition;
        this.sizeInBytes = sizeInBytes;
    }

    @Override
    public String toString() {
        return "PendingDelay(offset=" + offset + ", due=" + dueMs + ", target=" + targetTopic + "/" + targetPartition
                + ")";
    }
}
