package dev.millrace.protocol.ext;

import java.nio.ByteBuffer;

import org.apache.kafka.common.protocol.types.Field;
import org.apache.kafka.common.protocol.types.Schema;
import org.apache.kafka.common.protocol.types.SchemaException;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.protocol.types.Type;

/**
 * XaPrepare (key 30020): the first phase of XA two-phase commit on a broker transaction. Sent to the transaction
 * coordinator of {@code transactional_id} (FindCoordinator, key type TRANSACTION), after the producer's sends were
 * acknowledged and its share acknowledgements ({@link TxnShareAcknowledge}) and offsets (TxnOffsetCommit) were
 * added: everything the id's Ongoing transaction holds becomes the prepared XA branch {@code xid}.
 *
 * <p>On XA_OK the branch is durable (its state is on the in-sync replicas of the id's {@code __transaction_state}
 * partition), no longer times out, survives restarts and failovers, and waits for {@link XaComplete} by Xid from any
 * connection. The producer that prepared it is done: the coordinator refuses its further requests (its producer id
 * now belongs to the branch), and the next InitProducerId of the transactional id starts a new producer id without
 * touching the branch, so the id can serve the session's next branch. (A kafka-clients producer must be closed after
 * XaPrepare; the abort its close sends is refused and harmless.) A branch that only consumed from queues has its
 * transaction begun by its first TxnShareAcknowledge (the id's producer must have been initialised); a branch that
 * did nothing at all has nothing to prepare (the client answers XA_RDONLY itself; XaPrepare says XAER_PROTO).
 *
 * <p>Design, states and record layouts: {@code dev.millrace.broker.txn.XaBranches} in the broker.
 *
 * <h2>Request, version 0</h2>
 * <pre>
 * string transactional_id
 * int64  producer_id       the producer whose transaction is prepared; -1: whichever producer the id has now
 *                          (a client whose producer does not expose its id)
 * int16  producer_epoch    its epoch; -1 with producer_id -1
 * int32  format_id  \
 * bytes  gtrid       }  the branch's Xid ({@link XaXid}: gtrid 1..64 bytes, bqual 0..64 bytes, format_id not -1)
 * bytes  bqual      /
 * </pre>
 *
 * <h2>Response, version 0</h2>
 * <pre>
 * int16  error_code      a Kafka error code (what went wrong, for logs and retries)
 * string error_message   nullable; says what was wrong
 * int32  xa_code         the XA outcome ({@link XaCodes}), see below
 * int64  producer_id     XA_OK: the producer id the branch's markers will carry; -1 otherwise
 * int16  producer_epoch  XA_OK: its epoch; -1 otherwise
 * </pre>
 *
 * <table>
 *   <caption>Answers</caption>
 *   <tr><th>error_code</th><th>xa_code</th><th>when</th></tr>
 *   <tr><td>NONE</td><td>XA_OK</td><td>prepared (also for a retry of the same prepare)</td></tr>
 *   <tr><td>INVALID_TXN_STATE</td><td>XA_RBROLLBACK</td><td>the id's transaction was aborted (its timeout, a
 *       new producer fenced it, an explicit abort)</td></tr>
 *   <tr><td>INVALID_TXN_STATE</td><td>XAER_PROTO</td><td>the id has no Ongoing transaction (none begun, the id
 *       unknown, or it was ended by EndTxn)</td></tr>
 *   <tr><td>PRODUCER_FENCED, INVALID_PRODUCER_ID_MAPPING</td><td>XA_RBROLLBACK</td><td>the producer id and epoch
 *       are not the id's current ones</td></tr>
 *   <tr><td>INVALID_TXN_STATE</td><td>XAER_DUPID</td><td>the Xid already names another branch of this
 *       coordinator</td></tr>
 *   <tr><td>NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE</td><td>XAER_RMFAIL</td>
 *       <td>not now or not here: look the coordinator up again and retry</td></tr>
 *   <tr><td>INVALID_REQUEST</td><td>XAER_INVAL</td><td>a malformed body or Xid (the connection stays open)</td></tr>
 * </table>
 */
public final class XaPrepare {

    public static final short VERSION = 0;

    private static final Schema REQUEST = new Schema(
            new Field("transactional_id", Type.STRING),
            new Field("producer_id", Type.INT64),
            new Field("producer_epoch", Type.INT16),
            XaXid.FORMAT_ID, XaXid.GTRID, XaXid.BQUAL);

    private static final Schema RESPONSE = new Schema(
            new Field("error_code", Type.INT16),
            new Field("error_message", Type.NULLABLE_STRING),
            new Field("xa_code", Type.INT32),
            new Field("producer_id", Type.INT64),
            new Field("producer_epoch", Type.INT16));

    private XaPrepare() {
    }

    /** An XaPrepare request body. */
    public record Request(String transactionalId, long producerId, short producerEpoch, XaXid xid) {

        public Struct toStruct() {
            Struct s = new Struct(REQUEST).set("transactional_id", transactionalId).set("producer_id", producerId)
                    .set("producer_epoch", producerEpoch);
            xid.set(s);
            return s;
        }

        /** @throws ExtensionFormatException naming what is malformed (the body, or the Xid's bounds) */
        public static Request read(ByteBuffer body) {
            Struct s;
            try {
                s = REQUEST.read(body);
            } catch (SchemaException | java.nio.BufferUnderflowException e) {
                throw new ExtensionFormatException("malformed XaPrepare request: " + e.getMessage(), e);
            }
            return new Request(s.getString("transactional_id"), s.getLong("producer_id"),
                    s.getShort("producer_epoch"), XaXid.from(s));
        }
    }

    /** An XaPrepare response body. */
    public record Response(short errorCode, String errorMessage, int xaCode, long producerId, short producerEpoch) {

        public static Response error(short errorCode, int xaCode, String errorMessage) {
            return new Response(errorCode, errorMessage, xaCode, -1L, (short) -1);
        }

        public Struct toStruct() {
            return new Struct(RESPONSE).set("error_code", errorCode).set("error_message", errorMessage)
                    .set("xa_code", xaCode).set("producer_id", producerId).set("producer_epoch", producerEpoch);
        }

        public static Response read(ByteBuffer body) {
            try {
                Struct s = RESPONSE.read(body);
                return new Response(s.getShort("error_code"), s.getString("error_message"), s.getInt("xa_code"),
                        s.getLong("producer_id"), s.getShort("producer_epoch"));
            } catch (SchemaException | java.nio.BufferUnderflowException e) {
                throw new ExtensionFormatException("malformed XaPrepare response: " + e.getMessage(), e);
            }
        }
    }
}
