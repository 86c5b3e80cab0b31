package dev.millrace.broker.delay;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.common.TopicPartition;

/**
 * The service's state for one partition of the delay topic: which leader epoch of it this broker
 * was elected in and which one the state was loaded for, the offset up to which the log has been read, the pending delays by offset and by due time, and the base offsets of delivery-mark
 * batches that rounds of this run committed (the scan skips them: their marks are already applied).
 * The low-water mark, below which every delayed record has been delivered, is what the checkpoint
 * keeps.
 *
 * <p>Confined to the service's thread, except {@link #scanQueued} and {@link #electedEpoch}.
 */
final class DelayPartition {

    final TopicPartition tp;
    /** Next offset of the delay topic partition to read. */
    long scanOffset;
    private final TreeMap<Long, PendingDelay> byOffset = new TreeMap<>();
    private final TreeSet<PendingDelay> byDue = new TreeSet<>(PendingDelay.BY_DUE);
    /** Base offsets of mark batches committed by this run's rounds, not yet reached by the scan. */
    private final TreeSet<Long> committedMarkBatches = new TreeSet<>();
    /** Set while a scan task for this partition waits in the service's queue (appends coalesce). */
    final AtomicBoolean scanQueued = new AtomicBoolean();
    long lastCheckpointed = -1;
    long lastCheckpointMs;
    /** The leader epoch this broker leads the partition in, or -1: set at once by the election events. */
    final AtomicInteger electedEpoch = new AtomicInteger(-1);
    /** The leader epoch the pending set was loaded for, or -1 when none is loaded. */
    int loadedEpoch = -1;
    /** Since when (wall clock) a round of another broker open in the partition holds it back, or -1. */
    long blockedSinceMs = -1;

    DelayPartition(TopicPartition tp) {
        this.tp = tp;
    }

    /** Whether the state is loaded and the epoch it was loaded for still leads here: rounds may carry it. */
    boolean serving() {
        return loadedEpoch >= 0 && electedEpoch.get() == loadedEpoch;
    }

    /** Forgets the loaded state (when leadership ends, or before loading it again). */
    void clear() {
        byOffset.clear();
        byDue.clear();
        committedMarkBatches.clear();
        scanOffset = 0;
        lastCheckpointed = -1;
        loadedEpoch = -1;
        blockedSinceMs = -1;
    }

    /** Adds a pending delay unless its offset is already pending. */
    boolean add(PendingDelay pending) {
        if (byOffset.containsKey(pending.offset)) {
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
        }
        return pending;
    }

    /**
     * A round of this run committed the delivery of {@code delivered}, with their marks in the batch
     * at {@code markBatchBaseOffset}: they stop being pending, and the scan will skip that batch.
     */
    void onRoundCommitted(List<PendingDelay> delivered, long markBatchBaseOffset) {
        for (PendingDelay pending : delivered) {
            remove(pending.offset);
        }
        committedMarkBatches.add(markBatchBaseOffset);
    }

    /**
     * Whether the batch at {@code baseOffset} holds marks that a round of this run committed and
     * applied already; forgets it (the scan passes each batch once) and any below it.
     */
    boolean tryConsumeCommittedMarkBatch(long baseOffset) {
        committedMarkBatches.headSet(baseOffset).clear();
        return committedMarkBatches.remove(baseOffset);
    }

    /**
     * A delivery mark for {@code offset} was read from the log (when rebuilding, or from a round
     * whose outcome this run did not learn).
     *
     * @return the pending delay it removed, or null
     */
    PendingDelay onDoneMark(long offset) {
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
