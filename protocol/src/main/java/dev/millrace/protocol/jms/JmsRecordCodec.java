package dev.millrace.protocol.jms;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.common.header.Header;

/**
 * The JMS-message-to-Kafka-record mapping. One JMS message is one Kafka record:
 *
 * <pre>
 * record part   JMS meaning
 * -----------   -------------------------------------------------------------------------------
 * key           JMSXGroupID as UTF-8, or null when the message has no group
 * value         the body, laid out per body type (see BodyCodec); null = no body
 * timestamp     JMSTimestamp (ms since the epoch); a message with JMSTimestamp 0 is written without
 *               a timestamp, so the Kafka producer stamps the send time
 * headers       JMS header fields and properties, all under the reserved prefix "jms."
 * </pre>
 *
 * <p>Headers (all integers big-endian; "absent" is what a reader assumes when the header is missing, and writers
 * leave out headers whose value is the absent value, except the body type which a JMS writer always sets):
 *
 * <pre>
 * key                       value bytes                                  absent
 * ------------------------  -------------------------------------------  -------------------------
 * jms.body.type             ASCII word: bytes|text|map|stream|object|     bytes
 *                           message
 * jms.message.id            UTF-8                                        null
 * jms.correlation.id        UTF-8 (set as String)                        null
 * jms.correlation.id.bytes  raw bytes (set as byte[]); never with the    null
 *                           String form
 * jms.type                  UTF-8                                        null
 * jms.delivery.mode         u8: 0x01 NON_PERSISTENT, 0x02 PERSISTENT     PERSISTENT
 * jms.priority              u8: 0..9                                     4
 * jms.expiration            int64 ms since the epoch, 0 = never          0
 * jms.delivery.time         int64 ms since the epoch                     = JMSTimestamp
 * jms.destination           u8 type + ASCII name (JmsDestination)        the topic read from
 * jms.reply.to              u8 type + ASCII name (JmsDestination)        null
 * jms.prop.NAME             u8 type tag + payload (TypedValueCodec,      property not set
 *                           header form)
 * jms.connection.id         16 opaque bytes naming the sending JMS       not from a JMS connection
 *                           connection; set by the provider on topic
 *                           sends for noLocal, outside this codec
 * </pre>
 *
 * <p><b>Why one header per property</b> rather than one header holding all properties: Kafka headers are already a
 * list of named byte strings, so a property maps onto one without a second framing layer; Kafka consumers, Kafka
 * Connect transforms and the broker's selector evaluation can read one property without decoding the others; and a
 * Kafka producer can add a property with one header. The cost, the repeated {@code jms.prop.} prefix, is a few bytes
 * per property before batch compression. The prefix keeps properties apart from the header fields, whose names
 * ({@code JMSType}...) are not valid as property names anyway, and from foreign headers. Property names must be JMS
 * identifiers ({@link JmsIdentifiers}).
 *
 * <p><b>What a Kafka producer sets.</b> Nothing, for a consumer to receive a {@code BytesMessage} whose body is the
 * record value (its key, if any, appears as JMSXGroupID, decoded as UTF-8 with invalid sequences replaced by U+FFFD,
 * because Kafka keys are not ours to reject). For a {@code TextMessage}: header {@code jms.body.type = "text"} and a
 * UTF-8 value. For properties: {@code jms.prop.NAME} headers with a type tag, e.g. an int 7 is
 * {@code 05 00 00 00 07}.
 *
 * <p><b>Worked example.</b> A TextMessage with text {@code hi}, JMSPriority 7, JMSXGroupID {@code g1}, an int
 * property {@code count = 7} and JMSTimestamp 1000 (every other field at its default) is this record (bytes in hex):
 *
 * <pre>
 * key        67 31                          "g1"
 * value      68 69                          "hi"
 * timestamp  1000
 * headers    jms.body.type   74 65 78 74    "text"
 *            jms.priority    07
 *            jms.prop.count  05 00 00 00 07 tag 0x05 (int), then 7 as int32
 * </pre>
 *
 * <p><b>Not in the record:</b> JMSRedelivered and JMSXDeliveryCount, which the consumer side sets from the delivery
 * count of the share group or subscription, and {@code jms.prop.JMSXGroupID}, refused because the group travels in
 * the key.
 *
 * <p><b>Errors.</b> Decoding is strict for everything under {@code jms.}: a wrong length, an unknown tag, invalid
 * UTF-8, an out-of-range priority, a repeated header or a value on a body-less {@code message} record throws
 * {@link JmsRecordFormatException} naming the header (or the record value) and the byte offset. Unknown {@code jms.}
 * headers and headers outside the prefix are ignored. Bodies are decoded separately ({@link BodyCodec}), by the
 * reader that needs them.
 *
 * <p>Stateless and thread-safe.
 */
