package dev.millrace.protocol.ext;

import java.nio.ByteBuffer;

import org.apache.kafka.common.protocol.types.Field;
import org.apache.kafka.common.protocol.types.Schema;
import org.apache.kafka.common.protocol.types.SchemaException;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.protocol.types.Type;

/**
 * ShareMember (key 30006): a share-partition leader asks the coordinator of a share group (the broker leading the
 * group's partition of {@code __consumer_offsets}) for one member as the coordinator knows it: whether it is a current
 * member, and the rack id of its latest ShareGroupHeartbeat, which carries the member's JMS selector
 * ({@link dev.millrace.protocol.selector.MemberSelector}). Broker to broker only; clients have no use for it.
 *
 * <p><b>Why:</b> a member heartbeats to its group's coordinator only, but fetches from the leader of each partition;
 * on a cluster the two are often different brokers, and the leader must apply the member's selector too. Kafka's
 * ShareGroupDescribe would tell the rack id as well, but answers with every member of the group and its assignment;
 * a leader needs one member, at its first fetch and then once per session timeout, so it asks for just that.
 *
 * <h2>Request, version 0</h2>
 * <pre>
 * string group_id
 * string member_id      as in the member's ShareGroupHeartbeat and ShareFetch
 * </pre>
 *
 * <h2>Response, version 0</h2>
 * <pre>
 * int16  error_code     NONE; NOT_COORDINATOR (the receiver does not coordinate the group: look it up again);
 *                       GROUP_ID_NOT_FOUND (no such share group); UNKNOWN_MEMBER_ID (the group has no such current
 *                       member: it never joined, left, timed out, or has not rejoined since the coordinator moved);
 *                       INVALID_REQUEST (a bad field or a malformed body, named in error_message)
 * string error_message  nullable
 * int32  member_epoch   NONE: the member's epoch; -1 otherwise
 * string rack_id        nullable; NONE: the rack id of the member's latest heartbeat (null when it sent none)
 * </pre>
 * The rack id goes as the member sent it, so the leader compiles the selector itself (the coordinator has checked it:
 * a member with an invalid selector is never created).
 */
public final class ShareMember {

    public static final short VERSION = 0;

    private static final Schema REQUEST = new Schema(
            new Field("group_id", Type.STRING),
            new Field("member_id", Type.STRING));

    private static final Schema RESPONSE = new Schema(
            new Field("error_code", Type.INT16),
            new Field("error_message", Type.NULLABLE_STRING),
            new Field("member_epoch", Type.INT32),
            new Field("rack_id", Type.NULLABLE_STRING));

    private ShareMember() {
    }

    /** A ShareMember request body. */
    public record Request(String groupId, String memberId) {

        public Struct toStruct() {
            return new Struct(REQUEST).set("group_id", groupId).set("member_id", memberId);
        }

        public static Request read(ByteBuffer body) {
            try {
                Struct s = REQUEST.read(body);
                return new Request(s.getString("group_id"), s.getString("member_id"));
            } catch (SchemaException | java.nio.BufferUnderflowException e) {
                throw new ExtensionFormatException("malformed ShareMember request: " + e.getMessage(), e);
            }
        }
    }

    /** A ShareMember response body. */
    public record Response(short errorCode, String errorMessage, int memberEpoch, String rackId) {

        public static Response error(short errorCode, String errorMessage) {
            return new Response(errorCode, errorMessage, -1, null);
        }

        public static Response member(int memberEpoch, String rackId) {
            return new Response((short) 0, null, memberEpoch, rackId);
        }

        public Struct toStruct() {
            return new Struct(RESPONSE).set("error_code", errorCode).set("error_message", errorMessage)
                    .set("member_epoch", memberEpoch).set("rack_id", rackId);
        }

        public static Response read(ByteBuffer body) {
            try {
                Struct s = RESPONSE.read(body);
                return new Response(s.getShort("error_code"), s.getString("error_message"), s.getInt("member_epoch"),
                        s.getString("rack_id"));
            } catch (SchemaException | java.nio.BufferUnderflowException e) {
                throw new ExtensionFormatException("malformed ShareMember response: " + e.getMessage(), e);
            }
        }
    }
}
