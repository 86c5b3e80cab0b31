package dev.millrace.broker.group;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.apache.kafka.common.TopicPartition;

/**
 * The byte layout of Millrace's {@code __consumer_offsets} records. All integers are big-endian;
 * a string is an int16 byte length followed by that many UTF-8 bytes, and a nullable string uses
 * length -1 for null. The key identifies what the record is about, so compaction keeps the latest
 * value per group and per (group, topic, partition); a record without a value is a tombstone.
 *
 * <pre>
 *   key
 *   +-----------+---------+------------+----------------------------------+
 *   | version   | type    | group id   | type 0 only: topic    partition  |
 *   | int16 = 0 | int8    | string     |              string   int32      |
 *   +-----------+---------+------------+----------------------------------+
 *     type 0 = committed offset of (group, topic, partition), type 1 = group metadata
 *
 *   value of type 0 (committed offset)
 *   +-----------+--------+--------------+-----------------+----------------------+
 *   | version   | offset | leader epoch | metadata        | commit timestamp     |
 *   | int16 = 0 | int64  | int32 (-1)   | nullable string | int64 ms since epoch |
 *   +-----------+--------+--------------+-----------------+----------------------+
 *
 *   value of type 1 (group metadata)
 *   +-----------+-----------------+------------+-----------------+-----------------+-----------------+
 *   | version   | protocol type   | generation | protocol        | leader          | state timestamp |
 *   | int16 = 1 | nullable string | int32      | nullable string | nullable string | int64 ms        |
 *   +-----------+-----------------+------------+-----------------+-----------------+-----------------+
 *   | version 1 and later: member count int32, then per member:                                       |
 *   |   member id   instance id      client id  client host  rebalance timeout  session timeout        |
 *   |   string      nullable string  string     string       int32 ms           int32 ms               |
 *   |   subscription (int32 length + bytes)      assignment (int32 length + bytes)                     |
 *   +-------------------------------------------------------------------------------------------------+
 *     version 0 (written before members were kept) ends after the state timestamp: its group loads
 *     Empty at its generation
 *
 *   no value (null): tombstone, the key's offset or group is deleted
 * </pre>
 *
 * <p>Compatibility: later value versions only append fields, so a reader decodes the fields it
 * knows and ignores trailing bytes. A key with an unknown version or type is reported as unknown
 * ({@link #deserialize} returns empty) so that a newer broker's records do not stop an older one
 * from loading; a record that is cut short or has a negative length is corrupt and throws.
 *
 * <p>Stateless and thread-safe.
 */
final class GroupRecordSerde {

    static final short KEY_VERSION = 0;
    static final short OFFSET_VALUE_VERSION = 0;
    static final short GROUP_VALUE_VERSION = 1;
    static final byte TYPE_OFFSET_COMMIT = 0;
    static final byte TYPE_GROUP_METADATA = 1;

    private GroupRecordSerde() {
    }

    static byte[] serializeKey(GroupRecord record) {
        if (record instanceof GroupRecord.OffsetCommit offset) {
            byte[] group = utf8(offset.groupId());
            byte[] topic = utf8(offset.partition().topic());
            ByteBuffer buffer = ByteBuffer.allocate(2 + 1 + 2 + group.length + 2 + topic.length + 4);
            buffer.putShort(KEY_VERSION).put(TYPE_OFFSET_COMMIT);
            putBytes(buffer, group);
            putBytes(buffer, topic);
            buffer.putInt(offset.partition().partition());
            return buffer.array();
        }
        byte[] group = utf8(record.groupId());
        ByteBuffer buffer = ByteBuffer.allocate(2 + 1 + 2 + group.length);
        buffer.putShort(KEY_VERSION).put(TYPE_GROUP_METADATA);
        putBytes(buffer, group);
        return buffer.array();
    }

    /** The value bytes, or null for a tombstone. */
    static byte[] serializeValue(GroupRecord record) {
        if (record.isTombstone()) {
            return null;
        }
        if (record instanceof GroupRecord.OffsetCommit offset) {
            CommittedOffset value = offset.value();
            byte[] metadata = utf8(value.metadata());
            ByteBuffer buffer = ByteBuffer.allocate(2 + 8 + 4 + 2 + metadata.length + 8);
            buffer.putShort(OFFSET_VALUE_VERSION).putLong(value.offset()).putInt(value.leaderEpoch());
            putBytes(buffer, metadata);
            buffer.putLong(value.commitTimestampMs());
            return buffer.array();
        }
        GroupRecord.GroupSnapshot value = ((GroupRecord.GroupMetadata) record).value();
        byte[] type = utf8(value.protocolType());
        byte[] protocol = utf8(value.protocolName());
        byte[] leader = utf8(value.leaderId());
        List<byte[][]> members = new ArrayList<>(value.members().size());
        int size = 2 + 2 + length(type) + 4 + 2 + length(protocol) + 2 + length(leader) + 8 + 4;
        for (GroupRecord.MemberSnapshot member : value.members()) {
            byte[][] strings = {utf8(member.memberId()), utf8(member.groupInstanceId()), utf8(member.clientId()),
                utf8(member.clientHost())};
            members.add(strings);
            for (byte[] string : strings) {
                size += 2 + length(string);
            }
            size += 4 + 4 + 4 + member.subscription().length + 4 + member.assignment().length;
        }
        ByteBuffer buffer = ByteBuffer.allocate(size);
        buffer.putShort(GROUP_VALUE_VERSION);
        putBytes(buffer, type);
        buffer.putInt(value.generationId());
        putBytes(buffer, protocol);
        putBytes(buffer, leader);
        buffer.putLong(value.stateTimestampMs());
        buffer.putInt(value.members().size());
        for (int i = 0; i < members.size(); i++) {
            GroupRecord.MemberSnapshot member = value.members().get(i);
            for (byte[] string : members.get(i)) {
                putBytes(buffer, string);
            }
            buffer.putInt(member.rebalanceTimeoutMs()).putInt(member.sessionTimeoutMs());
            buffer.putInt(member.subscription().length).put(member.subscription());
            buffer.putInt(member.assignment().length).put(member.assignment());
        }
        return buffer.array();
    }

