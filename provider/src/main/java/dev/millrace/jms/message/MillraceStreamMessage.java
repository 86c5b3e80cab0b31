package dev.millrace.jms.message;

import java.util.ArrayList;
import java.util.List;

import dev.millrace.protocol.jms.BodyCodec;
import dev.millrace.protocol.jms.BodyType;
import dev.millrace.protocol.jms.TypedValueCodec;
import jakarta.jms.JMSException;
import jakarta.jms.MessageEOFException;
import jakarta.jms.MessageFormatException;
import jakarta.jms.MessageNotReadableException;
import jakarta.jms.StreamMessage;

/**
 * A message whose body is a sequence of typed values, read back in order with the conversions of
 * {@link ValueConversions}.
 *
 * <p>Modes as for BytesMessage: write-only until {@link #reset()} (or receipt), then read-only. A read whose conversion
 * fails ({@link MessageFormatException}, {@link NumberFormatException}, {@link NullPointerException}) does not move
 * the read position, so the value can be read again as another type. Reading past the last value throws
 * {@link MessageEOFException}.
 *
 * <p>byte[] values are read with {@link #readBytes(byte[])} in pieces: each call copies up to the buffer's length and
 * returns the count; a count below the buffer length ends the value; a count equal to it asks for another call, which
 * returns -1 when nothing is left. A null value returns -1, an empty array 0. Until a byte[] value is finished, every
 * other read throws {@link MessageFormatException}. {@link #readObject()} returns a whole byte[] value at once.
 * Decision (StreamMessage.readBytes javadoc: "-1 if there is no more data because the end of the byte field has been
 * reached"): once a call returned a count below the buffer length (the value read whole, an empty value too), the
 * next {@code readBytes} returns -1 for the end of that value instead of reading on into the next one; a read of
 * another kind goes straight on to the next value, so readers that stop at the short count work too.
 *
 * <p>{@code getBody} always throws {@link MessageFormatException} and {@code isBodyAssignableTo} is always false, as
 * JMS specifies for stream messages.
 *
 * <p>Not thread-safe.
 */
public class MillraceStreamMessage extends MillraceMessage implements StreamMessage {

    private List<Object> values = new ArrayList<>();
    private int position;
    /** Bytes of the current byte[] value already returned by readBytes, or -1 when no byte[] read is in progress. */
    private int bytesRead = -1;
    /** Whether the last readBytes ended a byte[] value with a short count: the next readBytes returns -1. */
    private boolean bytesEndPending;

    private void add(Object value) throws JMSException {
        checkBodyWritable();
        values.add(value);
    }

    private Object current() throws JMSException {
        if (!isBodyReadOnly()) {
            throw new MessageNotReadableException("this StreamMessage is write-only; call reset() to read it");
        }
        if (bytesRead >= 0) {
            throw new MessageFormatException("the byte[] value at position " + position
                    + " is partly read; finish it with readBytes before reading the next value");
        }
        if (position >= values.size()) {
            throw new MessageEOFException("end of the StreamMessage: all " + values.size() + " values were read");
        }
        bytesEndPending = false;
        return values.get(position);
    }

    @Override
    public boolean readBoolean() throws JMSException {
        boolean v = ValueConversions.toBoolean(current());
        position++;
        return v;
    }

    @Override
    public byte readByte() throws JMSException {
        byte v = ValueConversions.toByte(current());
        position++;
        return v;
    }

    @Override
    public short readShort() throws JMSException {
        short v = ValueConversions.toShort(current());
        position++;
        return v;
    }

    @Override
    public char readChar() throws JMSException {
        char v = ValueConversions.toChar(current());
        position++;
        return v;
    }

    @Override
    public int readInt() throws JMSException {
        int v = ValueConversions.toInt(current());
        position++;
        return v;
    }

    @Override
    public long readLong() throws JMSException {
        long v = ValueConversions.toLong(current());
        position++;
        return v;
    }

    @Override
    public float readFloat() throws JMSException {
        float v = ValueConversions.toFloat(current());
        position++;
        return v;
    }

