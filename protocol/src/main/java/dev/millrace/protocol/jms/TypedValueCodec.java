package dev.millrace.protocol.jms;

import java.nio.charset.StandardCharsets;

/**
 * Encodes the typed values of JMS properties and of map and stream message bodies.
 *
 * <p>Values are plain Java objects: {@code null}, {@link Boolean}, {@link Byte}, {@link Short}, {@link Character},
 * {@link Integer}, {@link Long}, {@link Float}, {@link Double}, {@link String} and {@code byte[]}. Every value starts
 * with a one-byte type tag; all numbers are big-endian (network order), floating point numbers are their IEEE 754 bit
 * patterns, and strings are standard UTF-8 (not Java's "modified UTF-8"; unpaired surrogates are written as {@code ?}).
 *
 * <pre>
 *  tag  type     payload                                     property  map/stream
 *  ---- -------  ------------------------------------------  --------  ----------
 *  0x00 null     (none)                                         yes       yes
 *  0x01 boolean  1 byte: 0x00 false, 0x01 true (others bad)     yes       yes
 *  0x02 byte     1 byte, two's complement                       yes       yes
 *  0x03 short    2 bytes                                        yes       yes
 *  0x04 char     2 bytes, one UTF-16 code unit                  no        yes
 *  0x05 int      4 bytes                                        yes       yes
 *  0x06 long     8 bytes                                        yes       yes
 *  0x07 float    4 bytes, IEEE 754 binary32 bits                yes       yes
 *  0x08 double   8 bytes, IEEE 754 binary64 bits                yes       yes
 *  0x09 String   see the two forms below                        yes       yes
 *  0x0A byte[]   int32 length, then the bytes                   no        yes
 * </pre>
 *
 * <p>Two forms differ only for strings:
 * <ul>
 *   <li><b>Header form</b> ({@link #encodeProperty}, one property per Kafka header): a string's payload is the rest of
 *       the header value, with no length prefix, because the header value already has a length. So a Kafka producer
 *       sets a String property {@code color=red} as header {@code jms.prop.color} with value
 *       {@code 09 72 65 64}. The value's length must match the type exactly; trailing bytes are an error.
 *   <li><b>Sized form</b> ({@link #writeSized}, inside map and stream bodies where values follow each other):
 *       a string is {@code 0x09, int32 byte length, UTF-8 bytes}.
 * </ul>
 *
 * <p>This class is stateless and thread-safe.
 */
public final class TypedValueCodec {

    public static final byte NULL = 0x00;
    public static final byte BOOLEAN = 0x01;
    public static final byte BYTE = 0x02;
    public static final byte SHORT = 0x03;
    public static final byte CHAR = 0x04;
    public static final byte INT = 0x05;
    public static final byte LONG = 0x06;
    public static final byte FLOAT = 0x07;
    public static final byte DOUBLE = 0x08;
    public static final byte STRING = 0x09;
    public static final byte BYTES = 0x0A;

    private TypedValueCodec() {
    }

    /** Whether {@code value} may be a JMS property value: null, a boxed primitive other than Character, or a String. */
    public static boolean isPropertyValue(Object value) {
        return value == null || value instanceof Boolean || value instanceof Byte || value instanceof Short
                || value instanceof Integer || value instanceof Long || value instanceof Float
                || value instanceof Double || value instanceof String;
    }

    /** Whether {@code value} may be held in a map or stream message body: a property value, a Character or a byte[]. */
    public static boolean isBodyValue(Object value) {
        return isPropertyValue(value) || value instanceof Character || value instanceof byte[];
    }

