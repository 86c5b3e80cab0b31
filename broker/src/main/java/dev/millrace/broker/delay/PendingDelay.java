package dev.millrace.broker.delay;

import java.util.Comparator;

import dev.millrace.delay.TimerTask;

/**
 * A delayed record waiting in the service: where it is in the delay topic, when it is due and
 * where it goes. The record itself stays in the log and is read again when due, so a pending delay
 * costs this object and its timer entry, not the record's bytes.
 */
final class PendingDelay {

    static final Comparator<PendingDelay> BY_DUE = Comparator.comparingLong((PendingDelay p) -> p.dueMs)
            .thenComparingLong(p -> p.offset);

    final long offset;
    final long dueMs;
    final String targetTopic;
    final int targetPartition;
    TimerTask task;

    PendingDelay(long offset, long dueMs, String targetTopic, int targetPartition) {
        this.offset = offset;
        this.dueMs = dueMs;
        this.targetTopic = targetTopic;
        this.targetPartition = targetPartition;
    }

    @Override
    public String toString() {
        return "PendingDelay(offset=" + offset + ", due=" + dueMs + ", target=" + targetTopic + "/" + targetPartition
                + ")";
    }
}
