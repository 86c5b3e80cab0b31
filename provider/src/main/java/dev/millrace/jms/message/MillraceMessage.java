package dev.millrace.jms.message;

import java.nio.charset.StandardCharsets;
import java.util.Enumeration;
import java.util.Map;

import dev.millrace.protocol.jms.BodyType;
import jakarta.jms.DeliveryMode;
import jakarta.jms.Destination;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageFormatException;
import jakarta.jms.MessageNotWriteableException;

/**
 * A JMS message without a body, and the base of the five body types: header fields, properties (with the conversion
 * table of {@link ValueConversions}), read-only modes and acknowledgement.
 *
 * <p>Header fields are always writable. Properties and body become read-only when the message is received
 * ({@link #onReceived()}); {@link #clearProperties()} and {@link #clearBody()} make them writable again. Subclasses
 * check {@link #checkBodyWritable()} before every body change.
 *
 * <p>Provider-specific behaviour: {@code getJMSCorrelationIDAsBytes()} of a String id is its UTF-8 encoding, and
 * {@code getJMSCorrelationID()} of a byte id is its UTF-8 decoding; the record keeps whichever form was set.
 * {@code acknowledge()} calls the {@link AcknowledgeCallback} the delivering session set, and does nothing without one.
 *
 * <p>Not thread-safe: JMS messages belong to one thread of control at a time.
 */
public class MillraceMessage implements Message {

    private String messageId;
    private long timestamp;
    private String correlationId;
    private byte[] correlationIdBytes;
    private Destination replyTo;
    private Destination destination;
    private int deliveryMode = DeliveryMode.PERSISTENT;
    private boolean redelivered;
    private String type;
    private long expiration;
    private long deliveryTime;
    private int priority = DEFAULT_PRIORITY;
    final MessageProperties properties = new MessageProperties();
    private boolean bodyReadOnly;
    private AcknowledgeCallback acknowledgeCallback;

    // ---- header fields

    @Override
    public String getJMSMessageID() {
        return messageId;
    }

    @Override
    public void setJMSMessageID(String id) {
        this.messageId = id;
    }

    @Override
    public long getJMSTimestamp() {
        return timestamp;
    }

    @Override
    public void setJMSTimestamp(long timestamp) {
        this.timestamp = timestamp;
    }

