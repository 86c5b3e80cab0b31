package dev.millrace.protocol.jms;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Encodes message bodies as record values, one layout per {@link BodyType}. A {@code null} record value always means
 * "no body" (a TextMessage with null text, an ObjectMessage with a null object, a plain Message).
 *
 * <pre>
 * bytes   the body bytes, unchanged (what BytesMessage.writeXxx produced: java.io.DataOutput layout)
 * text    the text as standard UTF-8, no length prefix, no BOM
 * object  the Java serialization stream (ObjectOutputStream) of the object
 * message always null
 *
 * map     +-------------+--------------------------------------------------+
 *         | count:int32 | count x entry                                    |
 *         +-------------+--------------------------------------------------+
 *         entry: +------------------+------------------+--------------------------+
 *                | name_len:int32   | name: UTF-8      | value: sized typed value |
 *                +------------------+------------------+--------------------------+
 *         names are non-empty and unique; entries appear in insertion order
 *
 * stream  +-------------+-------------------------------+
 *         | count:int32 | count x sized typed value     |
 *         +-------------+-------------------------------+
 * </pre>
 *
 * <p>"sized typed value" is the sized form of {@link TypedValueCodec}: tag byte, then payload, where String and byte[]
 * carry an int32 length. All integers are big-endian. A body with bytes after the last entry is malformed.
 *
 * <p>This class is stateless and thread-safe.
 */
public final class BodyCodec {

    private BodyCodec() {
    }

    public static byte[] encodeText(String text) {
        return text == null ? null : text.getBytes(StandardCharsets.UTF_8);
    }

    /** Decodes strict UTF-8; a null value is a null text. */
    public static String decodeText(byte[] value) {
        return value == null ? null : ByteReader.decodeUtf8(JmsRecordFormatException.VALUE, value, 0, value.length);
    }

    /**
     * Encodes map entries in iteration order.
     *
     * @throws IllegalArgumentException for an empty or null name or a value that is not a body value
     */
    public static byte[] encodeMap(Map<String, ?> entries) {
        ByteWriter writer = new ByteWriter(16 + entries.size() * 16);
        writer.writeInt(entries.size());
        for (Map.Entry<String, ?> entry : entries.entrySet()) {
            if (entry.getKey() == null || entry.getKey().isEmpty()) {
                throw new IllegalArgumentException("map entry names must not be null or empty");
            }
            writer.writeSizedUtf8(entry.getKey());
            TypedValueCodec.writeSized(writer, entry.getValue());
        }
        return writer.toByteArray();
    }

    /** Decodes a map body; a null value is an empty map. The result keeps the record's entry order. */
    public static Map<String, Object> decodeMap(byte[] value) {
        Map<String, Object> entries = new LinkedHashMap<>();
        if (value == null) {
            return entries;
        }
        ByteReader reader = new ByteReader(JmsRecordFormatException.VALUE, value);
        int count = readCount(reader, 5);
        for (int i = 0; i < count; i++) {
            int nameAt = reader.position();
            String name = reader.readUtf8(reader.readLength("map entry name"), "a map entry name");
            if (name.isEmpty()) {
                throw reader.error(nameAt, "empty map entry name");
            }
            if (entries.containsKey(name)) {
                throw reader.error(nameAt, "duplicate map entry name '" + name + "'");
            }
            entries.put(name, TypedValueCodec.readSized(reader));
        }
        reader.expectEnd(count + " map entries");
        return entries;
    }

    /**
     * Encodes stream values in order.
     *
     * @throws IllegalArgumentException for a value that is not a body value
     */
    public static byte[] encodeStream(List<?> values) {
        ByteWriter writer = new ByteWriter(16 + values.size() * 8);
        writer.writeInt(values.size());
        for (Object value : values) {
            TypedValueCodec.writeSized(writer, value);
        }
        return writer.toByteArray();
    }

    /** Decodes a stream body; a null value is an empty stream. */
    public static List<Object> decodeStream(byte[] value) {
        if (value == null) {
            return new ArrayList<>();
        }
        ByteReader reader = new ByteReader(JmsRecordFormatException.VALUE, value);
        int count = readCount(reader, 1);
        List<Object> values = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            values.add(TypedValueCodec.readSized(reader));
        }
        reader.expectEnd(count + " stream values");
        return values;
    }

    /** Reads the int32 entry count and rejects counts the remaining bytes cannot hold (no huge allocations). */
    private static int readCount(ByteReader reader, int minBytesPerEntry) {
        int count = reader.readInt("the entry count");
        if (count < 0 || (long) count * minBytesPerEntry > reader.remaining()) {
            throw reader.error(0, "entry count " + count + " does not fit in the " + reader.remaining()
                    + " remaining byte(s)");
        }
        return count;
    }
}
