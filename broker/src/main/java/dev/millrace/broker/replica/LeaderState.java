package dev.millrace.broker.replica;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A leader's view of its partition for one leader epoch: each follower's progress, the ISR and the high watermark.
 *
 * <h2>High watermark</h2>
 * The high watermark is the smallest log end offset over the <em>maximal ISR</em>, the leader's own included, and it
 * never decreases. The maximal ISR is the committed ISR (the controller's, from the last metadata) plus the replica
 * that an in-flight expansion proposes to add:
 * <ul>
 *   <li>An <b>expansion</b> counts the new member at once, but only as a <em>constraint</em>: it can hold the high
 *       watermark back, never move it forward (the member's log end is at or above the high watermark when it is
 *       proposed, so adding it never lowers it). A replica not in the committed ISR therefore never decides that a
 *       record is committed.</li>
 *   <li>A <b>shrink</b> counts only once committed: until the controller's answer arrives, the removed follower still
 *       holds the high watermark back. If the controller refused the shrink, that follower would still be in the ISR,
 *       could be elected, and must hold every record the leader called committed.</li>
 * </ul>
 * So a record is committed (below the high watermark) only when every replica the controller may elect has it, and
 * {@code acks=all} (which waits for the high watermark) completes only then. {@code min.insync.replicas} is checked
 * against the committed ISR.
 *
 * <h2>ISR changes</h2>
 * At most one change is in flight; the next is proposed when it is answered ({@link #onIsrChangeDone}) and a later
 * metadata image or check finds a reason again. After a refused change ({@link #onIsrChangeRefused}: a fenced
 * follower, a partition epoch the controller has moved past) none is proposed for
 * {@value #REFUSED_CHANGE_BACKOFF_MS} ms unless a committed state with another ISR or replica list arrives first (what
 * the refusal was waiting for): expansions are proposed at follower fetches, and proposing again at each one flooded
 * the controller with hundreds of refused AlterPartitions a second while a restarted broker was fenced, which
 * delayed heartbeats until the controller fenced live brokers too. A follower joins when its log end reaches the high watermark and the
 * start of this leader epoch; a follower leaves when it has not caught up with the leader's log end for
 * {@code replica.lag.time.max.ms}. Followers' progress is reset at every new leader epoch ({@code new LeaderState}),
 * and each follower is taken as caught up at that moment so that it is not shrunk out before it could fetch.
 *
 * <p>Thread-safe: every method holds this object's lock, except reading the high watermark while the ISR is the
 * leader alone (then it is the log end: a lock-free maximum, so that produce and fetch threads do not contend); the
 * leader's log end offset is passed in by the caller.
 */
public final class LeaderState {

    /** How long after a refused ISR change no other is proposed (unless the committed state changes first). */
    public static final long REFUSED_CHANGE_BACKOFF_MS = 1_000;

    private final int leaderId;
    private final int leaderEpoch;
    private final long epochStartOffset;
    private final Map<Integer, FollowerProgress> followers = new HashMap<>();
    private List<Integer> replicas;
    private Set<Integer> committedIsr;
    private Integer pendingAddition;
    private boolean changeInFlight;
    /** After a refused change: no proposal before this time (cleared by a committed state that changed). */
    private long proposeNotBeforeMs = Long.MIN_VALUE;
    /** Written under the lock, or lock-free (only upwards) while {@link #leaderOnly}. */
    private final AtomicLong highWatermark;
    /** The maximal ISR is the leader alone; written under the lock. */
    private volatile boolean leaderOnly;

    /**
     * @param highWatermark    the high watermark this replica had before it became leader
     * @param epochStartOffset the log end offset when this leader epoch began
     */
    public LeaderState(int leaderId, int leaderEpoch, List<Integer> replicas, List<Integer> isr, long highWatermark,
                       long epochStartOffset, long nowMs) {
        this.leaderId = leaderId;
        this.leaderEpoch = leaderEpoch;
        this.epochStartOffset = epochStartOffset;
        this.highWatermark = new AtomicLong(highWatermark);
        this.replicas = List.copyOf(replicas);
        this.committedIsr = new LinkedHashSet<>(isr);
        updateLeaderOnly();
        for (int replica : replicas) {
            if (replica != leaderId) {
                followers.put(replica, new FollowerProgress(nowMs));
            }
        }
    }

    public int leaderEpoch() {
        return leaderEpoch;
    }

    public long epochStartOffset() {
        return epochStartOffset;
    }

    /** The high watermark, moved up first if the ISR's log ends allow it. */
    public long highWatermark(long leaderLogEndOffset) {
        if (leaderOnly) {
            return highWatermark.accumulateAndGet(leaderLogEndOffset, Math::max);
        }
        synchronized (this) {
            maybeIncrementHighWatermark(leaderLogEndOffset);
            return highWatermark.get();
        }
    }

    /** Moves the high watermark up to the smallest log end of the maximal ISR; true if it moved. */
    public synchronized boolean maybeIncrementHighWatermark(long leaderLogEndOffset) {
        long candidate = leaderLogEndOffset;
        for (int member : maximalIsr()) {
            if (member == leaderId) {
                continue;
            }
            FollowerProgress progress = followers.get(member);
            candidate = Math.min(candidate, progress == null ? -1 : progress.logEndOffset);
        }
        long current = highWatermark.get();
        while (candidate > current) {
            if (highWatermark.compareAndSet(current, candidate)) {
                return true;
            }
            current = highWatermark.get();
        }
        return false;
    }

    /** Whether only the leader itself counts: then the high watermark is the leader's log end. */
    public boolean isrIsLeaderOnly() {
        return leaderOnly;
    }

    private void updateLeaderOnly() {
        leaderOnly = pendingAddition == null && committedIsr.size() == 1 && committedIsr.contains(leaderId);
    }

    /**
     * Records a fetch of {@code replicaId} at {@code fetchOffset}. Returns false for a replica that is not a follower
     * of this partition (the caller answers NOT_LEADER_OR_FOLLOWER or ignores it).
     */
    public synchronized boolean onFollowerFetch(int replicaId, long fetchOffset, long leaderLogEndOffset, long nowMs) {
        FollowerProgress progress = followers.get(replicaId);
        if (progress == null) {
            return false;
        }
        progress.onFetch(fetchOffset, leaderLogEndOffset, nowMs);
        return true;
    }

    /** The follower's log end offset as the leader knows it; -1 when it has not fetched in this epoch. */
    public synchronized long followerLogEndOffset(int replicaId) {
        FollowerProgress progress = followers.get(replicaId);
        return progress == null ? -1 : progress.logEndOffset;
    }

    /** When the follower last caught up with the leader's log end (for tests and tools); -1 for no such follower. */
    public synchronized long followerLastCaughtUpTimeMs(int replicaId) {
        FollowerProgress progress = followers.get(replicaId);
        return progress == null ? -1 : progress.lastCaughtUpTimeMs;
    }

    /**
     * If {@code replicaId} is an assigned replica outside the ISR whose log end has reached the high watermark and
     * this epoch's start, and no change is in flight: marks the expansion in flight and returns the ISR to propose.
     */
    public synchronized Optional<List<Integer>> proposeExpansion(int replicaId, long leaderLogEndOffset, long nowMs) {
        FollowerProgress progress = followers.get(replicaId);
        if (changeInFlight || nowMs < proposeNotBeforeMs || progress == null || committedIsr.contains(replicaId)) {
            return Optional.empty();
        }
        maybeIncrementHighWatermark(leaderLogEndOffset);
        if (progress.logEndOffset < highWatermark.get() || progress.logEndOffset < epochStartOffset) {
            return Optional.empty();
        }
        List<Integer> proposed = new ArrayList<>(committedIsr);
        proposed.add(replicaId);
        changeInFlight = true;
        pendingAddition = replicaId;
        updateLeaderOnly();
        return Optional.of(List.copyOf(proposed));
    }

    /**
     * If followers of the committed ISR have not caught up with the leader's log end for more than
     * {@code lagTimeMaxMs}, and no change is in flight: marks the shrink in flight and returns the ISR without them.
     */
    public synchronized Optional<List<Integer>> proposeShrink(long nowMs, long lagTimeMaxMs) {
        if (changeInFlight || nowMs < proposeNotBeforeMs) {
            return Optional.empty();
        }
        List<Integer> kept = new ArrayList<>();
        for (int member : committedIsr) {
            FollowerProgress progress = followers.get(member);
            if (member == leaderId || progress != null && nowMs - progress.lastCaughtUpTimeMs <= lagTimeMaxMs) {
                kept.add(member);
            }
        }
        if (kept.size() == committedIsr.size()) {
            return Optional.empty();
        }
        if (!kept.contains(leaderId)) {
            kept.add(0, leaderId);
        }
        changeInFlight = true;
        return Optional.of(List.copyOf(kept));
    }

    /** The in-flight change was answered (committed or refused): the next one may be proposed. */
    public synchronized void onIsrChangeDone() {
        changeInFlight = false;
        pendingAddition = null;
        updateLeaderOnly();
    }

    /**
     * The in-flight change was refused: the next one may be proposed after {@value #REFUSED_CHANGE_BACKOFF_MS} ms, or
     * as soon as a committed state with another ISR or replica list arrives.
     */
    public synchronized void onIsrChangeRefused(long nowMs) {
        onIsrChangeDone();
        proposeNotBeforeMs = nowMs + REFUSED_CHANGE_BACKOFF_MS;
    }

    /** A committed state for this leader epoch (metadata or the controller's answer); true if the HW moved. */
    public synchronized boolean applyCommitted(List<Integer> newReplicas, List<Integer> newIsr,
                                               long leaderLogEndOffset, long nowMs) {
        if (!newReplicas.equals(replicas) || !new LinkedHashSet<>(newIsr).equals(committedIsr)) {
            proposeNotBeforeMs = Long.MIN_VALUE; // what a refused change waited for may have come
        }
        replicas = List.copyOf(newReplicas);
        committedIsr = new LinkedHashSet<>(newIsr);
        if (pendingAddition != null && committedIsr.contains(pendingAddition)) {
            pendingAddition = null;
        }
        updateLeaderOnly();
        followers.keySet().retainAll(replicas);
        for (int replica : replicas) {
            if (replica != leaderId) {
                followers.computeIfAbsent(replica, r -> new FollowerProgress(nowMs));
            }
        }
        return maybeIncrementHighWatermark(leaderLogEndOffset);
    }

    public synchronized int committedIsrSize() {
        return committedIsr.size();
    }

    public synchronized List<Integer> committedIsr() {
        return List.copyOf(committedIsr);
    }

    private Set<Integer> maximalIsr() {
        if (pendingAddition == null) {
            return committedIsr;
        }
        Set<Integer> maximal = new LinkedHashSet<>(committedIsr);
        maximal.add(pendingAddition);
        return maximal;
    }
}
