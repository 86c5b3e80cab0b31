package dev.millrace.broker.group;

import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

import org.apache.kafka.common.TopicPartition;

/**
 * The committed offsets of the groups of one shard, as replayed from {@code __consumer_offsets}:
 * only records that are in the log change it ({@link GroupShard#appendAndReplay}), so it always
 * equals what a reload would rebuild.
 *
 * <p>Threading: not thread-safe; confined to its {@link GroupShard}'s thread.
 */
final class OffsetsStore {

    private final Map<String, Map<TopicPartition, CommittedOffset>> byGroup = new HashMap<>();

    /** Applies one offset record: a value replaces the partition's offset, a tombstone removes it. */
    void replay(GroupRecord.OffsetCommit record) {
        if (record.value() != null) {
            byGroup.computeIfAbsent(record.groupId(), g -> new LinkedHashMap<>()).put(record.partition(),
                    record.value());
            return;
        }
        Map<TopicPartition, CommittedOffset> offsets = byGroup.get(record.groupId());
        if (offsets != null) {
            offsets.remove(record.partition());
            if (offsets.isEmpty()) {
                byGroup.remove(record.groupId());
            }
        }
    }

    /** The committed offset, or null. */
    CommittedOffset get(String groupId, TopicPartition partition) {
        Map<TopicPartition, CommittedOffset> offsets = byGroup.get(groupId);
        return offsets == null ? null : offsets.get(partition);
    }

    /** Every committed offset of the group, unmodifiable; empty if none. */
    Map<TopicPartition, CommittedOffset> all(String groupId) {
        Map<TopicPartition, CommittedOffset> offsets = byGroup.get(groupId);
        return offsets == null ? Map.of() : Collections.unmodifiableMap(offsets);
    }

    boolean hasOffsets(String groupId) {
        return byGroup.containsKey(groupId);
    }

    Iterable<String> groupIds() {
        return byGroup.keySet();
    }
}
