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
 * TxnShareAcknowledge (key 30001): makes the acceptance of records a share consumer holds part of a producer's open
 * transaction, which Kafka's share acknowledgements cannot be. A JMS transacted session that consumed from a queue
 * and sent messages sends this before committing.
 *
 * <h2>Request, version 0</h2>
 * <pre>
 * string transactional_id   the producer whose transaction takes the acceptance; it must be Ongoing (the producer
 *                           has added a partition or offsets to it)
 * string group_id           the share group
 * string member_client_id   client.id of the share consumer holding the records (the member is found by it; it
 *                           must be unique in the group)
 * string topic
 * int32  partition
 * array  offsets            int64 offsets, each acquired by that member now
 * </pre>
 *
 * <h2>Response, version 0</h2>
 * <pre>
 * int16  error_code     NONE; INVALID_TXN_STATE (no Ongoing transaction for the id); UNKNOWN_MEMBER_ID (no member
 *                       with that client id); INVALID_RECORD_STATE (an offset is not held by it: its lock expired);
 *                       UNKNOWN_TOPIC_OR_PARTITION; INVALID_REQUEST (a bad field, named in error_message)
 * string error_message  nullable
 * </pre>
 *
 * <p>On NONE every offset is held for the transaction: its lock no longer expires, the member leaving does not
 * release it, and the member's own later ACCEPT of it is answered as done without effect. The transaction's commit
 * marker accepts them, its abort marker (an explicit abort, a timeout, a fencing) releases them like a RELEASE. On
 * an error nothing changed (all offsets or none).
 */
public final class TxnShareAcknowledge {

    public static final short VERSION = 0;

    private static final Schema REQUEST = new Schema(
            new Field("transactional_id", Type.STRING),
            new Field("group_id", Type.STRING),
            new Field("member_client_id", Type.STRING),
            new Field("topic", Type.STRING),
            new Field("partition", Type.INT32),
            new Field("offsets", new ArrayOf(Type.INT64)));

    private static final Schema RESPONSE = new Schema(
            new Field("error_code", Type.INT16),
            new Field("error_message", Type.NULLABLE_STRING));

    private TxnShareAcknowledge() {
    }

    /** A TxnShareAcknowledge request body. */
    public record Request(String transactionalId, String groupId, String memberClientId, String topic,
                          int partition, List<Long> offsets) {

        public Request {
            offsets = List.copyOf(offsets);
        }

        public Struct toStruct() {
            return new Struct(REQUEST).set("transactional_id", transactionalId).set("group_id", groupId)
                    .set("member_client_id", memberClientId).set("topic", topic).set("partition", partition)
                    .set("offsets", offsets.toArray());
        }

        public static Request read(ByteBuffer body) {
            try {
                Struct s = REQUEST.read(body);
                List<Long> offsets = new ArrayList<>();
                for (Object o : s.getArray("offsets")) {
                    offsets.add((Long) o);
                }
                return new Request(s.getString("transactional_id"), s.getString("group_id"),
                        s.getString("member_client_id"), s.getString("topic"), s.getInt("partition"), offsets);
            } catch (SchemaException | java.nio.BufferUnderflowException e) {
                throw new ExtensionFormatException("malformed TxnShareAcknowledge request: " + e.getMessage(), e);
            }
        }
    }

    /** A TxnShareAcknowledge response body. */
    public record Response(short errorCode, String errorMessage) {

        public Struct toStruct() {
            return new Struct(RESPONSE).set("error_code", errorCode).set("error_message", errorMessage);
        }

        public static Response read(ByteBuffer body) {
            try {
                Struct s = RESPONSE.read(body);
                return new Response(s.getShort("error_code"), s.getString("error_message"));
            } catch (SchemaException | java.nio.BufferUnderflowException e) {
                throw new ExtensionFormatException("malformed TxnShareAcknowledge response: " + e.getMessage(), e);
            }
        }
    }
}
