package dev.millrace.protocol.ext;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.types.ArrayOf;
import org.apache.kafka.common.protocol.types.Field;
import org.apache.kafka.common.protocol.types.Schema;
import org.apache.kafka.common.protocol.types.SchemaException;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.protocol.types.Type;

/**
 * ShareState (key 30005): a broker reads and writes share-partition state at the share-state coordinator of the
 * share-partition's group, the broker leading that group's partition of {@code __share_group_state}. Broker to
 * broker only; clients have no use for it.
 *
 * <p><b>Decision:</b> Kafka's ReadShareGroupState/WriteShareGroupState carry the state as lists of state batches
 * (offset ranges with a state and delivery count) and leave the full-value-versus-delta choice to the coordinator.
 * Millrace's share-partition leader already encodes its state in the layout of its share-state records (a full value,
 * or a delta of the entries changed since its previous save, which it chooses so a save costs what changed), and the
 * coordinator keeps those encoded values as they are. This extension carries those bytes unchanged, so a save is one
 * copy with no translation in either direction, and the coordinator appends exactly what a local save would.
 *
 * <h2>Request, version 0</h2>
 * <pre>
 * int8   op             0 READ, 1 WRITE, 2 DELETE, 3 LIST, 4 GROUP_CONFIG
 * string group_id
 * uuid   topic_id       READ, WRITE, DELETE; zero otherwise
 * int32  partition      READ, WRITE, DELETE; -1 otherwise
 * int32  leader_epoch   READ, WRITE: the sender's leader epoch of the topic-partition; -1 when not fenced
 * int8   full           WRITE: 1 if value is a full value, 0 for a delta over the previous write
 * int64  version        WRITE: the value's snapshot version
 * bytes  value          nullable; WRITE: the state value; GROUP_CONFIG: the group-settings value (null removes them)
 * </pre>
 *
 * <h2>Response, version 0</h2>
 * <pre>
 * int16  error_code     NONE; NOT_COORDINATOR (the receiver does not lead the group's state partition: look it up
 *                       again), COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE (the write did not reach
 *                       the in-sync replicas in time), FENCED_LEADER_EPOCH (a newer leader of the topic-partition
 *                       read or wrote the state), INVALID_REQUEST (a bad field, named in error_message)
 * string error_message  nullable
 * bytes  full           nullable; READ: the latest full value, null when nothing is saved
 * array  deltas         READ: the deltas saved after it, in version order
 *   bytes  value
 * array  partitions     LIST: the group's share-partitions with saved state
 *   uuid   topic_id
 *   int32  partition
 * </pre>
 * A WRITE is answered once it is on every in-sync replica of the state partition. Writes of one share-partition must
 * arrive in the order their states were taken (a delta applies to the write before it): a sender sends them one at a
 * time.
 */
public final class ShareState {

    public static final short VERSION = 0;

    public static final byte READ = 0;
    public static final byte WRITE = 1;
    public static final byte DELETE = 2;
    public static final byte LIST = 3;
    public static final byte GROUP_CONFIG = 4;

    private static final Schema REQUEST = new Schema(
            new Field("op", Type.INT8),
            new Field("group_id", Type.STRING),
            new Field("topic_id", Type.UUID),
            new Field("partition", Type.INT32),
            new Field("leader_epoch", Type.INT32),
            new Field("full", Type.INT8),
            new Field("version", Type.INT64),
            new Field("value", Type.NULLABLE_BYTES));

    private static final Schema PARTITION = new Schema(
            new Field("topic_id", Type.UUID),
            new Field("partition", Type.INT32));

    private static final Schema RESPONSE = new Schema(
            new Field("error_code", Type.INT16),
            new Field("error_message", Type.NULLABLE_STRING),
            new Field("full", Type.NULLABLE_BYTES),
            new Field("deltas", new ArrayOf(Type.BYTES)),
            new Field("partitions", new ArrayOf(PARTITION)));

    private ShareState() {
    }

