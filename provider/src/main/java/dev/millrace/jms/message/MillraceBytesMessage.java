package dev.millrace.jms.message;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UTFDataFormatException;

import dev.millrace.protocol.jms.BodyType;
import jakarta.jms.BytesMessage;
import jakarta.jms.JMSException;
import jakarta.jms.MessageEOFException;
import jakarta.jms.MessageFormatException;
import jakarta.jms.MessageNotReadableException;

/**
 * A message whose body is a stream of bytes in {@link java.io.DataOutput} layout; the record value is exactly these
 * bytes, so a record from a plain Kafka producer reads as one of these.
 *
 * <p>Two modes: write-only when created and after {@link #clearBody()}, read-only after {@link #reset()} or on
 * receipt. Reading in write-only mode throws {@link MessageNotReadableException}; writing in read-only mode throws
 * {@code MessageNotWriteableException}. A read that runs past the end throws {@link MessageEOFException} and leaves
 * the read position where it was, so a shorter read can follow. A body of zero bytes is "no body" for
 * {@link #getBody}; {@code getBody} resets the message before and after use, as JMS says, and so leaves it readable.
 *
 * <p>Not thread-safe.
 */
public class MillraceBytesMessage extends MillraceMessage implements BytesMessage {

    private ByteArrayOutputStream written = new ByteArrayOutputStream();
    private DataOutputStream out = new DataOutputStream(written);
    private byte[] content;
    private ByteArrayInputStream in;
    private DataInputStream dataIn;

    @FunctionalInterface
    private interface Read<T> {
        T from(DataInputStream in) throws IOException;
    }

    @FunctionalInterface
    private interface Write {
        void to(DataOutputStream out) throws IOException;
    }

    private void checkReadable() throws MessageNotReadableException {
        if (!isBodyReadOnly()) {
            throw new MessageNotReadableException("this BytesMessage is write-only; call reset() to read it");
        }
    }

    private <T> T read(String what, Read<T> read) throws JMSException {
        checkReadable();
        in.mark(0);
        try {
            return read.from(dataIn);
        } catch (EOFException e) {
            in.reset();
            throw linked(new MessageEOFException("end of the BytesMessage body reached reading " + what), e);
        } catch (UTFDataFormatException e) {
            in.reset();
            throw linked(new MessageFormatException("malformed modified UTF-8 reading " + what), e);
        } catch (IOException e) {
            throw linked(new JMSException("cannot read " + what + ": " + e), e);
        }
    }

    private void write(Write write) throws JMSException {
        checkBodyWritable();
        try {
            write.to(out);
        } catch (UTFDataFormatException e) {
            throw linked(new MessageFormatException("string too long for writeUTF: " + e.getMessage()), e);
        } catch (IOException e) {
            throw linked(new JMSException("cannot write: " + e), e);
        }
    }

    private static <E extends JMSException> E linked(E jmsException, Exception cause) {
        jmsException.setLinkedException(cause);
        jmsException.initCause(cause);
        return jmsException;
    }

    @Override
    public long getBodyLength() throws JMSException {
        checkReadable();
        return content.length;
    }

    @Override
    public boolean readBoolean() throws JMSException {
        return read("a boolean", DataInputStream::readBoolean);
    }

    @Override
    public byte readByte() throws JMSException {
        return read("a byte", DataInputStream::readByte);
    }

    @Override
    public int readUnsignedByte() throws JMSException {
        return read("an unsigned byte", DataInputStream::readUnsignedByte);
    }

    @Override
    public short readShort() throws JMSException {
        return read("a short", DataInputStream::readShort);
    }

    @Override
    public int readUnsignedShort() throws JMSException {
        return read("an unsigned short", DataInputStream::readUnsignedShort);
    }

    @Override
    public char readChar() throws JMSException {
        return read("a char", DataInputStream::readChar);
    }

    @Override
    public int readInt() throws JMSException {
        return read("an int", DataInputStream::readInt);
    }

    @Override
    public long readLong() throws JMSException {
        return read("a long", DataInputStream::readLong);
    }

    @Override
    public float readFloat() throws JMSException {
        return read("a float", DataInputStream::readFloat);
    }

    @Override
    public double readDouble() throws JMSException {
        return read("a double", DataInputStream::readDouble);
    }

    @Override
    public String readUTF() throws JMSException {
        return read("a UTF string", d -> d.readUTF());
    }