    /**
     * Encodes a property value in header form.
     *
     * @throws IllegalArgumentException if {@code value} is not a {@linkplain #isPropertyValue property value}
     */
    public static byte[] encodeProperty(Object value) {
        if (value instanceof String) {
            byte[] utf8 = ((String) value).getBytes(StandardCharsets.UTF_8);
            byte[] out = new byte[utf8.length + 1];
            out[0] = STRING;
            System.arraycopy(utf8, 0, out, 1, utf8.length);
            return out;
        }
        if (!isPropertyValue(value)) {
            throw new IllegalArgumentException("not a JMS property value type: " + value.getClass().getName());
        }
        ByteWriter writer = new ByteWriter(9);
        writeFixed(writer, value);
        return writer.toByteArray();
    }

    /**
     * Decodes a property value in header form.
     *
     * @param headerKey the header the bytes came from, named in errors
     * @throws JmsRecordFormatException if the bytes are empty, have an unknown or non-property tag, or have the wrong
     *                                  length for their type
     */
    public static Object decodeProperty(String headerKey, byte[] bytes) {
        ByteReader reader = new ByteReader(headerKey, bytes == null ? new byte[0] : bytes);
        byte tag = reader.readByte("the type tag");
        Object value;
        if (tag == STRING) {
            value = reader.readRemainingUtf8("a String");
        } else if (tag == CHAR || tag == BYTES) {
            throw reader.error(0, "type tag 0x" + hex(tag) + " (" + typeName(tag) + ") is not allowed for a property");
        } else {
            value = readFixed(reader, tag);
        }
        reader.expectEnd("a " + typeName(tag) + " value");
        return value;
    }

    /**
     * The type tag of a property value in header form, after the checks {@link #decodeProperty} makes except the
     * UTF-8 check of a String: a known property tag, the exact length for fixed-size types, 0x00/0x01 for a boolean.
     * With {@link #exactPropertyValue}, {@link #approximatePropertyValue} and {@link #booleanPropertyValue} it reads
     * a property without boxing (the broker's selector evaluation); a String's UTF-8 starts at offset 1.
     *
     * @throws JmsRecordFormatException as {@link #decodeProperty} does
     */
    public static byte propertyTag(String headerKey, byte[] bytes) {
        if (bytes == null || bytes.length == 0) {
            throw new JmsRecordFormatException(headerKey, 0, "expected 1 byte(s) for the type tag, found 0");
        }
        byte tag = bytes[0];
        int size;
        switch (tag) {
            case NULL: size = 0; break;
            case BOOLEAN: case BYTE: size = 1; break;
            case SHORT: size = 2; break;
            case INT: case FLOAT: size = 4; break;
            case LONG: case DOUBLE: size = 8; break;
            case STRING: return tag;
            case CHAR: case BYTES:
                throw new JmsRecordFormatException(headerKey, 0, "type tag 0x" + hex(tag) + " (" + typeName(tag)
                        + ") is not allowed for a property");
            default:
                throw new JmsRecordFormatException(headerKey, 0, "unknown type tag 0x" + hex(tag));
        }
        if (bytes.length != 1 + size) {
            throw new JmsRecordFormatException(headerKey, 1, "a " + typeName(tag) + " value takes " + size
                    + " byte(s), found " + (bytes.length - 1));
        }
        if (tag == BOOLEAN && bytes[1] != 0 && bytes[1] != 1) {
            throw new JmsRecordFormatException(headerKey, 1, "boolean must be 0x00 or 0x01, found 0x" + hex(bytes[1]));
        }
        return tag;
    }

    /** The value of a byte, short, int or long property whose bytes passed {@link #propertyTag}. */
    public static long exactPropertyValue(byte[] bytes) {
        long value = bytes[1]; // sign-extends the first byte, then the others shift in
        for (int i = 2; i < bytes.length; i++) {
            value = (value << 8) | (bytes[i] & 0xff);
        }
        return value;
    }

    /** The value of a float (widened) or double property whose bytes passed {@link #propertyTag}. */
    public static double approximatePropertyValue(byte[] bytes) {
        long bits = exactPropertyValue(bytes);
        return bytes[0] == FLOAT ? Float.intBitsToFloat((int) bits) : Double.longBitsToDouble(bits);
    }

