package dev.millrace.broker.replica;

import java.util.Optional;

import dev.millrace.broker.log.PartitionLog;

/**
 * Adapts a {@link PartitionLog} to {@link EpochLog}.
 *
 * <p>Not wired yet: the log layer's epoch cache and truncation ({@code cluster-log}) are not on this branch, so this
 * answers empty and replication runs without truncation: a follower fetches from its own log end, a new leader does
 * not record its epoch's start, and OffsetsForLeaderEpoch answers UNKNOWN_SERVER_ERROR. Once the log layer is merged,
 * this returns an adapter over the log's methods and nothing else changes.
 */
public final class EpochLogs {

    private EpochLogs() {
    }

    /** The epoch view of {@code log}; empty while the log layer does not provide one. */
    public static Optional<EpochLog> forLog(PartitionLog log) {
        return Optional.empty();
    }
}
