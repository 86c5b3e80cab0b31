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
 * and sent messages sends this before committing, to the leader of the share-partition.
 *
 * <h2>Request, version 1</h2>
 * <pre>
 * string transactional_id   the producer whose transaction takes the acceptance: its Ongoing transaction, or, if
 *                           its producer is idle (initialised, no transaction open), a new one that begins with
 *                           this share-partition (an XA branch that only consumed, see XaPrepare)
 * string group_id           the share group
 * string member_id          the share consumer holding the records (its ShareGroupHeartbeat member id)
 * string topic
 * int32  partition
 * array  offsets            int64 offsets, each acquired by that member now
 * </pre>
 * Version 0 named the member by its client id and worked only where the share-partition's leader also coordinated
 * the share group and the transaction; brokers no longer serve it (UNSUPPORTED_VERSION).
 *
 * <h2>Response, version 1</h2>
 * <pre>
 * int16  error_code     NONE; INVALID_TXN_STATE (no producer for the id, or its transaction is completing or
 *                       prepared); INVALID_RECORD_STATE (an offset
 *                       is not acquired by that member: its lock expired, or the member is unknown here);
 *                       NOT_LEADER_OR_FOLLOWER (the receiver does not lead the partition: look the leader up again);
 *                       COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS (the transaction's
 *                       coordinator could not be asked now: retry); UNKNOWN_TOPIC_OR_PARTITION; INVALID_REQUEST (a bad
 *                       field, named in error_message)
 * string error_message  nullable
 * </pre>
 *
 * <p>On NONE the share-partition is part of the transaction (its coordinator added it, as AddPartitionsToTxn does,
 * see {@link TxnAddSharePartition}, so the transaction's markers reach the partition's leader) and every offset is
 * held for the transaction: its lock no longer expires, the member leaving does not release it, and the member's own
 * later ACCEPT of it is answered as done without effect. The transaction's commit marker accepts them, its abort
 * marker (an explicit abort, a timeout, a fencing) releases them like a RELEASE. On an error no offset is held (all
 * offsets or none).
 */
public final class TxnShareAcknowledge {

    public static final short VERSION = 1;

    private static final Schema REQUEST = new Schema(
            new Field("transactional_id", Type.STRING),
            new Field("group_id", Type.STRING),
            new Field("member_id", Type.STRING),
            new Field("topic", Type.STRING),
            new Field("partition", Type.INT32),
            new Field("offsets", new ArrayOf(Type.INT64)));

    private static final Schema RESPONSE = new Schema(
            new Field("error_code", Type.INT16),
            new Field("error_message", Type.NULLABLE_STRING));

    private TxnShareAcknowledge() {
    }

    /** A TxnShareAcknowledge request body. */
    public record Request(String transactionalId, String groupId, String memberId, String topic,
                          int partition, List<Long> offsets) {

        public Request {
            offsets = List.copyOf(offsets);
        }

        public Struct toStruct() {
            return new Struct(REQUEST).set("transactional_id", transactionalId).set("group_id", groupId)
                    .set("member_id", memberId).set("topic", topic).set("partition", partition)
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
                        s.getString("member_id"), s.getString("topic"), s.getInt("partition"), offsets);
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
