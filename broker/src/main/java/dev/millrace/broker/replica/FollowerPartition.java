package dev.millrace.broker.replica;

import java.util.Optional;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.record.internal.MemoryRecords;

/**
 * A partition as its {@link ReplicaFetcher} sees it while this broker follows the leader. Every write names the
 * leader epoch the fetcher follows; the partition refuses it (returns false) once it has moved to another epoch or
 * role, so a response that was in flight during a leader change never lands in the log.
 *
 * <p>Implementations are thread-safe.
 */
public interface FollowerPartition {

    TopicPartition topicPartition();

    Uuid topicId();

    long logEndOffset();

    long logStartOffset();

    long highWatermark();

    /** Appends records the leader sent; false (nothing written) if this is no longer a follower in {@code leaderEpoch}. */
    boolean appendAsFollower(MemoryRecords records, int leaderEpoch);

    /**
     * The leader's high watermark and log start from a fetch response: the follower's high watermark becomes the
     * smaller of the leader's and its own log end; its log start follows the leader's.
     */
    void onLeaderProgress(long leaderHighWatermark, long leaderLogStartOffset, int leaderEpoch);

    /** Runs {@code truncation} on the log if this is still a follower in {@code leaderEpoch}; false if not. */
    boolean truncate(int leaderEpoch, java.util.function.Consumer<EpochLog> truncation);

    /** The log's epoch cache and truncation ({@link EpochLogs}); empty for a log without them. */
    Optional<EpochLog> epochs();
}
