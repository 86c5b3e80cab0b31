package dev.millrace.broker.group;

import java.util.Objects;

import org.apache.kafka.common.TopicPartition;

/**
 * One record of {@code __consumer_offsets}, decoded: a committed offset or a group's metadata, each
 * with a null value when it is a tombstone (the key's last state is "deleted"). The byte layout is
 * in {@link GroupRecordSerde}.
 */
sealed interface GroupRecord permits GroupRecord.OffsetCommit, GroupRecord.GroupMetadata {

    String groupId();

    /** Whether this record deletes its key. */
    boolean isTombstone();

    /** The committed offset of {@code groupId} for {@code partition}; a null {@code value} deletes it. */
    record OffsetCommit(String groupId, TopicPartition partition, CommittedOffset value) implements GroupRecord {
        public OffsetCommit {
            Objects.requireNonNull(groupId, "groupId");
            Objects.requireNonNull(partition, "partition");
        }

        @Override
        public boolean isTombstone() {
            return value == null;
        }
    }

    /** What survives a restart of a group besides its offsets; a null {@code value} deletes the group. */
    record GroupMetadata(String groupId, GroupSnapshot value) implements GroupRecord {
        public GroupMetadata {
            Objects.requireNonNull(groupId, "groupId");
        }

        @Override
        public boolean isTombstone() {
            return value == null;
        }
    }

    /**
     * A group as written after each completed rebalance. Members are not kept: a group always comes
     * back Empty after a restart and its members rejoin.
     *
     * @param protocolType     the members' protocol type, or null
     * @param generationId     the generation reached
     * @param protocolName     the selected protocol, or null when the group was Empty
     * @param leaderId         the leader's member id, or null when the group was Empty
     * @param stateTimestampMs wall-clock time of the group's last state change
     */
    record GroupSnapshot(String protocolType, int generationId, String protocolName, String leaderId,
                         long stateTimestampMs) {
    }
}
