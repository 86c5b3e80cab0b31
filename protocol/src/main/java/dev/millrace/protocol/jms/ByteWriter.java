package dev.millrace.protocol.jms;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * A growable big-endian writer producing the byte layouts documented in {@link TypedValueCodec}.
 *
 * <p>This class is not thread-safe.
 */
final class ByteWriter {

    private final ByteArrayOutputStream out;

    ByteWriter(int initialCapacity) {
        this.out = new ByteArrayOutputStream(initialCapacity);
    }

    ByteWriter writeByte(int value) {
        out.write(value);
        return this;
    }

    ByteWriter writeShort(int value) {
        out.write(value >>> 8);
        out.write(value);
        return this;
    }

    ByteWriter writeInt(int value) {
        out.write(value >>> 24);
        out.write(value >>> 16);
        out.write(value >>> 8);
        out.write(value);
        return this;
    }

    ByteWriter writeLong(long value) {
        for (int shift = 56; shift >= 0; shift -= 8) {
            out.write((int) (value >>> shift));
        }
        return this;
    }

    ByteWriter writeBytes(byte[] bytes) {
        out.write(bytes, 0, bytes.length);
        return this;
    }

    /** Writes an int32 length followed by the bytes. */
    ByteWriter writeSizedBytes(byte[] bytes) {
        writeInt(bytes.length);
        return writeBytes(bytes);
    }

    /** Writes an int32 length followed by the UTF-8 encoding of {@code value}. */
    ByteWriter writeSizedUtf8(String value) {
        return writeSizedBytes(value.getBytes(StandardCharsets.UTF_8));
    }

    byte[] toByteArray() {
        return out.toByteArray();
    }
}
