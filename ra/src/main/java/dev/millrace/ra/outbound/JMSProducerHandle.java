package dev.millrace.ra.outbound;

import java.io.Serializable;
import java.util.Map;
import java.util.Set;

import jakarta.jms.CompletionListener;
import jakarta.jms.Destination;
import jakarta.jms.IllegalStateRuntimeException;
import jakarta.jms.JMSProducer;
import jakarta.jms.Message;

/**
 * A JMSProducer made through a {@link ContextHandle}: the physical producer (each setter returns this handle), except
 * that {@code setAsync} with a listener throws IllegalStateRuntimeException (JMS 3.1, 12.2: no asynchronous sends in
 * the web and EJB containers).
 *
 * <p>Used by one thread at a time, like a producer.
 */
final class JMSProducerHandle implements JMSProducer {

    private final JMSProducer producer;

    JMSProducerHandle(JMSProducer producer) {
        this.producer = producer;
    }

    @Override
    public JMSProducer setAsync(CompletionListener completionListener) {
        if (completionListener != null) {
            throw new IllegalStateRuntimeException("JMSProducer.setAsync is not allowed in a Jakarta EE web or EJB"
                    + " container (JMS 3.1, 12.2)");
        }
        return this;
    }

    @Override
    public CompletionListener getAsync() {
        return null;
    }

    @Override
    public JMSProducer send(Destination destination, Message message) {
        producer.send(destination, message);
        return this;
    }

    @Override
    public JMSProducer send(Destination destination, String body) {
        producer.send(destination, body);
        return this;
    }

    @Override
    public JMSProducer send(Destination destination, Map<String, Object> body) {
        producer.send(destination, body);
        return this;
    }

    @Override
    public JMSProducer send(Destination destination, byte[] body) {
        producer.send(destination, body);
        return this;
    }

    @Override
    public JMSProducer send(Destination destination, Serializable body) {
        producer.send(destination, body);
        return this;
    }

    @Override
    public JMSProducer setDisableMessageID(boolean value) {
        producer.setDisableMessageID(value);
        return this;
    }

    @Override
    public boolean getDisableMessageID() {
        return producer.getDisableMessageID();
    }

    @Override
    public JMSProducer setDisableMessageTimestamp(boolean value) {
        producer.setDisableMessageTimestamp(value);
        return this;
    }

    @Override
    public boolean getDisableMessageTimestamp() {
        return producer.getDisableMessageTimestamp();
    }

    @Override
    public JMSProducer setDeliveryMode(int value) {
        producer.setDeliveryMode(value);
        return this;
    }

    @Override
    public int getDeliveryMode() {
        return producer.getDeliveryMode();
    }

    @Override
    public JMSProducer setPriority(int value) {
        producer.setPriority(value);
        return this;
    }

    @Override
    public int getPriority() {
        return producer.getPriority();
    }

    @Override
    public JMSProducer setTimeToLive(long value) {
        producer.setTimeToLive(value);
        return this;
    }

    @Override
    public long getTimeToLive() {
        return producer.getTimeToLive();
    }

    @Override
    public JMSProducer setDeliveryDelay(long value) {
        producer.setDeliveryDelay(value);
        return this;
    }

    @Override
    public long getDeliveryDelay() {
        return producer.getDeliveryDelay();
    }

    @Override
    public JMSProducer setProperty(String name, boolean value) {
        producer.setProperty(name, value);
        return this;
    }

    @Override
    public JMSProducer setProperty(String name, byte value) {
        producer.setProperty(name, value);
        return this;
    }

    @Override
    public JMSProducer setProperty(String name, short value) {
        producer.setProperty(name, value);
        return this;
    }

    @Override
    public JMSProducer setProperty(String name, int value) {
        producer.setProperty(name, value);
        return this;
    }

    @Override
    public JMSProducer setProperty(String name, long value) {
        producer.setProperty(name, value);
        return this;
    }

    @Override
    public JMSProducer setProperty(String name, float value) {
        producer.setProperty(name, value);
        return this;
    }

    @Override
    public JMSProducer setProperty(String name, double value) {
        producer.setProperty(name, value);
        return this;
    }

    @Override
    public JMSProducer setProperty(String name, String value) {
        producer.setProperty(name, value);
        return this;
    }

    @Override
    public JMSProducer setProperty(String name, Object value) {
        producer.setProperty(name, value);
        return this;
    }

    @Override
    public JMSProducer clearProperties() {
        producer.clearProperties();
        return this;
    }

    @Override
    public boolean propertyExists(String name) {
        return producer.propertyExists(name);
    }

    @Override
    public boolean getBooleanProperty(String name) {
        return producer.getBooleanProperty(name);
    }

    @Override
    public byte getByteProperty(String name) {
        return producer.getByteProperty(name);
    }

    @Override
    public short getShortProperty(String name) {
        return producer.getShortProperty(name);
    }

    @Override
    public int getIntProperty(String name) {
        return producer.getIntProperty(name);
    }

    @Override
    public long getLongProperty(String name) {
        return producer.getLongProperty(name);
    }

    @Override
    public float getFloatProperty(String name) {
        return producer.getFloatProperty(name);
    }

    @Override
    public double getDoubleProperty(String name) {
        return producer.getDoubleProperty(name);
    }

    @Override
    public String getStringProperty(String name) {
        return producer.getStringProperty(name);
    }

    @Override
    public Object getObjectProperty(String name) {
        return producer.getObjectProperty(name);
    }

    @Override
    public Set<String> getPropertyNames() {
        return producer.getPropertyNames();
    }

    @Override
    public JMSProducer setJMSCorrelationIDAsBytes(byte[] value) {
        producer.setJMSCorrelationIDAsBytes(value);
        return this;
    }

    @Override
    public byte[] getJMSCorrelationIDAsBytes() {
        return producer.getJMSCorrelationIDAsBytes();
    }

    @Override
    public JMSProducer setJMSCorrelationID(String value) {
        producer.setJMSCorrelationID(value);
        return this;
    }

    @Override
    public String getJMSCorrelationID() {
        return producer.getJMSCorrelationID();
    }

    @Override
    public JMSProducer setJMSType(String value) {
        producer.setJMSType(value);
        return this;
    }

    @Override
    public String getJMSType() {
        return producer.getJMSType();
    }

    @Override
    public JMSProducer setJMSReplyTo(Destination value) {
        producer.setJMSReplyTo(value);
        return this;
    }

    @Override
    public Destination getJMSReplyTo() {
        return producer.getJMSReplyTo();
    }

}
