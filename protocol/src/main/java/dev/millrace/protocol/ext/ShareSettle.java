package dev.millrace.protocol.ext;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.protocol.types.ArrayOf;
import org.apache.kafka.common.protocol.types.Field;
import org.apache.kafka.common.protocol.types.Schema;
import org.apache.kafka.common.protocol.types.SchemaException;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.protocol.types.Type;

/**
 * ShareSettle (key 30002): settles records a share-group member holds, outside its share session. Kafka's
 * ShareAcknowledge must carry the member's next share-session epoch, so it cannot be sent while the member's ShareFetch
 * is parked at the broker (one request at a time per connection, and the epochs must arrive in order); a JMS consumer
 * that long-polls for messages on one connection sends its acknowledgements with this on another, at once. It also
 * carries one settlement Kafka has no type for, {@link #RETURN}. (GAP settles an acquired offset that holds no
 * record for the client: a transaction marker, a record compacted away.)
 *
 * <h2>Request, version 0</h2>
 * <pre>
 * string group_id
 * string member_id          the member holding the records (as in its ShareGroupHeartbeat)
 * array  partitions
 *   string topic
 *   int32  partition
 *   array  batches
 *     int64 first_offset
 *     int64 last_offset     inclusive
 *     int8  type            0 GAP, 1 ACCEPT, 2 RELEASE, 3 REJECT, 4 RENEW (Kafka's acknowledge types), 5 RETURN
 * </pre>
 *
 * <p>{@code RETURN} (Millrace) gives back records the member acquired but never delivered to its application (read
 * ahead, then not wanted): they become available at once, their delivery count lowered again as if this acquisition
 * had not happened, so no redelivery backoff, no raised JMSXDeliveryCount and no dead-lettering follows from it. It
 * may also name records read ahead whose locks were lost without the member settling them (with the partition's old
 * leader, to lock expiry, or to the member's removal from the group before it rejoined): a record so released, and
 * not delivered since, gets that acquisition's count undone once (it is available already); one delivered since
 * keeps its count and is reported like an offset not held.
 *
 * <h2>Response, version 0</h2>
 * <pre>
 * int16  error_code         NONE or a request-level error: INVALID_REQUEST (a bad field, named in error_message)
 * string error_message      nullable
 * array  partitions         one per request partition, in request order
 *   string topic
 *   int32  partition
 *   int16  error_code       NONE; INVALID_RECORD_STATE (an offset was not held by the member: its lock expired, or
 *                           the member left; for RETURN: nor released from a lost lock, untouched since);
 *                           UNKNOWN_TOPIC_OR_PARTITION
 * </pre>
 * A partition's batches are applied in order; offsets the member does not hold are skipped (and reported), the rest
 * are applied.
 */
public final class ShareSettle {

    public static final short VERSION = 0;

    public static final byte GAP = 0;
    public static final byte ACCEPT = 1;
    public static final byte RELEASE = 2;
    public static final byte REJECT = 3;
    public static final byte RENEW = 4;
    public static final byte RETURN = 5;

    private static final Schema BATCH = new Schema(
            new Field("first_offset", Type.INT64),
            new Field("last_offset", Type.INT64),
            new Field("type", Type.INT8));

    private static final Schema PARTITION = new Schema(
            new Field("topic", Type.STRING),
            new Field("partition", Type.INT32),
            new Field("batches", new ArrayOf(BATCH)));

    private static final Schema REQUEST = new Schema(
            new Field("group_id", Type.STRING),
            new Field("member_id", Type.STRING),
            new Field("partitions", new ArrayOf(PARTITION)));

    private static final Schema PARTITION_RESULT = new Schema(
            new Field("topic", Type.STRING),
            new Field("partition", Type.INT32),
            new Field("error_code", Type.INT16));

    private static final Schema RESPONSE = new Schema(
            new Field("error_code", Type.INT16),
            new Field("error_message", Type.NULLABLE_STRING),
            new Field("partitions", new ArrayOf(PARTITION_RESULT)));

    private ShareSettle() {
    }

    /** Offsets {@code firstOffset}..{@code lastOffset} (inclusive) settled as {@code type}. */
    public record Batch(long firstOffset, long lastOffset, byte type) {
    }

    /** The batches of one partition. */
    public record PartitionBatches(String topic, int partition, List<Batch> batches) {

        public PartitionBatches {
            batches = List.copyOf(batches);
        }
    }

    /** The outcome for one partition: a Kafka error code. */
    public record PartitionResult(String topic, int partition, short errorCode) {
    }

    /** A ShareSettle request body. */
    public record Request(String groupId, String memberId, List<PartitionBatches> partitions) {

        public Request {
            partitions = List.copyOf(partitions);
        }

        public Struct toStruct() {
            Struct s = new Struct(REQUEST).set("group_id", groupId).set("member_id", memberId);
            Object[] ps = new Object[partitions.size()];
            for (int i = 0; i < ps.length; i++) {
                PartitionBatches p = partitions.get(i);
                Object[] bs = new Object[p.batches().size()];
                for (int j = 0; j < bs.length; j++) {
                    Batch b = p.batches().get(j);
                    bs[j] = new Struct(BATCH).set("first_offset", b.firstOffset()).set("last_offset", b.lastOffset())
                            .set("type", b.type());
                }
                ps[i] = new Struct(PARTITION).set("topic", p.topic()).set("partition", p.partition())
                        .set("batches", bs);
            }
            return s.set("partitions", ps);
        }

        public static Request read(ByteBuffer body) {
            try {
                Struct s = REQUEST.read(body);
                List<PartitionBatches> partitions = new ArrayList<>();
                for (Object o : s.getArray("partitions")) {
                    Struct p = (Struct) o;
                    List<Batch> batches = new ArrayList<>();
                    for (Object b : p.getArray("batches")) {
                        Struct bs = (Struct) b;
                        batches.add(new Batch(bs.getLong("first_offset"), bs.getLong("last_offset"),
                                (Byte) bs.get("type")));
                    }
                    partitions.add(new PartitionBatches(p.getString("topic"), p.getInt("partition"), batches));
                }
                return new Request(s.getString("group_id"), s.getString("member_id"), partitions);
            } catch (SchemaException | java.nio.BufferUnderflowException e) {
                throw new ExtensionFormatException("malformed ShareSettle request: " + e.getMessage(), e);
            }
        }
    }

    /** A ShareSettle response body. */
    public record Response(short errorCode, String errorMessage, List<PartitionResult> partitions) {

        public Response {
            partitions = List.copyOf(partitions);
        }

        public Struct toStruct() {
            Object[] ps = new Object[partitions.size()];
            for (int i = 0; i < ps.length; i++) {
                PartitionResult p = partitions.get(i);
                ps[i] = new Struct(PARTITION_RESULT).set("topic", p.topic()).set("partition", p.partition())
                        .set("error_code", p.errorCode());
            }
            return new Struct(RESPONSE).set("error_code", errorCode).set("error_message", errorMessage)
                    .set("partitions", ps);
        }

        public static Response read(ByteBuffer body) {
            try {
                Struct s = RESPONSE.read(body);
                List<PartitionResult> partitions = new ArrayList<>();
                for (Object o : s.getArray("partitions")) {
                    Struct p = (Struct) o;
                    partitions.add(new PartitionResult(p.getString("topic"), p.getInt("partition"),
                            p.getShort("error_code")));
                }
                return new Response(s.getShort("error_code"), s.getString("error_message"), partitions);
            } catch (SchemaException | java.nio.BufferUnderflowException e) {
                throw new ExtensionFormatException("malformed ShareSettle response: " + e.getMessage(), e);
            }
        }
    }
}
