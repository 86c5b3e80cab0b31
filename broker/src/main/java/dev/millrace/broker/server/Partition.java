package dev.millrace.broker.server;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.FencedLeaderEpochException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.UnknownLeaderEpochException;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.log.AppendOrigin;
import dev.millrace.broker.log.LogAppendInfo;
import dev.millrace.broker.log.PartitionLog;
import dev.millrace.broker.log.TxnVerification;
import dev.millrace.broker.replica.EpochLog;
import dev.millrace.broker.replica.FollowerPartition;
import dev.millrace.broker.replica.IsrUpdater;
import dev.millrace.broker.replica.LeaderState;

/**
 * A partition this broker holds a replica of: its log and its role, leader or follower, as the metadata says.
 *
 * <p>Roles follow the metadata's leader epoch, which is the truth: an image naming this broker leader in a newer
 * epoch makes it leader ({@link LeaderState}: the epoch starts at the log end, followers' progress starts over, the
 * high watermark starts where it was and never decreases); an image naming another leader makes it a follower (it
 * stops serving clients, and {@link PartitionManager} starts fetching). An image older than one already applied
 * (lower leader epoch, or same leader epoch and lower partition epoch) is ignored. A broker that is not the leader
 * answers client requests, and refuses internal appends, with {@link NotLeaderOrFollowerException}.
 *
 * <p>The high watermark: on the leader, {@link LeaderState}'s (with an ISR of the leader alone, the log end); on a
 * follower, the leader's last reported one capped by the local log end.
 *
 * <p>Thread-safe. Role changes take the write lock; appends and follower fetches take the read lock, so appends run
 * concurrently (the log orders them) but never across a role change. Listeners run on the thread that made the
 * change, without the lock.
 */
public final class Partition implements FollowerPartition {

    private static final Logger logger = LoggerFactory.getLogger(Partition.class);

    /** What {@link #applyState} did. */
    enum Transition { IGNORED, UNCHANGED, BECAME_LEADER, BECAME_FOLLOWER }

    /** What a partition needs from its broker. */
    record Context(int nodeId, Time time, IsrUpdater isrUpdater, Consumer<TopicPartition> onChange) {
    }

    private final TopicPartition topicPartition;
    private final Uuid topicId;
    private final PartitionLog log;
    private final Optional<EpochLog> epochs;
    private final Context context;
    private final ReadWriteLock lock = new ReentrantReadWriteLock();
    private volatile PartitionImage state;
    /** Non-null exactly while this broker leads the partition. */
    private volatile LeaderState leader;
    /** True while this broker follows {@code state.leader()} in {@code state.leaderEpoch()}. */
    private volatile boolean follower;
    private volatile long followerHighWatermark;

    Partition(TopicPartition topicPartition, Uuid topicId, PartitionLog log, Optional<EpochLog> epochs,
              Context context) {
        this.topicPartition = topicPartition;
        this.topicId = topicId;
        this.log = log;
        this.epochs = epochs;
        this.context = context;
        this.followerHighWatermark = log.logStartOffset();
    }

    @Override
    public TopicPartition topicPartition() {
        return topicPartition;
    }

    @Override
    public Uuid topicId() {
        return topicId;
    }

    public PartitionLog log() {
        return log;
    }

    @Override
    public Optional<EpochLog> epochs() {
        return epochs;
    }

    /** The leader epoch of the last applied metadata; -1 before the first. */
    public int leaderEpoch() {
        PartitionImage s = state;
        return s == null ? -1 : s.leaderEpoch();
    }

    /** The leader the last applied metadata names; -1 for none. */
    public int leaderId() {
        PartitionImage s = state;
        return s == null ? -1 : s.leader();
    }

    /** The leader's state while this broker leads the partition (for tests and tools). */
    public Optional<LeaderState> leaderState() {
        return Optional.ofNullable(leader);
    }

    public boolean isLeader() {
        return leader != null;
    }

    public boolean isFollower() {
        return follower;
    }

