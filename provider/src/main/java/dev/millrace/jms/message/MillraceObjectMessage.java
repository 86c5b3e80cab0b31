package dev.millrace.jms.message;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectInputFilter;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.ObjectStreamClass;
import java.io.Serializable;

import dev.millrace.protocol.jms.BodyType;
import jakarta.jms.JMSException;
import jakarta.jms.MessageFormatException;
import jakarta.jms.ObjectMessage;

/**
 * A message whose body is a serializable object, held (and written to the record) as its Java serialization bytes.
 * {@link #setObject} serializes at once, so later changes to the object do not change the message, and each
 * {@link #getObject} returns a fresh copy. Classes are resolved through the thread context class loader first, then
 * this class's loader. Deserialization obeys the JVM-wide filter ({@code jdk.serialFilter}) and, when the delivering
 * session sets one, a per-message {@link ObjectInputFilter} ({@link #setDeserializationFilter}); a rejected class makes
 * {@code getObject} throw {@link MessageFormatException}.
 *
 * <p>Not thread-safe.
 */
public class MillraceObjectMessage extends MillraceMessage implements ObjectMessage {

    private byte[] serialized;
    private ObjectInputFilter deserializationFilter;

    /** Restricts which classes {@link #getObject} may create; {@code null} leaves only the JVM-wide filter. */
    public void setDeserializationFilter(ObjectInputFilter filter) {
        this.deserializationFilter = filter;
    }

    @Override
    public void setObject(Serializable object) throws JMSException {
        checkBodyWritable();
        serialized = object == null ? null : serialize(object);
    }

    @Override
    public Serializable getObject() throws JMSException {
        return serialized == null ? null : deserialize(serialized, deserializationFilter);
    }

    @Override
    public void clearBody() throws JMSException {
        super.clearBody();
        serialized = null;
    }

    @Override
    public BodyType bodyType() {
        return BodyType.OBJECT;
    }

    @Override
    byte[] encodeBody() {
        return serialized;
    }

    @Override
    void decodeBody(byte[] body) throws JMSException {
        serialized = body;
        super.decodeBody(body);
    }

    @Override
    protected boolean hasBody() {
        return serialized != null;
    }

    @Override
    protected Object bodyValue() throws JMSException {
        return getObject();
    }

    @Override
    String kind() {
        return "ObjectMessage";
    }

    private static byte[] serialize(Serializable object) throws MessageFormatException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(object);
        } catch (IOException e) {
            throw formatException("cannot serialize " + object.getClass().getName() + ": " + e, e);
        }
        return bytes.toByteArray();
    }

    private static Serializable deserialize(byte[] bytes, ObjectInputFilter filter) throws MessageFormatException {
        try (ObjectInputStream in = new ContextClassLoaderObjectInputStream(new ByteArrayInputStream(bytes))) {
            if (filter != null) {
                in.setObjectInputFilter(filter);
            }
            return (Serializable) in.readObject();
        } catch (IOException | ClassNotFoundException | ClassCastException e) {
            throw formatException("cannot deserialize the ObjectMessage body: " + e, e);
        }
    }

    private static MessageFormatException formatException(String message, Exception cause) {
        MessageFormatException e = new MessageFormatException(message);
        e.setLinkedException(cause);
        e.initCause(cause);
        return e;
    }

    /** Resolves classes through the thread context class loader, as application servers need. */
    private static final class ContextClassLoaderObjectInputStream extends ObjectInputStream {

        ContextClassLoaderObjectInputStream(InputStream in) throws IOException {
            super(in);
        }

        @Override
        protected Class<?> resolveClass(ObjectStreamClass desc) throws IOException, ClassNotFoundException {
            ClassLoader loader = Thread.currentThread().getContextClassLoader();
            if (loader != null) {
                try {
                    return Class.forName(desc.getName(), false, loader);
                } catch (ClassNotFoundException e) {
                    // fall back to the default resolution below
                }
            }
            return super.resolveClass(desc);
        }
    }
}
