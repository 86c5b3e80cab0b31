package dev.millrace.protocol.ext;

import java.nio.ByteBuffer;

import org.apache.kafka.common.protocol.types.Field;
import org.apache.kafka.common.protocol.types.Schema;
import org.apache.kafka.common.protocol.types.SchemaException;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.protocol.types.Type;

/**
 * XaComplete (key 30021): the second phase of XA two-phase commit, and {@code forget}. Commits or rolls back the
 * branch {@code xid} that {@link XaPrepare} prepared under {@code transactional_id}, from any connection, whether or
 * not the preparing client is still alive. Sent to the coordinator of {@code transactional_id} (FindCoordinator, key
 * type TRANSACTION). A client that does not know the branch's transactional id (a transaction manager's recovery
 * after a crash) finds it in the {@link XaRecover} list, which every broker answers for the coordinators it runs.
 *
 * <p>A commit or rollback writes the decision (PrepareCommit or PrepareAbort) to the transaction log, waits until it
 * is on the in-sync replicas, writes the markers to the branch's partitions (the commit marker makes its records
 * visible to read-committed consumers, accepts the queue records it acknowledged and commits its offsets; the abort
 * marker discards and releases them), and answers after the markers, as EndTxn does.
 *
 * <p>{@code heuristic} is for an administrator resolving an in-doubt branch by hand: the outcome is the same, but
 * the branch is remembered as heuristically committed or rolled back and stays in the recover list, so that the
 * transaction manager, when it comes back, learns of it ({@code XA_HEURCOM}, {@code XA_HEURRB}) and then forgets it
 * (action FORGET). A non-heuristic outcome is remembered for a while (the coordinator's retention of completed
 * branches, a day by default) so that a repeated commit is answered XA_OK and a commit after a rollback
 * XA_RBROLLBACK; after that the Xid is unknown (XAER_NOTA), which XA allows once a branch is complete.
 *
 * <h2>Request, version 0</h2>
 * <pre>
 * string transactional_id   the id the branch was prepared under
 * int32  format_id  \
 * bytes  gtrid       }      the branch's Xid ({@link XaXid})
 * bytes  bqual      /
 * int8   action             0 commit, 1 rollback, 2 forget (a heuristically completed branch)
 * int8   heuristic          1: an administrator's decision (commit or rollback only); 0 otherwise
 * </pre>
 *
 * <h2>Response, version 0</h2>
 * <pre>
 * int16  error_code      a Kafka error code (what went wrong, for logs and retries)
 * string error_message   nullable; says what was wrong
 * int32  xa_code         the XA outcome ({@link XaCodes})
 * </pre>
 *
 * <table>
 *   <caption>Answers (branch state before the request, action: answer)</caption>
 *   <tr><th>branch</th><th>commit</th><th>rollback</th><th>forget</th></tr>
 *   <tr><td>prepared</td><td>XA_OK after the markers</td><td>XA_OK after the markers</td><td>XAER_PROTO</td></tr>
 *   <tr><td>committing / rolling back (markers being written)</td><td colspan="2">XA_RETRY if the same decision
 *       (CONCURRENT_TRANSACTIONS), else as below</td><td>XAER_PROTO</td></tr>
 *   <tr><td>committed</td><td>XA_OK</td><td>XAER_PROTO</td><td>XAER_NOTA</td></tr>
 *   <tr><td>rolled back</td><td>XA_RBROLLBACK</td><td>XA_OK</td><td>XAER_NOTA</td></tr>
 *   <tr><td>heuristically committed</td><td colspan="2">XA_HEURCOM</td><td>XA_OK, the Xid is
 *       forgotten</td></tr>
 *   <tr><td>heuristically rolled back</td><td colspan="2">XA_HEURRB</td><td>XA_OK, the Xid is forgotten</td></tr>
 *   <tr><td>unknown</td><td colspan="3">XAER_NOTA (TRANSACTIONAL_ID_NOT_FOUND)</td></tr>
 * </table>
 * Besides: NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE with XAER_RMFAIL (look the
 * coordinator up again and retry); INVALID_REQUEST with XAER_INVAL for a malformed body, Xid or action (the
 * connection stays open). error_code is NONE for every answer the branch's state decided.
 */
public final class XaComplete {

    public static final short VERSION = 0;

    /** What to do with the branch. */
    public enum Action {
        COMMIT, ROLLBACK, FORGET;

        byte id() {
            return (byte) ordinal();
        }

        static Action forId(byte id) {
            if (id < 0 || id >= values().length) {
                throw new ExtensionFormatException("XaComplete action " + id + " is not 0 (commit), 1 (rollback) or"
                        + " 2 (forget)");
            }
            return values()[id];
        }
    }

    private static final Schema REQUEST = new Schema(
            new Field("transactional_id", Type.STRING),
            XaXid.FORMAT_ID, XaXid.GTRID, XaXid.BQUAL,
            new Field("action", Type.INT8),
            new Field("heuristic", Type.INT8));

    private static final Schema RESPONSE = new Schema(
            new Field("error_code", Type.INT16),
            new Field("error_message", Type.NULLABLE_STRING),
            new Field("xa_code", Type.INT32));

    private XaComplete() {
    }

    /** An XaComplete request body. */
    public record Request(String transactionalId, XaXid xid, Action action, boolean heuristic) {

        public Struct toStruct() {
            Struct s = new Struct(REQUEST).set("transactional_id", transactionalId).set("action", action.id())
                    .set("heuristic", (byte) (heuristic ? 1 : 0));
            xid.set(s);
            return s;
        }

        /** @throws ExtensionFormatException naming what is malformed */
        public static Request read(ByteBuffer body) {
            Struct s;
            try {
                s = REQUEST.read(body);
            } catch (SchemaException | java.nio.BufferUnderflowException e) {
                throw new ExtensionFormatException("malformed XaComplete request: " + e.getMessage(), e);
            }
            byte heuristic = (Byte) s.get("heuristic");
            if (heuristic != 0 && heuristic != 1) {
                throw new ExtensionFormatException("XaComplete heuristic " + heuristic + " is not 0 or 1");
            }
            Action action = Action.forId((Byte) s.get("action"));
            if (heuristic == 1 && action == Action.FORGET) {
                throw new ExtensionFormatException("XaComplete heuristic applies to commit or rollback, not forget");
            }
            return new Request(s.getString("transactional_id"), XaXid.from(s), action, heuristic == 1);
        }
    }

    /** An XaComplete response body. */
    public record Response(short errorCode, String errorMessage, int xaCode) {

        public Struct toStruct() {
            return new Struct(RESPONSE).set("error_code", errorCode).set("error_message", errorMessage)
                    .set("xa_code", xaCode);
        }

        public static Response read(ByteBuffer body) {
            try {
                Struct s = RESPONSE.read(body);
                return new Response(s.getShort("error_code"), s.getString("error_message"), s.getInt("xa_code"));
            } catch (SchemaException | java.nio.BufferUnderflowException e) {
                throw new ExtensionFormatException("malformed XaComplete response: " + e.getMessage(), e);
            }
        }
    }
}