    /** The committed ISR's size (the last applied metadata, or the controller's answer to this leader). */
    public int isrSize() {
        PartitionImage s = state;
        return s == null ? 0 : s.isr().size();
    }

    public List<Integer> isr() {
        PartitionImage s = state;
        return s == null ? List.of() : s.isr();
    }

    @Override
    public long logEndOffset() {
        return log.logEndOffset();
    }

    @Override
    public long logStartOffset() {
        return log.logStartOffset();
    }

    /** Offsets below this are replicated to the whole ISR (see {@link LeaderState}); consumers read only below it. */
    @Override
    public long highWatermark() {
        LeaderState l = leader;
        if (l != null) {
            return l.highWatermark(log.logEndOffset());
        }
        return Math.min(followerHighWatermark, log.logEndOffset());
    }

    /** Whether the high watermark is the log end (the ISR is the leader alone): reads need not cap at it. */
    boolean highWatermarkIsLogEnd() {
        LeaderState l = leader;
        return l != null && l.isrIsLeaderOnly();
    }

    /**
     * Offsets below this hold no open transaction: the first offset of the oldest open transaction
     * when there is one, capped by the high watermark. Read-committed consumers read only below it.
     */
    public long lastStableOffset() {
        long highWatermark = highWatermark();
        long firstUnstable = log.firstUnstableOffset();
        return firstUnstable < 0 ? highWatermark : Math.min(firstUnstable, highWatermark);
    }

    /** The log, to write to as leader; for internal appends (coordinators) that write through the log directly. */
    public PartitionLog leaderLog() {
        checkLeader();
        return log;
    }

    /** Throws {@link NotLeaderOrFollowerException} unless this broker leads the partition. */
    public LeaderState checkLeader() {
        LeaderState l = leader;
        if (l == null) {
            throw notLeader();
        }
        return l;
    }

    /**
     * Checks a request's {@code currentLeaderEpoch} (-1: not sent) against this broker's: FENCED_LEADER_EPOCH when
     * the client's is older, UNKNOWN_LEADER_EPOCH when it is newer (this broker has not seen that metadata yet).
     */
    public void checkLeaderEpoch(int currentLeaderEpoch) {
        if (currentLeaderEpoch < 0) {
            return;
        }
        int epoch = leaderEpoch();
        if (currentLeaderEpoch < epoch) {
            throw new FencedLeaderEpochException("Leader epoch " + currentLeaderEpoch + " of the request for "
                    + topicPartition + " is older than this broker's " + epoch);
        }
        if (currentLeaderEpoch > epoch) {
            throw new UnknownLeaderEpochException("Leader epoch " + currentLeaderEpoch + " of the request for "
                    + topicPartition + " is newer than this broker's " + epoch);
        }
    }

    NotLeaderOrFollowerException notLeader() {
        return new NotLeaderOrFollowerException("Broker " + context.nodeId() + " is not the leader of "
                + topicPartition + " (leader " + leaderId() + ", epoch " + leaderEpoch() + ")");
    }

    /**
     * Appends as leader in the current leader epoch and moves the high watermark (at once when the ISR is the
     * leader alone).
     *
     * @throws NotLeaderOrFollowerException if this broker does not lead the partition
     */
    public LogAppendInfo appendAsLeader(MemoryRecords records, AppendOrigin origin) {
        return appendAsLeader(records, origin, null);
    }

    /**
     * Appends as leader a client's batch whose transaction was verified with {@code guard} (null: not checked), see
     * {@link PartitionLog#appendAsLeader(MemoryRecords, int, AppendOrigin, TxnVerification.Guard)}.
     */
    public LogAppendInfo appendAsLeader(MemoryRecords records, AppendOrigin origin, TxnVerification.Guard guard) {
        LogAppendInfo info;
        boolean hwMoved;
        lock.readLock().lock();
        try {
            LeaderState l = checkLeader();
            info = log.appendAsLeader(records, l.leaderEpoch(), origin, guard);
            // with the leader alone in the ISR the HW is the log end (read lazily): the caller's append wake-up
            // covers it
            hwMoved = !l.isrIsLeaderOnly() && l.maybeIncrementHighWatermark(log.logEndOffset());
        } finally {
            lock.readLock().unlock();
        }
        if (hwMoved) {
            context.onChange().accept(topicPartition);
        }
        return info;
    }