    /** The value of a boolean property whose bytes passed {@link #propertyTag}. */
    public static boolean booleanPropertyValue(byte[] bytes) {
        return bytes[1] == 1;
    }

    /**
     * Appends a value in sized form.
     *
     * @throws IllegalArgumentException if {@code value} is not a {@linkplain #isBodyValue body value}
     */
    static void writeSized(ByteWriter writer, Object value) {
        if (value instanceof String) {
            writer.writeByte(STRING).writeSizedUtf8((String) value);
        } else if (value instanceof byte[]) {
            writer.writeByte(BYTES).writeSizedBytes((byte[]) value);
        } else if (value instanceof Character) {
            writer.writeByte(CHAR).writeShort((Character) value);
        } else if (isPropertyValue(value)) {
            writeFixed(writer, value);
        } else {
            throw new IllegalArgumentException("not a JMS map/stream value type: " + value.getClass().getName());
        }
    }

    /** Reads one value in sized form. */
    static Object readSized(ByteReader reader) {
        int at = reader.position();
        byte tag = reader.readByte("a type tag");
        switch (tag) {
            case STRING:
                return reader.readUtf8(reader.readLength("String"), "a String");
            case BYTES:
                return reader.readBytes(reader.readLength("byte[]"), "a byte[]");
            case CHAR:
                return (char) reader.readShort("a char");
            default:
                if (tag < NULL || tag > DOUBLE) {
                    throw reader.error(at, "unknown type tag 0x" + hex(tag));
                }
                return readFixed(reader, tag);
        }
    }

    private static void writeFixed(ByteWriter writer, Object value) {
        if (value == null) {
            writer.writeByte(NULL);
        } else if (value instanceof Boolean) {
            writer.writeByte(BOOLEAN).writeByte((Boolean) value ? 1 : 0);
        } else if (value instanceof Byte) {
            writer.writeByte(BYTE).writeByte((Byte) value);
        } else if (value instanceof Short) {
            writer.writeByte(SHORT).writeShort((Short) value);
        } else if (value instanceof Integer) {
            writer.writeByte(INT).writeInt((Integer) value);
        } else if (value instanceof Long) {
            writer.writeByte(LONG).writeLong((Long) value);
        } else if (value instanceof Float) {
            writer.writeByte(FLOAT).writeInt(Float.floatToRawIntBits((Float) value));
        } else {
            writer.writeByte(DOUBLE).writeLong(Double.doubleToRawLongBits((Double) value));
        }
    }

    private static Object readFixed(ByteReader reader, byte tag) {
        switch (tag) {
            case NULL:
                return null;
            case BOOLEAN: {
                int at = reader.position();
                byte b = reader.readByte("a boolean");
                if (b != 0 && b != 1) {
                    throw reader.error(at, "boolean must be 0x00 or 0x01, found 0x" + hex(b));
                }
                return b == 1;
            }
            case BYTE:
                return reader.readByte("a byte");
            case SHORT:
                return reader.readShort("a short");
            case INT:
                return reader.readInt("an int");
            case LONG:
                return reader.readLong("a long");
            case FLOAT:
                return Float.intBitsToFloat(reader.readInt("a float"));
            case DOUBLE:
                return Double.longBitsToDouble(reader.readLong("a double"));
            default:
                throw reader.error(reader.position() - 1, "unknown type tag 0x" + hex(tag));
        }
    }

    static String hex(byte b) {
        return String.format("%02X", b & 0xff);
    }

    static String typeName(byte tag) {
        switch (tag) {
            case NULL: return "null";
            case BOOLEAN: return "boolean";
            case BYTE: return "byte";
            case SHORT: return "short";
            case CHAR: return "char";
            case INT: return "int";
            case LONG: return "long";
            case FLOAT: return "float";
            case DOUBLE: return "double";
            case STRING: return "String";
            case BYTES: return "byte[]";
            default: return "unknown";
        }
    }
}