    @Override
    public double readDouble() throws JMSException {
        double v = ValueConversions.toDouble(current());
        position++;
        return v;
    }

    @Override
    public String readString() throws JMSException {
        String v = ValueConversions.toStringValue(current());
        position++;
        return v;
    }

    @Override
    public int readBytes(byte[] value) throws JMSException {
        if (bytesEndPending) {
            bytesEndPending = false;
            return -1;
        }
        if (bytesRead < 0) {
            Object v = current();
            if (v == null) {
                position++;
                return -1;
            }
            if (!(v instanceof byte[])) {
                throw new MessageFormatException("a " + ValueConversions.typeName(v)
                        + " value cannot be read as byte[]");
            }
            if (((byte[]) v).length == 0) {
                position++;
                bytesEndPending = true;
                return 0;
            }
            bytesRead = 0;
        }
        byte[] field = (byte[]) values.get(position);
        int remaining = field.length - bytesRead;
        if (remaining == 0) {
            finishBytes();
            return -1;
        }
        int count = Math.min(remaining, value.length);
        System.arraycopy(field, bytesRead, value, 0, count);
        bytesRead += count;
        if (count < value.length) {
            finishBytes();
            bytesEndPending = true;
        }
        return count;
    }

    private void finishBytes() {
        bytesRead = -1;
        position++;
    }

    @Override
    public Object readObject() throws JMSException {
        Object v = ValueConversions.toObject(current());
        position++;
        return v;
    }

    @Override
    public void writeBoolean(boolean value) throws JMSException {
        add(value);
    }

    @Override
    public void writeByte(byte value) throws JMSException {
        add(value);
    }

    @Override
    public void writeShort(short value) throws JMSException {
        add(value);
    }

    @Override
    public void writeChar(char value) throws JMSException {
        add(value);
    }

    @Override
    public void writeInt(int value) throws JMSException {
        add(value);
    }

    @Override
    public void writeLong(long value) throws JMSException {
        add(value);
    }

    @Override
    public void writeFloat(float value) throws JMSException {
        add(value);
    }

    @Override
    public void writeDouble(double value) throws JMSException {
        add(value);
    }

    @Override
    public void writeString(String value) throws JMSException {
        add(value);
    }

    @Override
    public void writeBytes(byte[] value) throws JMSException {
        add(value.clone());
    }

    @Override
    public void writeBytes(byte[] value, int offset, int length) throws JMSException {
        byte[] copy = new byte[length];
        System.arraycopy(value, offset, copy, 0, length);
        add(copy);
    }

    @Override
    public void writeObject(Object value) throws JMSException {
        if (!TypedValueCodec.isBodyValue(value)) {
            throw new MessageFormatException(value.getClass().getName()
                    + " cannot be written to a StreamMessage (a boxed primitive, String, byte[] or null can)");
        }
        add(ValueConversions.toObject(value));
    }

    @Override
    public void reset() {
        setBodyReadOnly(true);
        position = 0;
        bytesRead = -1;
        bytesEndPending = false;
    }

    @Override
    public void clearBody() throws JMSException {
        super.clearBody();
        values = new ArrayList<>();
        position = 0;
        bytesRead = -1;
        bytesEndPending = false;
    }

    @Override
    public void onReceived() throws JMSException {
        super.onReceived();
        reset();
    }

    @Override
    public BodyType bodyType() {
        return BodyType.STREAM;
    }

    @Override
    byte[] encodeBody() {
        return BodyCodec.encodeStream(values);
    }

    @Override
    void decodeBody(byte[] body) throws JMSException {
        values = BodyCodec.decodeStream(body);
        super.decodeBody(body);
        reset();
    }

    @Override
    public <T> T getBody(Class<T> c) throws MessageFormatException {
        throw new MessageFormatException("the body of a StreamMessage cannot be returned by getBody");
    }

    @Override
    public boolean isBodyAssignableTo(@SuppressWarnings("rawtypes") Class c) {
        return false;
    }

    @Override
    String kind() {
        return "StreamMessage";
    }
}