    /**
     * A follower's fetch at {@code fetchOffset}, at the leader: records its progress, proposes adding it back to the
     * ISR when it qualifies, and moves the high watermark.
     *
     * @param leaderLogEndOffset the leader's log end when the fetch was read
     * @throws NotLeaderOrFollowerException if this broker does not lead the partition or {@code replicaId} is not
     *         one of its replicas
     */
    void onFollowerFetch(int replicaId, long fetchOffset, long leaderLogEndOffset) {
        boolean hwMoved;
        Optional<List<Integer>> expansion;
        LeaderState l;
        PartitionImage based;
        lock.readLock().lock();
        try {
            l = checkLeader();
            based = state;
            if (!l.onFollowerFetch(replicaId, fetchOffset, leaderLogEndOffset, context.time().milliseconds())) {
                throw new NotLeaderOrFollowerException("Broker " + replicaId + " is not a replica of "
                        + topicPartition + " (replicas " + state.replicas() + ")");
            }
            hwMoved = l.maybeIncrementHighWatermark(log.logEndOffset());
            expansion = l.proposeExpansion(replicaId, log.logEndOffset(), context.time().milliseconds());
        } finally {
            lock.readLock().unlock();
        }
        if (hwMoved) {
            context.onChange().accept(topicPartition);
        }
        expansion.ifPresent(isr -> alterIsr(l, based, isr));
    }

    /** The leader's periodic check: proposes removing followers that lag more than {@code lagTimeMaxMs}. */
    void maybeShrinkIsr(long lagTimeMaxMs) {
        LeaderState l;
        PartitionImage based;
        Optional<List<Integer>> shrink;
        lock.readLock().lock();
        try {
            l = leader;
            if (l == null) {
                return;
            }
            based = state;
            shrink = l.proposeShrink(context.time().milliseconds(), lagTimeMaxMs);
        } finally {
            lock.readLock().unlock();
        }
        shrink.ifPresent(isr -> alterIsr(l, based, isr));
    }

    /**
     * Sends an ISR change to the controller. {@code based} is the state the change was computed from (read under the
     * lock with the proposal, so its partition epoch matches the ISR the proposal changed).
     */
    private void alterIsr(LeaderState l, PartitionImage based, List<Integer> newIsr) {
        logger.info("{}: proposing ISR {} (was {}) in leader epoch {}", topicPartition, newIsr, based.isr(),
                l.leaderEpoch());
        context.isrUpdater().alterIsr(topicPartition, topicId, l.leaderEpoch(), newIsr, based.partitionEpoch())
                .whenComplete((committed, error) -> {
                    if (error != null) {
                        logger.info("{}: the ISR change to {} was not made (next proposal in {} ms at the earliest, "
                                + "or at the next ISR change): {}", topicPartition, newIsr,
                                LeaderState.REFUSED_CHANGE_BACKOFF_MS, error.toString());
                        l.onIsrChangeRefused(context.time().milliseconds());
                        return;
                    }
                    if (committed.leader() == context.nodeId() && committed.leaderEpoch() == l.leaderEpoch()) {
                        applyState(committed);
                    }
                    l.onIsrChangeDone();
                });
    }

