package dev.millrace.protocol.delay;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * Durable delayed delivery: how a producer schedules a record for a topic at a future time. It
 * writes the record (key, value, its own headers) to the internal topic {@value #TOPIC} with these
 * headers; the broker's delay service appends a copy to the target when the time comes, exactly
 * once for read-committed consumers, also across broker restarts. Any Kafka client can do it:
 *
 * <pre>
 * header                              value bytes                              required
 * ----------------------------------  ---------------------------------------  --------
 * millrace.delay.target.topic         UTF-8 topic name (must exist, must not    yes
 *                                     be internal)
 * millrace.delay.due.ms               int64 big-endian, ms since the epoch:     yes
 *                                     not delivered before this time
 * millrace.delay.target.partition     int32 big-endian, 0..partitions-1;        no
 *                                     absent: by key hash (murmur2, as Kafka's
 *                                     default partitioner), or round robin
 *                                     without a key
 * </pre>
 *
 * <p>The delivered record has the original key, value and timestamp, the original headers minus
 * {@value #TARGET_TOPIC} and {@value #TARGET_PARTITION}, and one more header:
 *
 * <pre>
 * millrace.delay.delivered.ms         int64 big-endian, the broker's clock when it appended the copy
 * </pre>
 *
 * so a consumer can tell how late a delivery was ({@code delivered - due}); it is never negative.
 * A Produce to {@value #TOPIC} whose records lack a required header, or carry a malformed one, is
 * refused as a whole with INVALID_RECORD naming the header and the record's index in the batch.
 *
 * <p>Internal to the service: {@value #DONE_OFFSET} (int64) marks, in a record the service writes to
 * {@value #TOPIC} in the same transaction as the delivered copy, the offset of the delayed record
 * that was delivered. Producers must not set it.
 */
public final class DelayedDelivery {

    /** The internal topic producers write delayed records to. */
    public static final String TOPIC = "__millrace_delayed";
    public static final String TARGET_TOPIC = "millrace.delay.target.topic";
    public static final String TARGET_PARTITION = "millrace.delay.target.partition";
    public static final String DUE_MS = "millrace.delay.due.ms";
    public static final String DELIVERED_MS = "millrace.delay.delivered.ms";
    public static final String DONE_OFFSET = "millrace.delay.done.offset";

    /** What a delayed record asks for. {@code targetPartition} is -1 when the broker picks it. */
    public record Request(String targetTopic, int targetPartition, long dueMs) {
    }

    private DelayedDelivery() {
    }

    /**
     * Reads the delivery headers of a record.
     *
     * @throws IllegalArgumentException naming the header when one is missing, repeated or malformed
     */
    public static Request parse(Headers headers) {
        byte[] topic = single(headers, TARGET_TOPIC, true);
        byte[] due = single(headers, DUE_MS, true);
        byte[] partition = single(headers, TARGET_PARTITION, false);
        if (single(headers, DONE_OFFSET, false) != null) {
            throw new IllegalArgumentException("header '" + DONE_OFFSET + "' is reserved for the broker");
        }
        String targetTopic;
        try {
            targetTopic = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(topic)).toString();
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("header '" + TARGET_TOPIC + "' is not valid UTF-8");
        }
        if (targetTopic.isEmpty()) {
            throw new IllegalArgumentException("header '" + TARGET_TOPIC + "' is empty");
        }
        return new Request(targetTopic, partition == null ? -1 : intValue(partition, TARGET_PARTITION),
                longValue(due, DUE_MS));
    }

    /** True if the record is one of the service's delivery marks ({@value #DONE_OFFSET}). */
    public static boolean isDoneMark(Headers headers) {
        return headers.lastHeader(DONE_OFFSET) != null;
    }

    /** The delivered offset a delivery mark names. */
    public static long doneOffset(Headers headers) {
        return longValue(single(headers, DONE_OFFSET, true), DONE_OFFSET);
    }

    public static byte[] encodeLong(long value) {
        return ByteBuffer.allocate(8).putLong(value).array();
    }

    public static byte[] encodeInt(int value) {
        return ByteBuffer.allocate(4).putInt(value).array();
    }

    public static long longValue(byte[] value, String header) {
        if (value == null || value.length != 8) {
            throw new IllegalArgumentException("header '" + header + "' must be an 8-byte big-endian int64, got "
                    + (value == null ? "no value" : value.length + " bytes"));
        }
        return ByteBuffer.wrap(value).getLong();
    }

    private static int intValue(byte[] value, String header) {
        if (value == null || value.length != 4) {
            throw new IllegalArgumentException("header '" + header + "' must be a 4-byte big-endian int32, got "
                    + (value == null ? "no value" : value.length + " bytes"));
        }
        return ByteBuffer.wrap(value).getInt();
    }

    private static byte[] single(Headers headers, String key, boolean required) {
        byte[] found = null;
        int count = 0;
        for (Header header : headers.headers(key)) {
            found = header.value();
            count++;
        }
        if (count > 1) {
            throw new IllegalArgumentException("header '" + key + "' appears " + count + " times");
        }
        if (count == 0 && required) {
            throw new IllegalArgumentException("header '" + key + "' is missing");
        }
        if (count == 1 && found == null) {
            throw new IllegalArgumentException("header '" + key + "' has no value");
        }
        return found;
    }
}
