package dev.millrace.broker.group;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.Arrays;
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
                "leader-1", 42L));
        GroupRecord emptyGroup = new GroupRecord.GroupMetadata("g", new GroupRecord.GroupSnapshot(null, 0, null,
                null, 0L));
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