    /**
     * Applies the metadata's state of this partition: takes the leader or follower role, or updates the ISR and
     * replicas within the current role. Ignores a state older than one already applied.
     */
    Transition applyState(PartitionImage image) {
        Transition transition;
        lock.writeLock().lock();
        try {
            PartitionImage current = state;
            if (current != null && (image.leaderEpoch() < current.leaderEpoch()
                    || image.leaderEpoch() == current.leaderEpoch()
                    && image.partitionEpoch() < current.partitionEpoch())) {
                return Transition.IGNORED;
            }
            boolean newEpoch = current == null || image.leaderEpoch() > current.leaderEpoch();
            long nowMs = context.time().milliseconds();
            if (image.leader() == context.nodeId()) {
                if (leader == null || newEpoch) {
                    transitionToLeader(image, nowMs);
                    transition = Transition.BECAME_LEADER;
                } else {
                    state = image;
                    leader.applyCommitted(image.replicas(), image.isr(), log.logEndOffset(), nowMs);
                    transition = Transition.UNCHANGED;
                }
            } else if (leader != null || !follower || newEpoch || image.leader() != current.leader()) {
                transitionToFollower(image);
                transition = Transition.BECAME_FOLLOWER;
            } else {
                state = image;
                transition = Transition.UNCHANGED;
            }
        } finally {
            lock.writeLock().unlock();
        }
        context.onChange().accept(topicPartition);
        return transition;
    }

    private void transitionToLeader(PartitionImage image, long nowMs) {
        long highWatermark = highWatermark();
        epochs.ifPresent(e -> e.assignAtLogEnd(image.leaderEpoch()));
        long epochStart = log.logEndOffset();
        state = image;
        follower = false;
        leader = new LeaderState(context.nodeId(), image.leaderEpoch(), image.replicas(), image.isr(), highWatermark,
                epochStart, nowMs);
        logger.debug("{}: leader in epoch {} from offset {}, ISR {}", topicPartition, image.leaderEpoch(), epochStart,
                image.isr());
    }

    private void transitionToFollower(PartitionImage image) {
        followerHighWatermark = highWatermark();
        state = image;
        leader = null;
        follower = image.leader() >= 0;
        logger.debug("{}: follower of {} in epoch {}", topicPartition, image.leader(), image.leaderEpoch());
    }

    /** Whether this broker follows in exactly {@code leaderEpoch}. Caller holds a lock. */
    private boolean followsIn(int leaderEpoch) {
        return follower && leaderEpoch() == leaderEpoch;
    }

    @Override
    public boolean appendAsFollower(MemoryRecords records, int leaderEpoch) {
        lock.readLock().lock();
        try {
            if (!followsIn(leaderEpoch)) {
                return false;
            }
            log.appendAsFollower(records);
            return true;
        } finally {
            lock.readLock().unlock();
        }
    }

    @Override
    public void onLeaderProgress(long leaderHighWatermark, long leaderLogStartOffset, int leaderEpoch) {
        boolean moved;
        lock.readLock().lock();
        try {
            if (!followsIn(leaderEpoch)) {
                return;
            }
            long next = Math.min(leaderHighWatermark, log.logEndOffset());
            moved = next > followerHighWatermark;
            followerHighWatermark = next;
            if (leaderLogStartOffset > log.logStartOffset() && leaderLogStartOffset <= log.logEndOffset()) {
                log.maybeIncrementLogStartOffset(leaderLogStartOffset);
            }
        } finally {
            lock.readLock().unlock();
        }
        if (moved) {
            context.onChange().accept(topicPartition);
        }
    }

    @Override
    public boolean truncate(int leaderEpoch, Consumer<EpochLog> truncation) {
        if (epochs.isEmpty()) {
            return false;
        }
        lock.writeLock().lock();
        try {
            if (!followsIn(leaderEpoch)) {
                return false;
            }
            truncation.accept(epochs.get());
            followerHighWatermark = Math.min(followerHighWatermark, log.logEndOffset());
            return true;
        } finally {
            lock.writeLock().unlock();
        }
    }

    @Override
    public String toString() {
        return "Partition(" + topicPartition + ", " + (isLeader() ? "leader" : follower ? "follower" : "offline")
                + ", epoch " + leaderEpoch() + ")";
    }
}
