package dev.millrace.broker.group;

import java.util.Arrays;
import java.util.List;
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
     * A group as written when a rebalance ends: Stable with its members and their assignments once the
     * leader's SyncGroup arrived, or Empty (no members) when a join phase ended without members. A
     * coordinator that loads the group serves it in that state, so members of a Stable group go on
     * heartbeating and committing in their generation when the coordinator moves (as with Kafka's
     * coordinator) instead of all rejoining at once.
     *
     * @param protocolType     the members' protocol type, or null
     * @param generationId     the generation reached
     * @param protocolName     the selected protocol, or null when the group was Empty
     * @param leaderId         the leader's member id, or null when the group was Empty
     * @param stateTimestampMs wall-clock time of the group's last state change
     * @param members          the members of the generation (empty when the group was Empty, and in
     *                         records of value version 0)
     */
    record GroupSnapshot(String protocolType, int generationId, String protocolName, String leaderId,
                         long stateTimestampMs, List<MemberSnapshot> members) {
        public GroupSnapshot {
            members = List.copyOf(members);
        }
    }

    /**
     * One member of a Stable group, as much of it as a coordinator needs to serve it after a load.
     *
     * @param memberId           the member id the coordinator issued
     * @param groupInstanceId    the static member's instance id, or null
     * @param clientId           the client id it joined with
     * @param clientHost         the address it joined from
     * @param rebalanceTimeoutMs its rebalance timeout
     * @param sessionTimeoutMs   its session timeout
     * @param subscription       its metadata for the group's selected protocol
     * @param assignment         the assignment the leader gave it in this generation
     */
    record MemberSnapshot(String memberId, String groupInstanceId, String clientId, String clientHost,
                          int rebalanceTimeoutMs, int sessionTimeoutMs, byte[] subscription, byte[] assignment) {
        public MemberSnapshot {
            Objects.requireNonNull(memberId, "memberId");
            Objects.requireNonNull(clientId, "clientId");
            Objects.requireNonNull(clientHost, "clientHost");
            Objects.requireNonNull(subscription, "subscription");
            Objects.requireNonNull(assignment, "assignment");
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof MemberSnapshot m && memberId.equals(m.memberId)
                    && Objects.equals(groupInstanceId, m.groupInstanceId) && clientId.equals(m.clientId)
                    && clientHost.equals(m.clientHost) && rebalanceTimeoutMs == m.rebalanceTimeoutMs
                    && sessionTimeoutMs == m.sessionTimeoutMs && Arrays.equals(subscription, m.subscription)
                    && Arrays.equals(assignment, m.assignment);
        }

        @Override
        public int hashCode() {
            return Objects.hash(memberId, groupInstanceId, clientId, clientHost, rebalanceTimeoutMs, sessionTimeoutMs,
                    Arrays.hashCode(subscription), Arrays.hashCode(assignment));
        }

        @Override
        public String toString() {
            return "MemberSnapshot[" + memberId + (groupInstanceId == null ? "" : ", instance=" + groupInstanceId)
                    + ", clientId=" + clientId + ", subscription=" + subscription.length + " bytes, assignment="
                    + assignment.length + " bytes]";
        }
    }
}