public final class JmsRecordCodec {

    private static final String GROUP_ID = "JMSXGroupID";

    private JmsRecordCodec() {
    }

    /**
     * @throws IllegalArgumentException if the data cannot be written: a priority outside 0..9, a delivery mode other
     *                                  than 1 or 2, an invalid property name or value, or JMSXGroupID as a property
     */
    public static JmsRecord encode(JmsMessageData data) {
        List<Header> headers = new ArrayList<>(8 + data.properties().size());
        headers.add(JmsRecord.header(JmsHeaders.BODY_TYPE, data.bodyType().markerBytes()));
        addUtf8(headers, JmsHeaders.MESSAGE_ID, data.messageId());
        addUtf8(headers, JmsHeaders.CORRELATION_ID, data.correlationId());
        if (data.correlationIdBytes() != null) {
            headers.add(JmsRecord.header(JmsHeaders.CORRELATION_ID_BYTES, data.correlationIdBytes()));
        }
        addUtf8(headers, JmsHeaders.TYPE, data.type());
        if (data.deliveryMode() != JmsMessageData.NON_PERSISTENT && data.deliveryMode() != JmsMessageData.PERSISTENT) {
            throw new IllegalArgumentException("delivery mode must be 1 (NON_PERSISTENT) or 2 (PERSISTENT), not "
                    + data.deliveryMode());
        }
        if (data.deliveryMode() != JmsMessageData.PERSISTENT) {
            headers.add(JmsRecord.header(JmsHeaders.DELIVERY_MODE, new byte[] {(byte) data.deliveryMode()}));
        }
        if (data.priority() < 0 || data.priority() > 9) {
            throw new IllegalArgumentException("priority must be 0..9, not " + data.priority());
        }
        if (data.priority() != JmsMessageData.DEFAULT_PRIORITY) {
            headers.add(JmsRecord.header(JmsHeaders.PRIORITY, new byte[] {(byte) data.priority()}));
        }
        if (data.expiration() != 0) {
            headers.add(JmsRecord.header(JmsHeaders.EXPIRATION, new ByteWriter(8).writeLong(data.expiration())
                    .toByteArray()));
        }
        if (data.deliveryTime() != data.timestamp()) {
            headers.add(JmsRecord.header(JmsHeaders.DELIVERY_TIME, new ByteWriter(8).writeLong(data.deliveryTime())
                    .toByteArray()));
        }
        if (data.destination() != null) {
            headers.add(JmsRecord.header(JmsHeaders.DESTINATION, data.destination().encode()));
        }
        if (data.replyTo() != null) {
            headers.add(JmsRecord.header(JmsHeaders.REPLY_TO, data.replyTo().encode()));
        }
        for (Map.Entry<String, Object> property : data.properties().entrySet()) {
            String name = property.getKey();
            String problem = JmsIdentifiers.invalidPropertyNameReason(name);
            if (problem != null) {
                throw new IllegalArgumentException(problem);
            }
            if (GROUP_ID.equals(name)) {
                throw new IllegalArgumentException("JMSXGroupID is the record key; set it as the group id");
            }
            headers.add(JmsRecord.header(JmsHeaders.propertyKey(name),
                    TypedValueCodec.encodeProperty(property.getValue())));
        }
        byte[] key = data.groupId() == null ? null : data.groupId().getBytes(StandardCharsets.UTF_8);
        Long timestamp = data.timestamp() == 0 ? null : data.timestamp();
        return new JmsRecord(key, data.bodyUnshared(), timestamp, headers); // read only by the producer
    }

    /**
     * @throws JmsRecordFormatException if a {@code jms.} header is malformed (the body is not decoded here; see
     *                                  {@link BodyCodec})
     */
    public static JmsMessageData decode(JmsRecord record) {
        JmsMessageData.Builder b = JmsMessageData.builder();
        long timestamp = record.timestamp() == null || record.timestamp() < 0 ? 0 : record.timestamp();
        b.timestamp(timestamp);
        BodyType bodyType = BodyType.BYTES;
        Set<String> seen = new HashSet<>();
        for (Header header : record.headers()) {
            String key = header.key();
            if (!key.startsWith(JmsHeaders.PREFIX)) {
                continue;
            }
            if (!seen.add(key)) {
                throw new JmsRecordFormatException(key, JmsRecordFormatException.NO_OFFSET,
                        "the header appears more than once");
            }
            byte[] value = header.value() == null ? new byte[0] : header.value();
            if (key.equals(JmsHeaders.BODY_TYPE)) {
                bodyType = BodyType.fromMarker(value);
            } else if (key.startsWith(JmsHeaders.PROPERTY_PREFIX)) {
                decodeProperty(b, key, value);
            } else {
                decodeHeaderField(b, key, value, seen);
            }
        }
        if (record.key() != null) {
            b.groupId(new String(record.key(), StandardCharsets.UTF_8));
        }
        if (bodyType == BodyType.MESSAGE && record.value() != null) {
            throw new JmsRecordFormatException(JmsRecordFormatException.VALUE, 0, "a record of body type 'message' "
                    + "has no body, so its value must be null, not " + record.value().length + " byte(s)");
        }
        b.bodyHandedOver(bodyType, record.value()); // a record value is only read: no copy
        return b.build();
    }

