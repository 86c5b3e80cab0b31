package dev.millrace.broker.group;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class GroupRecordSerdeTest {

    private static Optional<GroupRecord> roundTrip(GroupRecord record) {
        byte[] value = GroupRecordSerde.serializeValue(record);
        return GroupRecordSerde.deserialize(ByteBuffer.wrap(GroupRecordSerde.serializeKey(record)),
                value == null ? null : ByteBuffer.wrap(value));
    }

    @Test
    void shouldRoundTripOffsetsGroupsAndTombstones() {
        GroupRecord offset = new GroupRecord.OffsetCommit("grüppe", new TopicPartition("topic", 4),
                new CommittedOffset(123L, 7, "meta", 1_700_000_000_000L));
        GroupRecord group = new GroupRecord.GroupMetadata("g", new GroupRecord.GroupSnapshot("consumer", 5, "range",
                "leader-1", 42L, List.of(
                        new GroupRecord.MemberSnapshot("leader-1", null, "c1", "/127.0.0.1", 30_000, 10_000,
                                new byte[] {1, 2, 3}, new byte[] {4, 5}),
                        new GroupRecord.MemberSnapshot("m-2", "instance-ü", "c2", "/10.0.0.2", 60_000, 45_000,
                                new byte[0], new byte[0]))));
        GroupRecord emptyGroup = new GroupRecord.GroupMetadata("g", new GroupRecord.GroupSnapshot(null, 0, null,
                null, 0L, List.of()));
        GroupRecord offsetTombstone = new GroupRecord.OffsetCommit("g", new TopicPartition("t", 0), null);
        GroupRecord groupTombstone = new GroupRecord.GroupMetadata("g", null);

        for (GroupRecord record : new GroupRecord[] {offset, group, emptyGroup, offsetTombstone, groupTombstone}) {
            assertThat(roundTrip(record)).contains(record);
        }
    }

    @Test
    void shouldGiveOffsetsAndGroupsOfOneGroupDistinctKeys() {
        byte[] offsetKey = GroupRecordSerde.serializeKey(new GroupRecord.OffsetCommit("g", new TopicPartition("t", 0),
                null));
        byte[] otherPartition = GroupRecordSerde.serializeKey(new GroupRecord.OffsetCommit("g",
                new TopicPartition("t", 1), null));
        byte[] groupKey = GroupRecordSerde.serializeKey(new GroupRecord.GroupMetadata("g", null));

        assertThat(offsetKey).isNotEqualTo(otherPartition).isNotEqualTo(groupKey);
        assertThat(ByteBuffer.wrap(groupKey).getShort()).isEqualTo(GroupRecordSerde.KEY_VERSION);
        assertThat(groupKey[2]).isEqualTo(GroupRecordSerde.TYPE_GROUP_METADATA);
    }

    @Test
    void shouldReportUnknownKeyVersionOrTypeAsUnknown() {
        ByteBuffer futureVersion = ByteBuffer.allocate(6).putShort((short) 9).put((byte) 0).putShort((short) 1)
                .put((byte) 'g').flip();
        ByteBuffer futureType = ByteBuffer.allocate(6).putShort((short) 0).put((byte) 7).putShort((short) 1)
                .put((byte) 'g').flip();

        assertThat(GroupRecordSerde.deserialize(futureVersion, null)).isEmpty();
        assertThat(GroupRecordSerde.deserialize(futureType, null)).isEmpty();
    }

    @Test
    void shouldIgnoreFieldsAppendedByLaterValueVersions() {
        GroupRecord offset = new GroupRecord.OffsetCommit("g", new TopicPartition("t", 0),
                new CommittedOffset(1L, -1, "", 2L));
        byte[] value = GroupRecordSerde.serializeValue(offset);
        byte[] longer = Arrays.copyOf(value, value.length + 8);
        longer[1] = 1;

        Optional<GroupRecord> decoded = GroupRecordSerde.deserialize(ByteBuffer.wrap(
                GroupRecordSerde.serializeKey(offset)), ByteBuffer.wrap(longer));

        assertThat(decoded).contains(offset);
    }

    @Test
    void shouldReadAGroupOfValueVersionZeroAsEmptyAtItsGeneration() {
        GroupRecord.GroupMetadata withMembers = new GroupRecord.GroupMetadata("g", new GroupRecord.GroupSnapshot(
                "consumer", 3, "range", "m", 42L, List.of(new GroupRecord.MemberSnapshot("m", null, "c", "/h", 1, 2,
                        new byte[] {9}, new byte[] {8}))));
        byte[] v1 = GroupRecordSerde.serializeValue(withMembers);
        assertThat(ByteBuffer.wrap(v1).getShort()).isEqualTo(GroupRecordSerde.GROUP_VALUE_VERSION);
        // a version 0 value is the version 1 layout without the members
        int v0Length = 2 + 2 + "consumer".length() + 4 + 2 + "range".length() + 2 + "m".length() + 8;
        byte[] v0 = Arrays.copyOf(v1, v0Length);
        v0[1] = 0;

        Optional<GroupRecord> decoded = GroupRecordSerde.deserialize(ByteBuffer.wrap(
                GroupRecordSerde.serializeKey(withMembers)), ByteBuffer.wrap(v0));

        assertThat(decoded).contains(new GroupRecord.GroupMetadata("g", new GroupRecord.GroupSnapshot("consumer", 3,
                "range", "m", 42L, List.of())));
    }

    @Test
    void shouldRejectAGroupWhoseMembersAreCutShortOrHaveBadLengths() {
        GroupRecord.GroupMetadata group = new GroupRecord.GroupMetadata("g", new GroupRecord.GroupSnapshot(
                "consumer", 3, "range", "m", 42L, List.of(new GroupRecord.MemberSnapshot("m", null, "c", "/h", 1, 2,
                        new byte[] {9}, new byte[] {8, 7}))));
        ByteBuffer key = ByteBuffer.wrap(GroupRecordSerde.serializeKey(group));
        byte[] value = GroupRecordSerde.serializeValue(group);
        byte[] badAssignmentLength = value.clone();
        // the assignment's int32 length sits just before its two bytes at the end
        ByteBuffer.wrap(badAssignmentLength).putInt(value.length - 6, 1000);

        assertThatThrownBy(() -> GroupRecordSerde.deserialize(key, ByteBuffer.wrap(Arrays.copyOf(value,
                value.length - 1)))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("assignment of member m");
        assertThatThrownBy(() -> GroupRecordSerde.deserialize(key, ByteBuffer.wrap(badAssignmentLength)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("length 1000");
    }

    @Test
    void shouldRejectTruncatedRecords() {
        GroupRecord offset = new GroupRecord.OffsetCommit("g", new TopicPartition("t", 0),
                new CommittedOffset(1L, -1, "meta", 2L));
        byte[] key = GroupRecordSerde.serializeKey(offset);
        byte[] value = GroupRecordSerde.serializeValue(offset);

        assertThatThrownBy(() -> GroupRecordSerde.deserialize(ByteBuffer.wrap(key, 0, key.length - 2),
                ByteBuffer.wrap(value))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> GroupRecordSerde.deserialize(ByteBuffer.wrap(key),
                ByteBuffer.wrap(Arrays.copyOf(value, 12)))).isInstanceOf(IllegalArgumentException.class);
    }
}
