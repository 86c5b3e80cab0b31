package dev.millrace.broker.share;

import java.util.List;
import java.util.Map;

import org.apache.kafka.common.Uuid;
import java.util.Optional;

/**
 * Where share-partition state survives a restart. {@link #NONE} keeps nothing (state lives in
 * memory only).
 *
 * <p>Implementations are thread-safe.
 */
public interface ShareStateStore {

    /** The last saved state of {@code key}, if any. */
    Optional<SharePartitionSnapshot> load(SharePartitionKey key);

    /**
     * As {@link #load(SharePartitionKey)} for a share-partition leader in {@code leaderEpoch} of the topic-partition
     * (-1: none): a store that fences leaders refuses the saves of older epochs from now on.
     */
    default Optional<SharePartitionSnapshot> load(SharePartitionKey key, int leaderEpoch) {
        return load(key);
    }

    /** Saves the current state of {@code partition}; may batch or write asynchronously. */
    void save(SharePartition partition);

    /** Every group's saved settings ({@link ShareGroupConfigs}); read once at start. */
    default Map<String, Map<String, String>> groupConfigs() {
        return Map.of();
    }

    /** Saves {@code groupId}'s settings (all of them; empty removes them) before returning. */
    default void saveGroupConfig(String groupId, Map<String, String> configs) {
    }

    /** The share-partitions of {@code groupId} with saved state, as (topic id, partition). */
    default List<Map.Entry<Uuid, Integer>> partitionsOf(String groupId) {
        return List.of();
    }

    /** Forgets the saved state of one share-partition (a tombstone) before returning. */
    default void delete(String groupId, Uuid topicId, int partition) {
    }

    ShareStateStore NONE = new ShareStateStore() {
        @Override
        public Optional<SharePartitionSnapshot> load(SharePartitionKey key) {
            return Optional.empty();
        }

        @Override
        public void save(SharePartition partition) {
        }
    };
}
