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
 * ShareBrowse (key 30000): reads one share-partition's records that are still on the queue (not yet delivered,
 * or delivered and not yet settled) without acquiring any; a JMS {@code QueueBrowser} is built on it.
 *
 * <h2>Request, version 0</h2>
 * <pre>
 * string group_id        the share group (a JMS queue Q uses millrace.queue.Q)
 * string topic
 * int32  partition
 * int64  fetch_offset    where to read from; -1 = the share-partition's start offset. An offset below the start
 *                        offset reads from the start offset.
 * int32  max_bytes       soft limit of the records returned (at least one batch is returned if there is one)
 * </pre>
 *
 * <h2>Response, version 0</h2>
 * <pre>
 * int16  error_code      Kafka error code; NONE, UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER,
 *                        INVALID_REQUEST (bad field, named in error_message), UNKNOWN_SERVER_ERROR
 * string error_message   nullable
 * int64  start_offset    the share-partition's start offset: every record below it is settled
 * int64  end_offset      exclusive end of what may be browsed now (high watermark, or the last stable offset for a
 *                        read_committed group); records at or after it in the batches are not to be shown
 * int64  next_offset     where the next request should read from; equal to end_offset when everything was read
 * array  hidden          [int64 first_offset, int64 last_offset] inclusive, ascending, not overlapping: offsets in
 *                        the returned batches that are settled (accepted, or archived after rejection, the delivery
 *                        limit or as a gap) and so are no longer on the queue
 * bytes  records         nullable; whole record batches (magic 2) as stored, from the one holding the first
 *                        offset read. Control batches and batches of aborted transactions are left out.
 * </pre>
 * A record is on the queue, and shown by a browser, when its offset is in [fetch offset, end_offset), its batch
 * is returned, and no hidden range covers it. Records currently acquired by a consumer are shown: they are not
 * settled until that consumer acknowledges them.
 */
public final class ShareBrowse {

    public static final short VERSION = 0;

    private static final Schema REQUEST = new Schema(
            new Field("group_id", Type.STRING),
            new Field("topic", Type.STRING),
            new Field("partition", Type.INT32),
            new Field("fetch_offset", Type.INT64),
            new Field("max_bytes", Type.INT32));

    private static final Schema RANGE = new Schema(
            new Field("first_offset", Type.INT64),
            new Field("last_offset", Type.INT64));

    private static final Schema RESPONSE = new Schema(
            new Field("error_code", Type.INT16),
            new Field("error_message", Type.NULLABLE_STRING),
            new Field("start_offset", Type.INT64),
            new Field("end_offset", Type.INT64),
            new Field("next_offset", Type.INT64),
            new Field("hidden", new ArrayOf(RANGE)),
            new Field("records", Type.NULLABLE_BYTES));

    private ShareBrowse() {
    }

    /** A ShareBrowse request body. */
    public record Request(String groupId, String topic, int partition, long fetchOffset, int maxBytes) {

        public Struct toStruct() {
            return new Struct(REQUEST).set("group_id", groupId).set("topic", topic).set("partition", partition)
                    .set("fetch_offset", fetchOffset).set("max_bytes", maxBytes);
        }

        public static Request read(ByteBuffer body) {
            try {
                Struct s = REQUEST.read(body);
                return new Request(s.getString("group_id"), s.getString("topic"), s.getInt("partition"),
                        s.getLong("fetch_offset"), s.getInt("max_bytes"));
            } catch (SchemaException | java.nio.BufferUnderflowException e) {
                throw new ExtensionFormatException("malformed ShareBrowse request: " + e.getMessage(), e);
            }
        }
    }

    /** An inclusive range of offsets. */
    public record OffsetRange(long first, long last) {

        public boolean contains(long offset) {
            return offset >= first && offset <= last;
        }
    }

    /** A ShareBrowse response body; {@code records} may be null. */
    public record Response(short errorCode, String errorMessage, long startOffset, long endOffset, long nextOffset,
                           List<OffsetRange> hidden, ByteBuffer records) {

        public static Response error(short errorCode, String message) {
            return new Response(errorCode, message, -1, -1, -1, List.of(), null);
        }

        /** Whether {@code offset} is settled by this response's hidden ranges (ranges are ascending). */
        public boolean isHidden(long offset) {
            for (OffsetRange r : hidden) {
                if (r.contains(offset)) {
                    return true;
                }
                if (r.first() > offset) {
                    return false;
                }
            }
            return false;
        }

        public Struct toStruct() {
            Object[] ranges = new Object[hidden.size()];
            for (int i = 0; i < ranges.length; i++) {
                ranges[i] = new Struct(RANGE).set("first_offset", hidden.get(i).first())
                        .set("last_offset", hidden.get(i).last());
            }
            return new Struct(RESPONSE).set("error_code", errorCode).set("error_message", errorMessage)
                    .set("start_offset", startOffset).set("end_offset", endOffset).set("next_offset", nextOffset)
                    .set("hidden", ranges).set("records", records == null ? null : records.duplicate());
        }

        public static Response read(ByteBuffer body) {
            try {
                Struct s = RESPONSE.read(body);
                List<OffsetRange> hidden = new ArrayList<>();
                for (Object o : s.getArray("hidden")) {
                    Struct r = (Struct) o;
                    hidden.add(new OffsetRange(r.getLong("first_offset"), r.getLong("last_offset")));
                }
                return new Response(s.getShort("error_code"), s.getString("error_message"), s.getLong("start_offset"),
                        s.getLong("end_offset"), s.getLong("next_offset"), hidden, s.getBytes("records"));
            } catch (SchemaException | java.nio.BufferUnderflowException e) {
                throw new ExtensionFormatException("malformed ShareBrowse response: " + e.getMessage(), e);
            }
        }
    }
}
