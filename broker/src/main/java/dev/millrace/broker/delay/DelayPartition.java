package dev.millrace.broker.delay;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.kafka.common.TopicPartition;

/**
 * The service's state for one partition of the delay topic: the offset up to which the log has
 * been read, and the pending delays by offset and by due time. The low-water mark, below which
 * every delayed record has been delivered, is what the checkpoint keeps.
 *
 * <p>Confined to the service's thread.
 */
final class DelayPartition {

    final TopicPartition tp;
    final String transactionalId;
    long producerId = -1;
    short epoch = -1;
    /** Next offset of the delay topic partition to read. */
    long scanOffset;
    private final TreeMap<Long, PendingDelay> byOffset = new TreeMap<>();
    private final TreeSet<PendingDelay> byDue = new TreeSet<>(PendingDelay.BY_DUE);
    /** Delivered offsets whose delivery marks have not been read back yet (they may be scanned later). */
    private final Map<Long, Boolean> delivered = new HashMap<>();
    /** Set while a delivery task for this partition waits in the service's queue (timer firings coalesce). */
    final java.util.concurrent.atomic.AtomicBoolean deliveryQueued = new java.util.concurrent.atomic.AtomicBoolean();
    long lastCheckpointed = -1;
    long lastCheckpointMs;

    DelayPartition(TopicPartition tp, String transactionalId) {
        this.tp = tp;
        this.transactionalId = transactionalId;
    }

    /** Adds a pending delay unless its offset is already pending or delivered. */
    boolean add(PendingDelay pending) {
        if (byOffset.containsKey(pending.offset) || delivered.containsKey(pending.offset)) {
            return false;
        }
        byOffset.put(pending.offset, pending);
        byDue.add(pending);
        return true;
    }

    /** Removes a pending delay (delivered or given up); returns it, or null if it was not pending. */
    PendingDelay remove(long offset) {
        PendingDelay pending = byOffset.remove(offset);
        if (pending != null) {
            byDue.remove(pending);
            if (pending.task != null) {
                pending.task.cancel();
            }
        }
        return pending;
    }

    void markDelivered(long offset) {
        remove(offset);
        delivered.put(offset, Boolean.TRUE);
    }

    /**
     * A delivery mark for {@code offset} was read from the log: it needs no more remembering.
     *
     * @return the pending delay it removed (when rebuilding), or null
     */
    PendingDelay onDoneMark(long offset) {
        delivered.remove(offset);
        return remove(offset);
    }

    /** Pending delays due at {@code nowMs}, earliest first, at most {@code max}. */
    List<PendingDelay> due(long nowMs, int max) {
        List<PendingDelay> out = new ArrayList<>();
        for (PendingDelay pending : byDue) {
            if (pending.dueMs > nowMs || out.size() >= max) {
                break;
            }
            out.add(pending);
        }
        return out;
    }

    /** The earliest pending delay, or null. */
    PendingDelay earliest() {
        return byDue.isEmpty() ? null : byDue.first();
    }

    int pendingCount() {
        return byOffset.size();
    }

    /** Every offset below this has been delivered (or given up): the checkpoint. */
    long lowWaterMark() {
        return byOffset.isEmpty() ? scanOffset : Math.min(scanOffset, byOffset.firstKey());
    }

    Iterable<PendingDelay> all() {
        return byOffset.values();
    }
}