    @Override
    public int readBytes(byte[] value) throws JMSException {
        return readBytes(value, value.length);
    }

    @Override
    public int readBytes(byte[] value, int length) throws JMSException {
        if (length < 0 || length > value.length) {
            throw new IndexOutOfBoundsException("length " + length + " is outside 0.." + value.length);
        }
        checkReadable();
        if (in.available() == 0) {
            return -1;
        }
        return in.read(value, 0, length);
    }

    @Override
    public void writeBoolean(boolean value) throws JMSException {
        write(o -> o.writeBoolean(value));
    }

    @Override
    public void writeByte(byte value) throws JMSException {
        write(o -> o.writeByte(value));
    }

    @Override
    public void writeShort(short value) throws JMSException {
        write(o -> o.writeShort(value));
    }

    @Override
    public void writeChar(char value) throws JMSException {
        write(o -> o.writeChar(value));
    }

    @Override
    public void writeInt(int value) throws JMSException {
        write(o -> o.writeInt(value));
    }

    @Override
    public void writeLong(long value) throws JMSException {
        write(o -> o.writeLong(value));
    }

    @Override
    public void writeFloat(float value) throws JMSException {
        write(o -> o.writeFloat(value));
    }

    @Override
    public void writeDouble(double value) throws JMSException {
        write(o -> o.writeDouble(value));
    }

    @Override
    public void writeUTF(String value) throws JMSException {
        write(o -> o.writeUTF(value));
    }

    @Override
    public void writeBytes(byte[] value) throws JMSException {
        write(o -> o.write(value));
    }

    @Override
    public void writeBytes(byte[] value, int offset, int length) throws JMSException {
        write(o -> o.write(value, offset, length));
    }

    @Override
    public void writeObject(Object value) throws JMSException {
        if (value == null) {
            throw new NullPointerException("BytesMessage.writeObject(null)");
        }
        if (value instanceof Boolean) {
            writeBoolean((Boolean) value);
        } else if (value instanceof Byte) {
            writeByte((Byte) value);
        } else if (value instanceof Short) {
            writeShort((Short) value);
        } else if (value instanceof Character) {
            writeChar((Character) value);
        } else if (value instanceof Integer) {
            writeInt((Integer) value);
        } else if (value instanceof Long) {
            writeLong((Long) value);
        } else if (value instanceof Float) {
            writeFloat((Float) value);
        } else if (value instanceof Double) {
            writeDouble((Double) value);
        } else if (value instanceof String) {
            writeUTF((String) value);
        } else if (value instanceof byte[]) {
            writeBytes((byte[]) value);
        } else {
            throw new MessageFormatException(value.getClass().getName()
                    + " cannot be written to a BytesMessage (a boxed primitive, String or byte[] can)");
        }
    }

    @Override
    public void reset() {
        if (!isBodyReadOnly()) {
            content = written.toByteArray();
            written = null;
            out = null;
            setBodyReadOnly(true);
        }
        in = new ByteArrayInputStream(content);
        dataIn = new DataInputStream(in);
    }

    @Override
    public void clearBody() throws JMSException {
        super.clearBody();
        content = null;
        in = null;
        dataIn = null;
        written = new ByteArrayOutputStream();
        out = new DataOutputStream(written);
    }

    @Override
    public void onReceived() throws JMSException {
        super.onReceived();
        if (content == null) {
            content = written.toByteArray();
        }
        reset();
    }

    @Override
    public BodyType bodyType() {
        return BodyType.BYTES;
    }

    @Override
    byte[] encodeBody() {
        return isBodyReadOnly() ? content : written.toByteArray();
    }

    @Override
    void decodeBody(byte[] body) throws JMSException {
        content = body == null ? new byte[0] : body;
        super.decodeBody(body);
        reset();
    }

    @Override
    protected boolean hasBody() {
        return isBodyReadOnly() ? content.length > 0 : written.size() > 0;
    }

    @Override
    protected Object bodyValue() {
        reset();
        byte[] body = content.clone();
        reset();
        return body;
    }

    @Override
    public boolean isBodyAssignableTo(@SuppressWarnings("rawtypes") Class c) {
        return !hasBody() || c.isAssignableFrom(byte[].class);
    }

    @Override
    String kind() {
        return "BytesMessage";
    }
}