    /** A ShareState request body; see the class doc for which fields each op uses. */
    public record Request(byte op, String groupId, Uuid topicId, int partition, int leaderEpoch, boolean full,
                          long version, byte[] value) {

        public static Request read(String groupId, Uuid topicId, int partition, int leaderEpoch) {
            return new Request(READ, groupId, topicId, partition, leaderEpoch, false, 0, null);
        }

        public static Request write(String groupId, Uuid topicId, int partition, int leaderEpoch, boolean full,
                                    long version, byte[] value) {
            return new Request(WRITE, groupId, topicId, partition, leaderEpoch, full, version, value);
        }

        public static Request delete(String groupId, Uuid topicId, int partition) {
            return new Request(DELETE, groupId, topicId, partition, -1, false, 0, null);
        }

        public static Request list(String groupId) {
            return new Request(LIST, groupId, Uuid.ZERO_UUID, -1, -1, false, 0, null);
        }

        public static Request groupConfig(String groupId, byte[] value) {
            return new Request(GROUP_CONFIG, groupId, Uuid.ZERO_UUID, -1, -1, false, 0, value);
        }

        public Struct toStruct() {
            return new Struct(REQUEST).set("op", op).set("group_id", groupId).set("topic_id", topicId)
                    .set("partition", partition).set("leader_epoch", leaderEpoch).set("full", (byte) (full ? 1 : 0))
                    .set("version", version).set("value", value == null ? null : ByteBuffer.wrap(value));
        }

        public static Request read(ByteBuffer body) {
            try {
                Struct s = REQUEST.read(body);
                byte op = (Byte) s.get("op");
                if (op < READ || op > GROUP_CONFIG) {
                    throw new ExtensionFormatException("ShareState request with unknown op " + op);
                }
                return new Request(op, s.getString("group_id"), (Uuid) s.get("topic_id"), s.getInt("partition"),
                        s.getInt("leader_epoch"), (Byte) s.get("full") != 0, s.getLong("version"),
                        bytes(s.getBytes("value")));
            } catch (SchemaException | java.nio.BufferUnderflowException e) {
                throw new ExtensionFormatException("malformed ShareState request: " + e.getMessage(), e);
            }
        }
    }

    /** A ShareState response body. */
    public record Response(short errorCode, String errorMessage, byte[] full, List<byte[]> deltas,
                           List<Map.Entry<Uuid, Integer>> partitions) {

        public Response {
            deltas = List.copyOf(deltas);
            partitions = List.copyOf(partitions);
        }

        public static Response error(short errorCode, String errorMessage) {
            return new Response(errorCode, errorMessage, null, List.of(), List.of());
        }

        public Struct toStruct() {
            Object[] ds = new Object[deltas.size()];
            for (int i = 0; i < ds.length; i++) {
                ds[i] = ByteBuffer.wrap(deltas.get(i));
            }
            Object[] ps = new Object[partitions.size()];
            for (int i = 0; i < ps.length; i++) {
                ps[i] = new Struct(PARTITION).set("topic_id", partitions.get(i).getKey())
                        .set("partition", partitions.get(i).getValue());
            }
            return new Struct(RESPONSE).set("error_code", errorCode).set("error_message", errorMessage)
                    .set("full", full == null ? null : ByteBuffer.wrap(full)).set("deltas", ds).set("partitions", ps);
        }

        public static Response read(ByteBuffer body) {
            try {
                Struct s = RESPONSE.read(body);
                List<byte[]> deltas = new ArrayList<>();
                for (Object o : s.getArray("deltas")) {
                    deltas.add(bytes((ByteBuffer) o));
                }
                List<Map.Entry<Uuid, Integer>> partitions = new ArrayList<>();
                for (Object o : s.getArray("partitions")) {
                    Struct p = (Struct) o;
                    partitions.add(Map.entry((Uuid) p.get("topic_id"), p.getInt("partition")));
                }
                return new Response(s.getShort("error_code"), s.getString("error_message"),
                        bytes(s.getBytes("full")), deltas, partitions);
            } catch (SchemaException | java.nio.BufferUnderflowException e) {
                throw new ExtensionFormatException("malformed ShareState response: " + e.getMessage(), e);
            }
        }
    }

    private static byte[] bytes(ByteBuffer buffer) {
        if (buffer == null) {
            return null;
        }
        byte[] out = new byte[buffer.remaining()];
        buffer.duplicate().get(out);
        return out;
    }
}