    @Override
    public byte[] getJMSCorrelationIDAsBytes() {
        if (correlationIdBytes != null) {
            return correlationIdBytes.clone();
        }
        return correlationId == null ? null : correlationId.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void setJMSCorrelationIDAsBytes(byte[] correlationID) {
        this.correlationIdBytes = correlationID == null ? null : correlationID.clone();
        this.correlationId = null;
    }

    @Override
    public void setJMSCorrelationID(String correlationID) {
        this.correlationId = correlationID;
        this.correlationIdBytes = null;
    }

    @Override
    public String getJMSCorrelationID() {
        if (correlationIdBytes != null) {
            return new String(correlationIdBytes, StandardCharsets.UTF_8);
        }
        return correlationId;
    }

    /** The correlation id only if it was set as a String (the record keeps the form that was set). */
    String correlationIdString() {
        return correlationId;
    }

    /** The correlation id only if it was set as bytes. */
    byte[] correlationIdBytes() {
        return correlationIdBytes == null ? null : correlationIdBytes.clone();
    }

    @Override
    public Destination getJMSReplyTo() {
        return replyTo;
    }

    @Override
    public void setJMSReplyTo(Destination replyTo) {
        this.replyTo = replyTo;
    }

    @Override
    public Destination getJMSDestination() {
        return destination;
    }

    @Override
    public void setJMSDestination(Destination destination) {
        this.destination = destination;
    }

    @Override
    public int getJMSDeliveryMode() {
        return deliveryMode;
    }

    @Override
    public void setJMSDeliveryMode(int deliveryMode) {
        this.deliveryMode = deliveryMode;
    }

    @Override
    public boolean getJMSRedelivered() {
        return redelivered;
    }

    @Override
    public void setJMSRedelivered(boolean redelivered) {
        this.redelivered = redelivered;
    }

    @Override
    public String getJMSType() {
        return type;
    }

    @Override
    public void setJMSType(String type) {
        this.type = type;
    }

    @Override
    public long getJMSExpiration() {
        return expiration;
    }

    @Override
    public void setJMSExpiration(long expiration) {
        this.expiration = expiration;
    }

    @Override
    public long getJMSDeliveryTime() {
        return deliveryTime;
    }

    @Override
    public void setJMSDeliveryTime(long deliveryTime) {
        this.deliveryTime = deliveryTime;
    }

    @Override
    public int getJMSPriority() {
        return priority;
    }

    @Override
    public void setJMSPriority(int priority) {
        this.priority = priority;
    }

    // ---- properties

    @Override
    public void clearProperties() {
        properties.clear();
    }

    @Override
    public boolean propertyExists(String name) {
        return properties.exists(name);
    }

    @Override
    public boolean getBooleanProperty(String name) throws JMSException {
        return ValueConversions.toBoolean(properties.get(name));
    }

    @Override
    public byte getByteProperty(String name) throws JMSException {
        return ValueConversions.toByte(properties.get(name));
    }

    @Override
    public short getShortProperty(String name) throws JMSException {
        return ValueConversions.toShort(properties.get(name));
    }

    @Override
    public int getIntProperty(String name) throws JMSException {
        return ValueConversions.toInt(properties.get(name));
    }

    @Override
    public long getLongProperty(String name) throws JMSException {
        return ValueConversions.toLong(properties.get(name));
    }

    @Override
    public float getFloatProperty(String name) throws JMSException {
        return ValueConversions.toFloat(properties.get(name));
    }

    @Override
    public double getDoubleProperty(String name) throws JMSException {
        return ValueConversions.toDouble(properties.get(name));
    }

    @Override
    public String getStringProperty(String name) throws JMSException {
        return ValueConversions.toStringValue(properties.get(name));
    }

    @Override
    public Object getObjectProperty(String name) {
        return properties.get(name);
    }

    @Override
    @SuppressWarnings("rawtypes")
    public Enumeration getPropertyNames() {
        return properties.names();
    }

    @Override
    public void setBooleanProperty(String name, boolean value) throws JMSException {
        properties.set(name, value);
    }

    @Override
    public void setByteProperty(String name, byte value) throws JMSException {
        properties.set(name, value);
    }

    @Override
    public void setShortProperty(String name, short value) throws JMSException {
        properties.set(name, value);
    }

    @Override
    public void setIntProperty(String name, int value) throws JMSException {
        properties.set(name, value);
    }

    @Override
    public void setLongProperty(String name, long value) throws JMSException {
        properties.set(name, value);
    }

    @Override
    public void setFloatProperty(String name, float value) throws JMSException {
        properties.set(name, value);
    }

    @Override
    public void setDoubleProperty(String name, double value) throws JMSException {
        properties.set(name, value);
    }

    @Override
    public void setStringProperty(String name, String value) throws JMSException {
        properties.set(name, value);
    }

    @Override
    public void setObjectProperty(String name, Object value) throws JMSException {
        properties.set(name, value);
    }

    /** A copy of the properties in the order they were set. */
    Map<String, Object> propertySnapshot() {
        return properties.snapshot();
    }

    // ---- acknowledgement

    @Override
    public void acknowledge() throws JMSException {
        if (acknowledgeCallback != null) {
            acknowledgeCallback.acknowledge(this);
        }
    }

    /** Set by the session that delivers this message; {@code null} makes {@code acknowledge()} do nothing. */
    public void setAcknowledgeCallback(AcknowledgeCallback acknowledgeCallback) {
        this.acknowledgeCallback = acknowledgeCallback;
    }

    // ---- body

    @Override
    public void clearBody() throws JMSException {
        bodyReadOnly = false;
    }

    /**
     * Puts properties and body in read-only mode, as a received message must be; BytesMessage and StreamMessage are
     * reset to read from the start. Called by the provider on delivery.
     */
    public void onReceived() throws JMSException {
        properties.setReadOnly(true);
        bodyReadOnly = true;
    }

    /** Sets JMSXDeliveryCount (and JMSRedelivered when above 1) from the delivery, bypassing read-only mode. */
    public void setDeliveryCount(int deliveryCount) {
        if (deliveryCount < 1) {
            throw new IllegalArgumentException("delivery count must be at least 1, not " + deliveryCount);
        }
        properties.setTrusted(MessageProperties.JMSX_DELIVERY_COUNT, deliveryCount);
        redelivered = deliveryCount > 1;
    }

    protected final boolean isBodyReadOnly() {
        return bodyReadOnly;
    }

    protected final void setBodyReadOnly(boolean bodyReadOnly) {
        this.bodyReadOnly = bodyReadOnly;
    }

    protected final void checkBodyWritable() throws MessageNotWriteableException {
        if (bodyReadOnly) {
            throw new MessageNotWriteableException("the body of this " + kind()
                    + " is read-only (received, or reset); call clearBody() to write it");
        }
    }

    /** The record mapping's body type of this message. */
    public BodyType bodyType() {
        return BodyType.MESSAGE;
    }

    /** The body in the record mapping's layout, or {@code null} for no body. */
    byte[] encodeBody() throws JMSException {
        return null;
    }

    /** Replaces the body with one read from a record; leaves the body read-only. */
    void decodeBody(byte[] body) throws JMSException {
        bodyReadOnly = true;
    }

    /** Whether the message has a body in the sense of {@link #getBody}: without one, any type may be asked for. */
    protected boolean hasBody() throws JMSException {
        return false;
    }

    /** The body as {@code getBody} returns it; only called when {@link #hasBody()}. */
    protected Object bodyValue() throws JMSException {
        return null;
    }

    @Override
    public <T> T getBody(Class<T> c) throws JMSException {
        if (!hasBody()) {
            return null;
        }
        Object body = bodyValue();
        if (!c.isInstance(body)) {
            throw new MessageFormatException("the body of this " + kind() + " is a " + body.getClass().getName()
                    + ", which cannot be assigned to " + c.getName());
        }
        return c.cast(body);
    }

    @Override
    @SuppressWarnings("rawtypes")
    public boolean isBodyAssignableTo(Class c) throws JMSException {
        if (!hasBody()) {
            return true;
        }
        try {
            return c.isInstance(bodyValue());
        } catch (MessageFormatException e) {
            return false;
        }
    }

    String kind() {
        return "Message";
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "{id=" + messageId + ", destination=" + destination + ", properties="
                + properties.snapshot().keySet() + "}";
    }
}
