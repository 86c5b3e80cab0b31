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
 * XaRecover (key 30022): the XA branches known to the transaction coordinators of the receiving broker, for a
 * transaction manager's {@code recover} and for administrators (the in-doubt list, with ages).
 *
 * <p><b>Decision: the client asks every broker</b> (as Kafka's admin client does for ListTransactions) and merges
 * the answers; a broker does not ask the others. Each answer says which {@code __transaction_state} partitions it
 * covers (those it leads and has loaded) and how many there are, so the client knows when its merged list is
 * complete: if a partition is covered by no answer (its leadership is moving, or it is still loading), the client
 * asks again. A partition covered by two answers (a move between two requests) lists the same branches twice at
 * most; the client keeps one per Xid.
 *
 * <h2>Request, version 0</h2>
 * <pre>
 * string transactional_id_prefix   nullable: only branches prepared under ids starting with it; null or "" for all
 * </pre>
 *
 * <h2>Response, version 0</h2>
 * <pre>
 * int16  error_code        NONE (partitions still loading are left out of partitions)
 * string error_message     nullable
 * int32  partition_count   partitions of __transaction_state in the cluster
 * array  partitions        int32 each: the partitions this answer covers
 * array  branches          each:
 *   string transactional_id
 *   int32  format_id  \
 *   bytes  gtrid       }   the Xid ({@link XaXid})
 *   bytes  bqual      /
 *   int8   state           0 prepared (in doubt), 1 committing, 2 rolling back (markers being written),
 *                          3 committed, 4 rolled back (completed, remembered for a while),
 *                          5 heuristically committed, 6 heuristically rolled back (until forgotten)
 *   int64  producer_id     the producer id its markers carry
 *   int16  producer_epoch
 *   int64  prepared_ms     when it was prepared (the coordinator's wall clock, ms since the epoch)
 *   int64  age_ms          how long ago that was, by the answering broker's clock
 *   int32  partitions      how many partitions its markers go to
 * </pre>
 * A transaction manager's {@code recover} returns the branches in states 0, 5 and 6.
 */
public final class XaRecover {

    public static final short VERSION = 0;

    /** A branch's state as listed. */
    public enum BranchState {
        PREPARED, COMMITTING, ROLLING_BACK, COMMITTED, ROLLED_BACK, HEURISTIC_COMMITTED, HEURISTIC_ROLLED_BACK;

        static BranchState forId(byte id) {
            if (id < 0 || id >= values().length) {
                throw new ExtensionFormatException("XaRecover branch state " + id + " is not 0.."
                        + (values().length - 1));
            }
            return values()[id];
        }

        /** Whether a transaction manager's {@code recover} returns a branch in this state. */
        public boolean isRecoverable() {
            return this == PREPARED || this == HEURISTIC_COMMITTED || this == HEURISTIC_ROLLED_BACK;
        }
    }

    private static final Schema REQUEST = new Schema(
            new Field("transactional_id_prefix", Type.NULLABLE_STRING));

    private static final Schema BRANCH = new Schema(
            new Field("transactional_id", Type.STRING),
            XaXid.FORMAT_ID, XaXid.GTRID, XaXid.BQUAL,
            new Field("state", Type.INT8),
            new Field("producer_id", Type.INT64),
            new Field("producer_epoch", Type.INT16),
            new Field("prepared_ms", Type.INT64),
            new Field("age_ms", Type.INT64),
            new Field("partitions", Type.INT32));

    private static final Schema RESPONSE = new Schema(
            new Field("error_code", Type.INT16),
            new Field("error_message", Type.NULLABLE_STRING),
            new Field("partition_count", Type.INT32),
            new Field("partitions", new ArrayOf(Type.INT32)),
            new Field("branches", new ArrayOf(BRANCH)));

    private XaRecover() {
    }

    /** An XaRecover request body. */
    public record Request(String transactionalIdPrefix) {

        public Struct toStruct() {
            return new Struct(REQUEST).set("transactional_id_prefix", transactionalIdPrefix);
        }

        public static Request read(ByteBuffer body) {
            try {
                Struct s = REQUEST.read(body);
                return new Request(s.getString("transactional_id_prefix"));
            } catch (SchemaException | java.nio.BufferUnderflowException e) {
                throw new ExtensionFormatException("malformed XaRecover request: " + e.getMessage(), e);
            }
        }
    }

    /** One listed branch. */
    public record Branch(String transactionalId, XaXid xid, BranchState state, long producerId, short producerEpoch,
                         long preparedMs, long ageMs, int partitionCount) {

        Struct toStruct() {
            Struct s = new Struct(BRANCH).set("transactional_id", transactionalId)
                    .set("state", (byte) state.ordinal()).set("producer_id", producerId)
                    .set("producer_epoch", producerEpoch).set("prepared_ms", preparedMs).set("age_ms", ageMs)
                    .set("partitions", partitionCount);
            xid.set(s);
            return s;
        }

        static Branch from(Struct s) {
            return new Branch(s.getString("transactional_id"), XaXid.from(s), BranchState.forId((Byte) s.get("state")),
                    s.getLong("producer_id"), s.getShort("producer_epoch"), s.getLong("prepared_ms"),
                    s.getLong("age_ms"), s.getInt("partitions"));
        }
    }

    /** An XaRecover response body. */
    public record Response(short errorCode, String errorMessage, int partitionCount, List<Integer> partitions,
                           List<Branch> branches) {

        public Response {
            partitions = List.copyOf(partitions);
            branches = List.copyOf(branches);
        }

        public static Response error(short errorCode, String errorMessage) {
            return new Response(errorCode, errorMessage, 0, List.of(), List.of());
        }

        public Struct toStruct() {
            return new Struct(RESPONSE).set("error_code", errorCode).set("error_message", errorMessage)
                    .set("partition_count", partitionCount).set("partitions", partitions.toArray())
                    .set("branches", branches.stream().map(Branch::toStruct).toArray());
        }

        public static Response read(ByteBuffer body) {
            try {
                Struct s = RESPONSE.read(body);
                List<Integer> partitions = new ArrayList<>();
                for (Object o : s.getArray("partitions")) {
                    partitions.add((Integer) o);
                }
                List<Branch> branches = new ArrayList<>();
                for (Object o : s.getArray("branches")) {
                    branches.add(Branch.from((Struct) o));
                }
                return new Response(s.getShort("error_code"), s.getString("error_message"),
                        s.getInt("partition_count"), partitions, branches);
            } catch (SchemaException | java.nio.BufferUnderflowException e) {
                throw new ExtensionFormatException("malformed XaRecover response: " + e.getMessage(), e);
            }
        }
    }
}
