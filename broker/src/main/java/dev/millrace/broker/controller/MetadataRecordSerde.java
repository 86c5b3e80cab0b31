package dev.millrace.broker.controller;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.Uuid;

import dev.millrace.broker.controller.MetadataRecord.BrokerRegistrationRecord;
import dev.millrace.broker.controller.MetadataRecord.BrokerStateRecord;
import dev.millrace.broker.controller.MetadataRecord.ClusterIdRecord;
import dev.millrace.broker.controller.MetadataRecord.ConfigRecord;
import dev.millrace.broker.controller.MetadataRecord.GroupConfigRecord;
import dev.millrace.broker.controller.MetadataRecord.PartitionRecord;
import dev.millrace.broker.controller.MetadataRecord.ProducerIdsRecord;
import dev.millrace.broker.controller.MetadataRecord.RemoveTopicRecord;
import dev.millrace.broker.controller.MetadataRecord.AclRecord;
import dev.millrace.broker.controller.MetadataRecord.ClientQuotaRecord;
import dev.millrace.broker.controller.MetadataRecord.RemoveAclRecord;
import dev.millrace.broker.controller.MetadataRecord.RemoveUserScramCredentialRecord;
import dev.millrace.broker.controller.MetadataRecord.UserScramCredentialRecord;
import dev.millrace.broker.controller.MetadataRecord.TopicRecord;

/**
 * The binary form of a batch of {@link MetadataRecord}s. One batch is the data of one quorum log
 * entry, committed and replayed as a unit; snapshots hold one batch too ({@link MetadataSnapshotFile}).
 * All integers are big-endian.
 *
 * <pre>
 * batch:
 *   +----------------+----------------+----------+-----+--------------+
 *   | version (int8) | count (int32)  | record 0 | ... | record n - 1 |
 *   +----------------+----------------+----------+-----+--------------+
 *     version is 0
 *
 * record:
 *   +-------------+----------------+--------------------+----------------------+
 *   | type (int8) | version (int8) | body length (int32)| body (length bytes)  |
 *   +-------------+----------------+--------------------+----------------------+
 *
 * bodies (every record type is at version 0, PARTITION and BROKER_REGISTRATION also at version 1):
 *   1 TOPIC         name: string, topicId: uuid
 *   2 PARTITION     topicId: uuid, partition: int32, replicas: int32[], isr: int32[],
 *                   leader: int32, leaderEpoch: int32, partitionEpoch: int32
 *                   version 1 (written only while a reassignment is in progress) appends:
 *                   addingReplicas: int32[], removingReplicas: int32[]
 *   3 REMOVE_TOPIC  topicId: uuid
 *   4 CONFIG        topic: string, name: string, value: nullable string
 *   5 PRODUCER_IDS  brokerId: int32, nextProducerId: int64
 *   6 CLUSTER_ID    clusterId: string
 *   7 BROKER_REGISTRATION
 *                   brokerId: int32, incarnationId: uuid, brokerEpoch: int64, host: string, port: int32,
 *                   rack: nullable string
 *                   version 1 (written when the broker registers its listeners) appends:
 *                   count: int32, then count times (name: string, host: string, port: int32), sorted by name
 *   8 BROKER_STATE  brokerId: int32, brokerEpoch: int64, state: int8 (0 FENCED, 1 UNFENCED,
 *                   2 CONTROLLED_SHUTDOWN)
 *   9 GROUP_CONFIG  groupId: string, name: string, value: nullable string (null: back to the default)
 *  10 USER_SCRAM_CREDENTIAL
 *                   user: string, mechanism: int8 (1 SCRAM-SHA-256, 2 SCRAM-SHA-512), salt: bytes,
 *                   storedKey: bytes, serverKey: bytes, iterations: int32
 *  11 REMOVE_USER_SCRAM_CREDENTIAL
 *                   user: string, mechanism: int8
 *  12 ACL           resourceType: int8, resourceName: string, patternType: int8, principal: string, host: string,
 *                   operation: int8, permission: int8 (Kafka's codes, see MetadataRecord.AclRecord)
 *  13 REMOVE_ACL    as ACL
 *  14 CLIENT_QUOTA  count: int32, then count times (entityType: string, entityName: nullable string (null: the
 *                   default entity)), sorted by type; key: string; remove: int8 (0 set, 1 remove); value: float64
 *                   (see MetadataRecord.ClientQuotaRecord)
 *
 *   string           int32 length (&gt;= 0), then that many bytes of UTF-8
 *   nullable string  as string; length -1 means null
 *   uuid             int64 most significant bits, int64 least significant bits
 *   int32[]          int32 count, then count int32 values
 *   bytes            int32 length (&gt;= 0), then that many bytes
 *   float64          IEEE 754 double, 8 bytes
 * </pre>
 *
 * <p>Decoding is strict: an unknown type or version, a body that is shorter or longer than its
 * length, a negative count or trailing bytes all throw {@link MetadataCodecException} naming the
 * record and byte position. A newer format therefore needs a new version number, never a silent
 * extension. Stateless and thread-safe.
 */