    /**
     * Decodes the value of a UTF-8 header field ({@code jms.message.id}, {@code jms.correlation.id},
     * {@code jms.type}) as {@link #decode} does, for readers that take single headers.
     *
     * @throws JmsRecordFormatException on invalid UTF-8
     */
    public static String decodeUtf8Header(String key, byte[] value) {
        return utf8(key, value == null ? new byte[0] : value);
    }

    private static void decodeProperty(JmsMessageData.Builder b, String key, byte[] value) {
        String name = key.substring(JmsHeaders.PROPERTY_PREFIX.length());
        String problem = JmsIdentifiers.invalidPropertyNameReason(name);
        if (problem == null && GROUP_ID.equals(name)) {
            problem = "JMSXGroupID must be the record key, not a property header";
        }
        if (problem != null) {
            throw new JmsRecordFormatException(key, JmsRecordFormatException.NO_OFFSET, problem);
        }
        b.property(name, TypedValueCodec.decodeProperty(key, value));
    }

    private static void decodeHeaderField(JmsMessageData.Builder b, String key, byte[] value, Set<String> seen) {
        switch (key) {
            case JmsHeaders.MESSAGE_ID:
                b.messageId(utf8(key, value));
                break;
            case JmsHeaders.CORRELATION_ID:
                rejectBoth(seen, key, JmsHeaders.CORRELATION_ID_BYTES);
                b.correlationId(utf8(key, value));
                break;
            case JmsHeaders.CORRELATION_ID_BYTES:
                rejectBoth(seen, key, JmsHeaders.CORRELATION_ID);
                b.correlationIdBytes(value);
                break;
            case JmsHeaders.TYPE:
                b.type(utf8(key, value));
                break;
            case JmsHeaders.DELIVERY_MODE:
                b.deliveryMode(boundedByte(key, value, JmsMessageData.NON_PERSISTENT, JmsMessageData.PERSISTENT));
                break;
            case JmsHeaders.PRIORITY:
                b.priority(boundedByte(key, value, 0, 9));
                break;
            case JmsHeaders.EXPIRATION:
                b.expiration(int64(key, value));
                break;
            case JmsHeaders.DELIVERY_TIME:
                b.deliveryTime(int64(key, value));
                break;
            case JmsHeaders.DESTINATION:
                b.destination(JmsDestination.decode(key, value));
                break;
            case JmsHeaders.REPLY_TO:
                b.replyTo(JmsDestination.decode(key, value));
                break;
            default:
                break; // a newer writer's header: ignored, see class doc
        }
    }

    private static void addUtf8(List<Header> headers, String key, String value) {
        if (value != null) {
            headers.add(JmsRecord.header(key, value.getBytes(StandardCharsets.UTF_8)));
        }
    }

    private static void rejectBoth(Set<String> seen, String key, String other) {
        if (seen.contains(other)) {
            throw new JmsRecordFormatException(key, JmsRecordFormatException.NO_OFFSET,
                    "a record carries either " + JmsHeaders.CORRELATION_ID + " or " + JmsHeaders.CORRELATION_ID_BYTES
                            + ", not both");
        }
    }

    private static String utf8(String key, byte[] value) {
        return ByteReader.decodeUtf8(key, value, 0, value.length);
    }

    private static int boundedByte(String key, byte[] value, int min, int max) {
        ByteReader reader = new ByteReader(key, value);
        int v = reader.readByte("a one-byte value");
        reader.expectEnd("a one-byte value");
        if (v < min || v > max) {
            throw reader.error(0, "value " + v + " is outside " + min + ".." + max);
        }
        return v;
    }

    private static long int64(String key, byte[] value) {
        ByteReader reader = new ByteReader(key, value);
        long v = reader.readLong("an int64");
        reader.expectEnd("an int64");
        return v;
    }
}
