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
 * <p>Transactional commits (TxnOffsetCommit) are written in the producer's transaction and held
 * here as pending per producer id until the transaction's marker reaches the partition: a commit
 * marker makes them committed offsets, an abort marker drops them. While a group partition has a
 * pending offset, a fetch that requires stable offsets is refused (UNSTABLE_OFFSET_COMMIT, KIP-447).
 *
 * <p>Threading: not thread-safe; confined to its {@link GroupShard}'s thread.
 */
final class OffsetsStore {

    private final Map<String, Map<TopicPartition, CommittedOffset>> byGroup = new HashMap<>();
    private final Map<Long, Map<String, Map<TopicPartition, CommittedOffset>>> pendingByProducer = new HashMap<>();

    /** Holds a transactional offset commit of {@code producerId} until its transaction ends. */
    void replayPending(long producerId, GroupRecord.OffsetCommit record) {
        if (record.value() == null) {
            return;
        }
        pendingByProducer.computeIfAbsent(producerId, id -> new HashMap<>())
                .computeIfAbsent(record.groupId(), g -> new LinkedHashMap<>()).put(record.partition(), record.value());
    }

    /** Applies (commit) or drops (abort) the pending offsets of {@code producerId}. */
    void completeTransaction(long producerId, boolean commit) {
        Map<String, Map<TopicPartition, CommittedOffset>> pending = pendingByProducer.remove(producerId);
        if (pending == null || !commit) {
            return;
        }
        pending.forEach((groupId, offsets) -> offsets.forEach((partition, offset) ->
                replay(new GroupRecord.OffsetCommit(groupId, partition, offset))));
    }

    /** True if an open transaction holds an offset of {@code groupId} for {@code partition}. */
    boolean hasPending(String groupId, TopicPartition partition) {
        for (Map<String, Map<TopicPartition, CommittedOffset>> pending : pendingByProducer.values()) {
            Map<TopicPartition, CommittedOffset> offsets = pending.get(groupId);
            if (offsets != null && offsets.containsKey(partition)) {
                return true;
            }
        }
        return false;
    }

    /** True if an open transaction holds any offset of {@code groupId}. */
    boolean hasPending(String groupId) {
        for (Map<String, Map<TopicPartition, CommittedOffset>> pending : pendingByProducer.values()) {
            if (pending.containsKey(groupId)) {
                return true;
            }
        }
        return false;
    }

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
