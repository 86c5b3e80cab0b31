package dev.millrace.protocol.ext;

import java.nio.ByteBuffer;

import org.apache.kafka.common.protocol.types.Field;
import org.apache.kafka.common.protocol.types.Schema;
import org.apache.kafka.common.protocol.types.SchemaException;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.protocol.types.Type;

/**
 * TxnAddSharePartition (key 30007): a share-partition's leader, serving a {@link TxnShareAcknowledge}, asks the
 * coordinator of the transactional id (the leader of its {@code __transaction_state} partition) to add the
 * share-partition's topic partition to the id's Ongoing transaction. Broker to broker only.
 *
 * <p><b>Why:</b> the coordinator sends a transaction's markers to the leaders of the partitions in it; the leader
 * holding records for the transaction must be among them, or nothing ever settles those records when the share
 * partition's leader is not also the leader of a partition the producer wrote to. Kafka's AddPartitionsToTxn would
 * add the partition too, but needs the producer's id and epoch, which a client's producer does not expose to the
 * code that consumed; the share-partition leader learns them from this answer instead.
 *
 * <h2>Request, version 0</h2>
 * <pre>
 * string transactional_id
 * string topic
 * int32  partition
 * </pre>
 *
 * <h2>Response, version 0</h2>
 * <pre>
 * int16  error_code      NONE (the partition is in the transaction, written and replicated in the transaction
 *                        log; an id whose producer is idle begins a transaction with it, for an XA branch that
 *                        only consumed); INVALID_TXN_STATE (the id has no producer, or its transaction is
 *                        completing or prepared as an XA branch);
 *                        NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE (ask again,
 *                        after looking the coordinator up again); INVALID_REQUEST (a bad field or a malformed body)
 * string error_message   nullable
 * int64  producer_id     NONE: the producer id of the Ongoing transaction; -1 otherwise
 * int16  producer_epoch  NONE: its epoch; -1 otherwise
 * </pre>
 * The marker that ends the transaction on that partition carries this producer id; the share-partition leader settles
 * the records it held for it then.
 */
public final class TxnAddSharePartition {

    public static final short VERSION = 0;

    private static final Schema REQUEST = new Schema(
            new Field("transactional_id", Type.STRING),
            new Field("topic", Type.STRING),
            new Field("partition", Type.INT32));

    private static final Schema RESPONSE = new Schema(
            new Field("error_code", Type.INT16),
            new Field("error_message", Type.NULLABLE_STRING),
            new Field("producer_id", Type.INT64),
            new Field("producer_epoch", Type.INT16));

    private TxnAddSharePartition() {
    }

    /** A TxnAddSharePartition request body. */
    public record Request(String transactionalId, String topic, int partition) {

        public Struct toStruct() {
            return new Struct(REQUEST).set("transactional_id", transactionalId).set("topic", topic)
                    .set("partition", partition);
        }

        public static Request read(ByteBuffer body) {
            try {
                Struct s = REQUEST.read(body);
                return new Request(s.getString("transactional_id"), s.getString("topic"), s.getInt("partition"));
            } catch (SchemaException | java.nio.BufferUnderflowException e) {
                throw new ExtensionFormatException("malformed TxnAddSharePartition request: " + e.getMessage(), e);
            }
        }
    }

    /** A TxnAddSharePartition response body. */
    public record Response(short errorCode, String errorMessage, long producerId, short producerEpoch) {

        public static Response error(short errorCode, String errorMessage) {
            return new Response(errorCode, errorMessage, -1L, (short) -1);
        }

        public Struct toStruct() {
            return new Struct(RESPONSE).set("error_code", errorCode).set("error_message", errorMessage)
                    .set("producer_id", producerId).set("producer_epoch", producerEpoch);
        }

        public static Response read(ByteBuffer body) {
            try {
                Struct s = RESPONSE.read(body);
                return new Response(s.getShort("error_code"), s.getString("error_message"), s.getLong("producer_id"),
                        s.getShort("producer_epoch"));
            } catch (SchemaException | java.nio.BufferUnderflowException e) {
                throw new ExtensionFormatException("malformed TxnAddSharePartition response: " + e.getMessage(), e);
            }
        }
    }
}