public final class MetadataRecordSerde {

    static final byte BATCH_VERSION = 0;
    static final byte RECORD_VERSION = 0;
    static final byte PARTITION_REASSIGNING_VERSION = 1;
    static final byte BROKER_LISTENERS_VERSION = 1;

    static final byte TYPE_TOPIC = 1;
    static final byte TYPE_PARTITION = 2;
    static final byte TYPE_REMOVE_TOPIC = 3;
    static final byte TYPE_CONFIG = 4;
    static final byte TYPE_PRODUCER_IDS = 5;
    static final byte TYPE_CLUSTER_ID = 6;
    static final byte TYPE_BROKER_REGISTRATION = 7;
    static final byte TYPE_BROKER_STATE = 8;
    static final byte TYPE_GROUP_CONFIG = 9;
    static final byte TYPE_USER_SCRAM_CREDENTIAL = 10;
    static final byte TYPE_REMOVE_USER_SCRAM_CREDENTIAL = 11;
    static final byte TYPE_ACL = 12;
    static final byte TYPE_REMOVE_ACL = 13;
    static final byte TYPE_CLIENT_QUOTA = 14;

    private static final int RECORD_HEADER_BYTES = 1 + 1 + 4;

    private MetadataRecordSerde() {
    }

    /** Encodes records as one batch. */
    public static byte[] encode(List<? extends MetadataRecord> records) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + records.size() * 48);
        ByteArrayOutputStream bodyBytes = new ByteArrayOutputStream(64);
        try {
            DataOutputStream out = new DataOutputStream(bytes);
            DataOutputStream body = new DataOutputStream(bodyBytes);
            out.writeByte(BATCH_VERSION);
            out.writeInt(records.size());
            for (MetadataRecord record : records) {
                bodyBytes.reset();
                byte type = writeBody(record, body);
                body.flush();
                out.writeByte(type);
                out.writeByte(versionOf(record));
                out.writeInt(bodyBytes.size());
                bodyBytes.writeTo(out);
            }
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot happen: writing to memory", e);
        }
        return bytes.toByteArray();
    }

    /**
     * Decodes one batch; the buffer's position is not changed.
     *
     * @throws MetadataCodecException when the bytes are not exactly one valid batch
     */
    public static List<MetadataRecord> decode(ByteBuffer data) {
        ByteBuffer buf = data.slice();
        if (buf.remaining() < 1 + 4) {
            throw new MetadataCodecException("Metadata batch of " + buf.remaining()
                    + " bytes is shorter than its 5-byte header");
        }
        byte version = buf.get();
        if (version != BATCH_VERSION) {
            throw new MetadataCodecException("Unknown metadata batch version " + version + ", expected "
                    + BATCH_VERSION);
        }
        int count = buf.getInt();
        if (count < 0 || (long) count * RECORD_HEADER_BYTES > buf.remaining()) {
            throw new MetadataCodecException("Metadata batch claims " + count + " records but has only "
                    + buf.remaining() + " bytes left");
        }
        List<MetadataRecord> records = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            records.add(decodeRecord(buf, i));
        }
        if (buf.hasRemaining()) {
            throw new MetadataCodecException("Metadata batch has " + buf.remaining() + " trailing bytes after "
                    + count + " records");
        }
        return records;
    }

    private static byte versionOf(MetadataRecord record) {
        if (record instanceof PartitionRecord r && (!r.addingReplicas().isEmpty() || !r.removingReplicas().isEmpty())) {
            return PARTITION_REASSIGNING_VERSION;
        }
        if (record instanceof BrokerRegistrationRecord r && !r.listeners().isEmpty()) {
            return BROKER_LISTENERS_VERSION;
        }
        return RECORD_VERSION;
    }

    private static byte maxVersion(byte type) {
        return type == TYPE_PARTITION ? PARTITION_REASSIGNING_VERSION
                : type == TYPE_BROKER_REGISTRATION ? BROKER_LISTENERS_VERSION : RECORD_VERSION;
    }

    private static byte writeBody(MetadataRecord record, DataOutputStream body) throws IOException {
        if (record instanceof TopicRecord r) {
            writeString(body, r.name());
            writeUuid(body, r.topicId());
            return TYPE_TOPIC;
        } else if (record instanceof PartitionRecord r) {
            writeUuid(body, r.topicId());
            body.writeInt(r.partition());
            writeIntList(body, r.replicas());
            writeIntList(body, r.isr());
            body.writeInt(r.leader());
            body.writeInt(r.leaderEpoch());
            body.writeInt(r.partitionEpoch());
            if (versionOf(r) == PARTITION_REASSIGNING_VERSION) {
                writeIntList(body, r.addingReplicas());
                writeIntList(body, r.removingReplicas());
            }
            return TYPE_PARTITION;
        } else if (record instanceof RemoveTopicRecord r) {
            writeUuid(body, r.topicId());
            return TYPE_REMOVE_TOPIC;
        } else if (record instanceof ConfigRecord r) {
            writeString(body, r.topic());
            writeString(body, r.name());
            writeString(body, r.value());
            return TYPE_CONFIG;
        } else if (record instanceof ProducerIdsRecord r) {
            body.writeInt(r.brokerId());
            body.writeLong(r.nextProducerId());
            return TYPE_PRODUCER_IDS;
        } else if (record instanceof ClusterIdRecord r) {
            writeString(body, r.clusterId());
            return TYPE_CLUSTER_ID;
        } else if (record instanceof BrokerRegistrationRecord r) {
            body.writeInt(r.brokerId());
            writeUuid(body, r.incarnationId());
            body.writeLong(r.brokerEpoch());
            writeString(body, r.host());
            body.writeInt(r.port());
            writeString(body, r.rack());
            if (!r.listeners().isEmpty()) {
                body.writeInt(r.listeners().size());
                for (Map.Entry<String, ListenerEndpoint> l : r.listeners().entrySet()) {
                    writeString(body, l.getKey());
                    writeString(body, l.getValue().host());
                    body.writeInt(l.getValue().port());
                }
            }
            return TYPE_BROKER_REGISTRATION;
        } else if (record instanceof BrokerStateRecord r) {
            body.writeInt(r.brokerId());
            body.writeLong(r.brokerEpoch());
            body.writeByte(r.state().id());
            return TYPE_BROKER_STATE;
        } else if (record instanceof GroupConfigRecord r) {
            writeString(body, r.groupId());
            writeString(body, r.name());
            writeString(body, r.value());
            return TYPE_GROUP_CONFIG;
        } else if (record instanceof UserScramCredentialRecord r) {
            writeString(body, r.user());
            body.writeByte(r.mechanism());
            writeBytes(body, r.salt());
            writeBytes(body, r.storedKey());
            writeBytes(body, r.serverKey());
            body.writeInt(r.iterations());
            return TYPE_USER_SCRAM_CREDENTIAL;
        } else if (record instanceof RemoveUserScramCredentialRecord r) {
            writeString(body, r.user());
            body.writeByte(r.mechanism());
            return TYPE_REMOVE_USER_SCRAM_CREDENTIAL;
        } else if (record instanceof AclRecord r) {
            writeAcl(body, r);
            return TYPE_ACL;
        } else if (record instanceof RemoveAclRecord r) {
            writeAcl(body, r.acl());
            return TYPE_REMOVE_ACL;
        } else if (record instanceof ClientQuotaRecord r) {
            body.writeInt(r.entity().size());
            for (Map.Entry<String, String> part : r.entity().entrySet()) {
                writeString(body, part.getKey());
                writeString(body, part.getValue());
            }
            writeString(body, r.key());
            body.writeByte(r.remove() ? 1 : 0);
            body.writeDouble(r.value());
            return TYPE_CLIENT_QUOTA;
        }
        throw new IllegalArgumentException("Unknown metadata record " + record);
    }

    private static MetadataRecord decodeRecord(ByteBuffer buf, int index) {
        int start = buf.position();
        if (buf.remaining() < RECORD_HEADER_BYTES) {
            throw new MetadataCodecException("Record " + index + " at byte " + start + ": header needs "
                    + RECORD_HEADER_BYTES + " bytes, " + buf.remaining() + " left");
        }
        byte type = buf.get();
        byte version = buf.get();
        int length = buf.getInt();
        if (length < 0 || length > buf.remaining()) {
            throw new MetadataCodecException("Record " + index + " (type " + type + ") at byte " + start
                    + ": body length " + length + " but " + buf.remaining() + " bytes left");
        }
        if (version < RECORD_VERSION || version > maxVersion(type)) {
            throw new MetadataCodecException("Record " + index + " (type " + type + ") at byte " + start
                    + ": unknown version " + version + ", expected " + RECORD_VERSION
                    + (maxVersion(type) == RECORD_VERSION ? "" : " to " + maxVersion(type)));
        }
        ByteBuffer body = buf.slice();
        body.limit(length);
        buf.position(buf.position() + length);
        MetadataRecord record;
        try {
            record = readBody(type, version, body);
        } catch (BufferUnderflowException e) {
            throw new MetadataCodecException("Record " + index + " (type " + type + ") at byte " + start
                    + ": body of " + length + " bytes is truncated");
        } catch (MetadataCodecException e) {
            throw new MetadataCodecException("Record " + index + " (type " + type + ") at byte " + start + ": "
                    + e.getMessage());
        }
        if (body.hasRemaining()) {
            throw new MetadataCodecException("Record " + index + " (type " + type + ") at byte " + start
                    + ": body length " + length + " but only " + body.position() + " bytes were read");
        }
        return record;
    }

    private static MetadataRecord readBody(byte type, byte version, ByteBuffer body) {
        switch (type) {
            case TYPE_TOPIC:
                return new TopicRecord(readString(body, "name"), readUuid(body));
            case TYPE_PARTITION:
                return readPartition(version, body);
            case TYPE_REMOVE_TOPIC:
                return new RemoveTopicRecord(readUuid(body));
            case TYPE_CONFIG:
                return new ConfigRecord(readString(body, "topic"), readString(body, "name"),
                        readNullableString(body, "value"));
            case TYPE_PRODUCER_IDS:
                return new ProducerIdsRecord(body.getInt(), body.getLong());
            case TYPE_CLUSTER_ID:
                return new ClusterIdRecord(readString(body, "clusterId"));
            case TYPE_BROKER_REGISTRATION:
                return readBrokerRegistration(version, body);
            case TYPE_BROKER_STATE:
                return new BrokerStateRecord(body.getInt(), body.getLong(), BrokerState.forId(body.get()));
            case TYPE_GROUP_CONFIG:
                return new GroupConfigRecord(readString(body, "groupId"), readString(body, "name"),
                        readNullableString(body, "value"));
            case TYPE_USER_SCRAM_CREDENTIAL:
                return new UserScramCredentialRecord(readString(body, "user"), body.get(), readBytes(body, "salt"),
                        readBytes(body, "storedKey"), readBytes(body, "serverKey"), body.getInt());
            case TYPE_REMOVE_USER_SCRAM_CREDENTIAL:
                return new RemoveUserScramCredentialRecord(readString(body, "user"), body.get());
            case TYPE_ACL:
                return readAcl(body);
            case TYPE_REMOVE_ACL:
                return new RemoveAclRecord(readAcl(body));
            case TYPE_CLIENT_QUOTA:
                return readClientQuota(body);
            default:
                throw new MetadataCodecException("unknown record type " + type);
        }
    }

    private static void writeAcl(DataOutputStream body, AclRecord r) throws IOException {
        body.writeByte(r.resourceType());
        writeString(body, r.resourceName());
        body.writeByte(r.patternType());
        writeString(body, r.principal());
        writeString(body, r.host());
        body.writeByte(r.operation());
        body.writeByte(r.permission());
    }

    private static ClientQuotaRecord readClientQuota(ByteBuffer body) {
        int count = body.getInt();
        if (count < 0 || (long) count * 8 > body.remaining()) {
            throw new MetadataCodecException("entity part count " + count + " but " + body.remaining()
                    + " bytes left");
        }
        Map<String, String> entity = new java.util.TreeMap<>();
        for (int i = 0; i < count; i++) {
            String type = readString(body, "entityType");
            if (entity.containsKey(type)) {
                throw new MetadataCodecException("entity type " + type + " appears twice");
            }
            entity.put(type, readNullableString(body, "entityName"));
        }
        String key = readString(body, "key");
        byte remove = body.get();
        if (remove != 0 && remove != 1) {
            throw new MetadataCodecException("remove is " + remove + ", expected 0 or 1");
        }
        return new ClientQuotaRecord(entity, key, body.getDouble(), remove == 1);
    }

    private static AclRecord readAcl(ByteBuffer body) {
        return new AclRecord(body.get(), readString(body, "resourceName"), body.get(), readString(body, "principal"),
                readString(body, "host"), body.get(), body.get());
    }

    private static BrokerRegistrationRecord readBrokerRegistration(byte version, ByteBuffer body) {
        BrokerRegistrationRecord base = new BrokerRegistrationRecord(body.getInt(), readUuid(body), body.getLong(),
                readString(body, "host"), body.getInt(), readNullableString(body, "rack"));
        if (version == RECORD_VERSION) {
            return base;
        }
        int count = body.getInt();
        if (count < 0 || count > body.remaining()) {
            throw new MetadataCodecException("listeners count " + count + " but " + body.remaining() + " bytes left");
        }
        Map<String, ListenerEndpoint> listeners = new java.util.TreeMap<>();
        for (int i = 0; i < count; i++) {
            listeners.put(readString(body, "listener name"), new ListenerEndpoint(readString(body, "listener host"),
                    body.getInt()));
        }
        return new BrokerRegistrationRecord(base.brokerId(), base.incarnationId(), base.brokerEpoch(), base.host(),
                base.port(), base.rack(), listeners);
    }

    private static PartitionRecord readPartition(byte version, ByteBuffer body) {
        PartitionRecord base = new PartitionRecord(readUuid(body), body.getInt(), readIntList(body, "replicas"),
                readIntList(body, "isr"), body.getInt(), body.getInt(), body.getInt());
        if (version == RECORD_VERSION) {
            return base;
        }
        return new PartitionRecord(base.topicId(), base.partition(), base.replicas(), base.isr(), base.leader(),
                base.leaderEpoch(), base.partitionEpoch(), readIntList(body, "addingReplicas"),
                readIntList(body, "removingReplicas"));
    }

    private static void writeString(DataOutputStream out, String value) throws IOException {
        if (value == null) {
            out.writeInt(-1);
            return;
        }
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        out.writeInt(bytes.length);
        out.write(bytes);
    }

    private static void writeBytes(DataOutputStream out, byte[] value) throws IOException {
        out.writeInt(value.length);
        out.write(value);
    }

    private static byte[] readBytes(ByteBuffer in, String field) {
        int length = in.getInt();
        if (length < 0 || length > in.remaining()) {
            throw new MetadataCodecException(field + " length " + length + " but " + in.remaining() + " bytes left");
        }
        byte[] bytes = new byte[length];
        in.get(bytes);
        return bytes;
    }

    private static void writeUuid(DataOutputStream out, Uuid id) throws IOException {
        out.writeLong(id.getMostSignificantBits());
        out.writeLong(id.getLeastSignificantBits());
    }

    private static void writeIntList(DataOutputStream out, List<Integer> values) throws IOException {
        out.writeInt(values.size());
        for (int value : values) {
            out.writeInt(value);
        }
    }

    private static String readString(ByteBuffer in, String field) {
        String value = readNullableString(in, field);
        if (value == null) {
            throw new MetadataCodecException(field + " is null but must not be");
        }
        return value;
    }

    private static String readNullableString(ByteBuffer in, String field) {
        int length = in.getInt();
        if (length == -1) {
            return null;
        }
        if (length < 0 || length > in.remaining()) {
            throw new MetadataCodecException(field + " length " + length + " but " + in.remaining()
                    + " bytes left");
        }
        byte[] bytes = new byte[length];
        in.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static Uuid readUuid(ByteBuffer in) {
        return new Uuid(in.getLong(), in.getLong());
    }

    private static List<Integer> readIntList(ByteBuffer in, String field) {
        int count = in.getInt();
        if (count < 0 || (long) count * 4 > in.remaining()) {
            throw new MetadataCodecException(field + " count " + count + " but " + in.remaining()
                    + " bytes left");
        }
        List<Integer> values = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            values.add(in.getInt());
        }
        return values;
    }
}
