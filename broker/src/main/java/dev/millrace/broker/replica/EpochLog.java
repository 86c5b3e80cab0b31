package dev.millrace.broker.replica;

import java.util.OptionalInt;

/**
 * The leader-epoch side of a partition log that replication needs: the epoch cache (which epoch started at which
 * offset) and the truncations a follower makes when it starts following a new leader.
 *
 * <p>The log layer provides these ({@code PartitionLog.truncateTo}, {@code truncateFullyAndStartAt},
 * {@code LeaderEpochCache}, {@code endOffsetForEpoch}); {@link EpochLogs} adapts a {@code PartitionLog} to this
 * interface, so replication code does not depend on where the log keeps them.
 *
 * <p>Implementations are thread-safe.
 */
public interface EpochLog {

    /** The log's first offset. */
    long logStartOffset();

    /** The latest epoch in the cache; empty when the log holds no epoch (an empty log, or one written before epochs). */
    OptionalInt latestEpoch();

    /** OffsetsForLeaderEpoch: see {@link EpochEnd}. */
    EpochEnd endOffsetForEpoch(int epoch);

    /** Records that {@code epoch} starts at the log end, as a new leader does (atomic with appends). */
    void assignAtLogEnd(int epoch);

    /** Removes every record at or above {@code offset} (and the epochs that start there). */
    void truncateTo(long offset);

    /** Empties the log and starts it again at {@code offset} (the leader's log start is above this log's end). */
    void truncateFullyAndStartAt(long offset);
}
