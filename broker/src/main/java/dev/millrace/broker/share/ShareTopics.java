package dev.millrace.broker.share;

import java.util.Optional;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.record.internal.MemoryRecords;

/**
 * What the share package needs of the broker's topics: names and ids from the metadata, the local
 * logs, and appends (for dead letters and the share-state topic). Implemented by the server over
 * the controller's metadata image and the partition manager.
 *
 * <p>Implementations are thread-safe.
 */
public interface ShareTopics {

    Optional<Uuid> idOf(String topic);

    Optional<String> nameOf(Uuid topicId);

    /**
     * The leader epoch of a topic-partition in the latest metadata, -1 if unknown; the share-state coordinator
     * refuses state writes of older epochs ({@link ShareStateCoordinator}).
     */
    default int leaderEpoch(Uuid topicId, int partition) {
        return -1;
    }

    /**
     * The leader of {@code tp} in the latest metadata when it is another broker whose endpoint is known: share
     * requests answered NOT_LEADER_OR_FOLLOWER name it (KIP-951), and kafka-clients' share consumer moves there at
     * once. Empty when this broker leads {@code tp}, no broker does, or the leader's endpoint is unknown.
     */
    default Optional<Leader> currentLeader(TopicPartition tp) {
        return Optional.empty();
    }

    /** A partition's leader and where it listens for the Kafka protocol. */
    record Leader(int id, int epoch, String host, int port) {
    }

    /** The number of partitions of {@code topic}, 0 if it does not exist. */
    int partitionCount(String topic);

    /** The local log of {@code tp}, if this broker hosts it. */
    Optional<ShareLog> log(TopicPartition tp);

    /**
     * Appends {@code records} to {@code tp} as leader and wakes fetches waiting on it.
     *
     * @throws RuntimeException (a Kafka {@code ApiException}) when the append fails
     */
    void append(TopicPartition tp, MemoryRecords records);

    /**
     * Appends {@code records} to {@code tp} wherever it is led: here as leader ({@link #append}), else with a Produce
     * ({@code acks=all}) to its leader. Completes once written (here: appended; at another leader: on its in-sync
     * replicas); fails with the reason (NOT_LEADER_OR_FOLLOWER while no leader is known, a connection failure, the
     * leader's error). This default appends here only.
     */
    default java.util.concurrent.CompletableFuture<Void> appendToLeader(TopicPartition tp, MemoryRecords records) {
        try {
            append(tp, records);
            return java.util.concurrent.CompletableFuture.completedFuture(null);
        } catch (RuntimeException e) {
            return java.util.concurrent.CompletableFuture.failedFuture(e);
        }
    }
}
