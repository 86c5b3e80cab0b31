package dev.millrace.protocol.jms;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * A bounds-checked big-endian cursor over one part of a record (a header value or the record value). Every failure
 * becomes a {@link JmsRecordFormatException} naming the part and the offset where the read started.
 *
 * <p>This class is not thread-safe; each decode call uses its own instance.
 */
final class ByteReader {

    private final String field;
    private final byte[] bytes;
    private int position;

    ByteReader(String field, byte[] bytes) {
        this.field = field;
        this.bytes = bytes;
    }

    String field() {
        return field;
    }

    int position() {
        return position;
    }

    int remaining() {
        return bytes.length - position;
    }

    JmsRecordFormatException error(int offset, String problem) {
        return new JmsRecordFormatException(field, offset, problem);
    }

    private int require(int count, String what) {
        if (remaining() < count) {
            throw error(position, "expected " + count + " byte(s) for " + what + ", found " + remaining());
        }
        int start = position;
        position += count;
        return start;
    }

    byte readByte(String what) {
        return bytes[require(1, what)];
    }

    short readShort(String what) {
        int at = require(2, what);
        return (short) (((bytes[at] & 0xff) << 8) | (bytes[at + 1] & 0xff));
    }

    int readInt(String what) {
        int at = require(4, what);
        return ((bytes[at] & 0xff) << 24) | ((bytes[at + 1] & 0xff) << 16)
                | ((bytes[at + 2] & 0xff) << 8) | (bytes[at + 3] & 0xff);
    }

    long readLong(String what) {
        int at = require(8, what);
        long value = 0;
        for (int i = 0; i < 8; i++) {
            value = (value << 8) | (bytes[at + i] & 0xff);
        }
        return value;
    }

    /** Reads a non-negative int32 length and checks that many bytes follow. */
    int readLength(String what) {
        int at = position;
        int length = readInt(what + " length");
        if (length < 0) {
            throw error(at, "negative " + what + " length " + length);
        }
        if (length > remaining()) {
            throw error(at, what + " length " + length + " exceeds the " + remaining() + " remaining byte(s)");
        }
        return length;
    }

    byte[] readBytes(int length, String what) {
        int at = require(length, what);
        byte[] copy = new byte[length];
        System.arraycopy(bytes, at, copy, 0, length);
        return copy;
    }

    /** Decodes {@code length} bytes as strict UTF-8; a malformed sequence is reported at its own offset. */
    String readUtf8(int length, String what) {
        int at = require(length, what);
        return decodeUtf8(field, bytes, at, length);
    }

    String readRemainingUtf8(String what) {
        return readUtf8(remaining(), what);
    }

    void expectEnd(String what) {
        if (remaining() != 0) {
            throw error(position, remaining() + " unexpected trailing byte(s) after " + what);
        }
    }

    static String decodeUtf8(String field, byte[] bytes, int offset, int length) {
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(bytes, offset, length);
        CharBuffer out = CharBuffer.allocate(length);
        var result = decoder.decode(in, out, true);
        if (result.isError()) {
            throw new JmsRecordFormatException(field, in.position(), "invalid UTF-8 sequence of "
                    + result.length() + " byte(s)");
        }
        result = decoder.flush(out);
        if (result.isError()) {
            throw new JmsRecordFormatException(field, in.position(), "truncated UTF-8 sequence");
        }
        out.flip();
        return out.toString();
    }
}