    /**
     * Decodes one record; {@code value} null means a tombstone.
     *
     * @return the record, or empty when the key's version or type is unknown to this broker
     * @throws IllegalArgumentException when the bytes are corrupt (cut short, bad lengths)
     */
    static Optional<GroupRecord> deserialize(ByteBuffer key, ByteBuffer value) {
        if (key == null) {
            throw new IllegalArgumentException("record has no key");
        }
        try {
            ByteBuffer k = key.duplicate();
            short keyVersion = k.getShort();
            byte type = k.get();
            if (keyVersion != KEY_VERSION || (type != TYPE_OFFSET_COMMIT && type != TYPE_GROUP_METADATA)) {
                return Optional.empty();
            }
            String groupId = requireString(k, "group id");
            if (type == TYPE_OFFSET_COMMIT) {
                TopicPartition partition = new TopicPartition(requireString(k, "topic"), k.getInt());
                return Optional.of(new GroupRecord.OffsetCommit(groupId, partition,
                        value == null ? null : readOffset(value.duplicate())));
            }
            return Optional.of(new GroupRecord.GroupMetadata(groupId,
                    value == null ? null : readGroup(value.duplicate())));
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("record is cut short", e);
        }
    }

    private static CommittedOffset readOffset(ByteBuffer v) {
        readValueVersion(v);
        long offset = v.getLong();
        int leaderEpoch = v.getInt();
        String metadata = readString(v);
        long timestampMs = v.getLong();
        return new CommittedOffset(offset, leaderEpoch, metadata == null ? "" : metadata, timestampMs);
    }

    private static GroupRecord.GroupSnapshot readGroup(ByteBuffer v) {
        short version = readValueVersion(v);
        String protocolType = readString(v);
        int generationId = v.getInt();
        String protocolName = readString(v);
        String leaderId = readString(v);
        long stateTimestampMs = v.getLong();
        List<GroupRecord.MemberSnapshot> members = new ArrayList<>();
        if (version >= 1) {
            int count = v.getInt();
            if (count < 0) {
                throw new IllegalArgumentException("negative member count " + count);
            }
            for (int i = 0; i < count; i++) {
                members.add(readMember(v));
            }
        }
        return new GroupRecord.GroupSnapshot(protocolType, generationId, protocolName, leaderId, stateTimestampMs,
                members);
    }

    private static GroupRecord.MemberSnapshot readMember(ByteBuffer v) {
        String memberId = requireString(v, "member id");
        String instanceId = readString(v);
        String clientId = requireString(v, "client id of member " + memberId);
        String clientHost = requireString(v, "client host of member " + memberId);
        int rebalanceTimeoutMs = v.getInt();
        int sessionTimeoutMs = v.getInt();
        byte[] subscription = readBytes(v, "subscription of member " + memberId);
        byte[] assignment = readBytes(v, "assignment of member " + memberId);
        return new GroupRecord.MemberSnapshot(memberId, instanceId, clientId, clientHost, rebalanceTimeoutMs,
                sessionTimeoutMs, subscription, assignment);
    }

    private static byte[] readBytes(ByteBuffer buffer, String what) {
        int length = buffer.getInt();
        if (length < 0 || length > buffer.remaining()) {
            throw new IllegalArgumentException(what + " has length " + length + " with " + buffer.remaining()
                    + " bytes left");
        }
        byte[] bytes = new byte[length];
        buffer.get(bytes);
        return bytes;
    }

    private static short readValueVersion(ByteBuffer v) {
        short version = v.getShort();
        if (version < 0) {
            throw new IllegalArgumentException("negative value version " + version);
        }
        return version;
    }

    private static String requireString(ByteBuffer buffer, String what) {
        String s = readString(buffer);
        if (s == null) {
            throw new IllegalArgumentException(what + " is null");
        }
        return s;
    }

    private static String readString(ByteBuffer buffer) {
        short length = buffer.getShort();
        if (length == -1) {
            return null;
        }
        if (length < 0 || length > buffer.remaining()) {
            throw new IllegalArgumentException("string length " + length + " with " + buffer.remaining()
                    + " bytes left");
        }
        byte[] bytes = new byte[length];
        buffer.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static byte[] utf8(String s) {
        if (s == null) {
            return null;
        }
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > Short.MAX_VALUE) {
            throw new IllegalArgumentException("string of " + bytes.length + " bytes exceeds " + Short.MAX_VALUE);
        }
        return bytes;
    }

    private static int length(byte[] bytes) {
        return bytes == null ? 0 : bytes.length;
    }

    private static void putBytes(ByteBuffer buffer, byte[] bytes) {
        if (bytes == null) {
            buffer.putShort((short) -1);
        } else {
            buffer.putShort((short) bytes.length).put(bytes);
        }
    }
}
