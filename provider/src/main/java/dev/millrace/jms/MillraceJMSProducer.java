package dev.millrace.jms;

import java.io.Serializable;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import dev.millrace.jms.message.MillraceMessage;
import jakarta.jms.BytesMessage;
import jakarta.jms.CompletionListener;
import jakarta.jms.DeliveryMode;
import jakarta.jms.Destination;
import jakarta.jms.JMSException;
import jakarta.jms.JMSProducer;
import jakarta.jms.JMSRuntimeException;
import jakarta.jms.MapMessage;
import jakarta.jms.Message;
import jakarta.jms.MessageFormatRuntimeException;
import jakarta.jms.ObjectMessage;
import jakarta.jms.TextMessage;

/**
 * The simplified API's producer: options and properties held here, applied to each message it sends through its
 * context's anonymous {@link MillraceMessageProducer}. Used by one thread at a time.
 */
final class MillraceJMSProducer implements JMSProducer {

    private final MillraceJMSContext context;
    private final MillraceMessageProducer producer;
    private final Map<String, Object> properties = new LinkedHashMap<>();
    private int deliveryMode = DeliveryMode.PERSISTENT;
    private int priority = Message.DEFAULT_PRIORITY;
    private long timeToLive;
    private long deliveryDelay;
    private boolean disableMessageId;
    private boolean disableTimestamp;
    private CompletionListener async;
    private String correlationId;
    private byte[] correlationIdBytes;
    private String type;
    private Destination replyTo;

    MillraceJMSProducer(MillraceJMSContext context, MillraceMessageProducer producer) {
        this.context = context;
        this.producer = producer;
    }

    @Override
    public JMSProducer send(Destination destination, Message message) {
        if (message == null) {
            throw new MessageFormatRuntimeException("message must not be null");
        }
        JmsExceptions.runtime(() -> {
            for (Map.Entry<String, Object> p : properties.entrySet()) {
                message.setObjectProperty(p.getKey(), p.getValue());
            }
            if (correlationIdBytes != null) {
                message.setJMSCorrelationIDAsBytes(correlationIdBytes);
            } else if (correlationId != null) {
                message.setJMSCorrelationID(correlationId);
            }
            if (type != null) {
                message.setJMSType(type);
            }
            if (replyTo != null) {
                message.setJMSReplyTo(replyTo);
            }
            producer.setDisableMessageID(disableMessageId);
            producer.setDisableMessageTimestamp(disableTimestamp);
            producer.setDeliveryDelay(deliveryDelay);
            if (async == null) {
                producer.send(destination, message, deliveryMode, priority, timeToLive);
            } else {
                producer.send(destination, message, deliveryMode, priority, timeToLive, async);
            }
            return null;
        });
        return this;
    }

    @Override
    public JMSProducer send(Destination destination, String body) {
        TextMessage m = context.createTextMessage(body);
        return send(destination, m);
    }

    @Override
    public JMSProducer send(Destination destination, Map<String, Object> body) {
        MapMessage m = context.createMapMessage();
        if (body != null) {
            JmsExceptions.runtime(() -> {
                for (Map.Entry<String, Object> e : body.entrySet()) {
                    m.setObject(e.getKey(), e.getValue());
                }
                return null;
            });
        }
        return send(destination, m);
    }

    @Override
    public JMSProducer send(Destination destination, byte[] body) {
        BytesMessage m = context.createBytesMessage();
        if (body != null) {
            JmsExceptions.runtime(() -> {
                m.writeBytes(body);
                return null;
            });
        }
        return send(destination, m);
    }

    @Override
    public JMSProducer send(Destination destination, Serializable body) {
        ObjectMessage m = context.createObjectMessage(body);
        return send(destination, m);
    }

    @Override
    public JMSProducer setDisableMessageID(boolean value) {
        disableMessageId = value;
        return this;
    }

    @Override
    public boolean getDisableMessageID() {
        return disableMessageId;
    }

    @Override
    public JMSProducer setDisableMessageTimestamp(boolean value) {
        disableTimestamp = value;
        return this;
    }

    @Override
    public boolean getDisableMessageTimestamp() {
        return disableTimestamp;
    }

    @Override
    public JMSProducer setDeliveryMode(int deliveryMode) {
        if (deliveryMode != DeliveryMode.PERSISTENT && deliveryMode != DeliveryMode.NON_PERSISTENT) {
            throw new JMSRuntimeException("delivery mode must be PERSISTENT or NON_PERSISTENT, not " + deliveryMode);
        }
        this.deliveryMode = deliveryMode;
        return this;
    }

    @Override
    public int getDeliveryMode() {
        return deliveryMode;
    }

    @Override
    public JMSProducer setPriority(int priority) {
        if (priority < 0 || priority > 9) {
            throw new JMSRuntimeException("priority must be 0..9, not " + priority);
        }
        this.priority = priority;
        return this;
    }

    @Override
    public int getPriority() {
        return priority;
    }

    @Override
    public JMSProducer setTimeToLive(long timeToLive) {
        this.timeToLive = timeToLive;
        return this;
    }

    @Override
    public long getTimeToLive() {
        return timeToLive;
    }

    @Override
    public JMSProducer setDeliveryDelay(long deliveryDelay) {
        this.deliveryDelay = deliveryDelay;
        return this;
    }

    @Override
    public long getDeliveryDelay() {
        return deliveryDelay;
    }

    @Override
    public JMSProducer setAsync(CompletionListener completionListener) {
        this.async = completionListener;
        return this;
    }

    @Override
    public CompletionListener getAsync() {
        return async;
    }

    private JMSProducer property(String name, Object value) {
        // validates name and type the way a message does
        JmsExceptions.runtime(() -> {
            new MillraceMessage().setObjectProperty(name, value);
            return null;
        });
        properties.put(name, value);
        return this;
    }

    @Override
    public JMSProducer setProperty(String name, boolean value) {
        return property(name, value);
    }

    @Override
    public JMSProducer setProperty(String name, byte value) {
        return property(name, value);
    }

    @Override
    public JMSProducer setProperty(String name, short value) {
        return property(name, value);
    }

    @Override
    public JMSProducer setProperty(String name, int value) {
        return property(name, value);
    }

    @Override
    public JMSProducer setProperty(String name, long value) {
        return property(name, value);
    }

    @Override
    public JMSProducer setProperty(String name, float value) {
        return property(name, value);
    }

    @Override
    public JMSProducer setProperty(String name, double value) {
        return property(name, value);
    }

    @Override
    public JMSProducer setProperty(String name, String value) {
        return property(name, value);
    }

    @Override
    public JMSProducer setProperty(String name, Object value) {
        return property(name, value);
    }

    @Override
    public JMSProducer clearProperties() {
        properties.clear();
        return this;
    }

    @Override
    public boolean propertyExists(String name) {
        return properties.containsKey(name);
    }

    /** Property reads convert as a message's do. */
    private MillraceMessage view() {
        MillraceMessage m = new MillraceMessage();
        JmsExceptions.runtime(() -> {
            for (Map.Entry<String, Object> p : properties.entrySet()) {
                m.setObjectProperty(p.getKey(), p.getValue());
            }
            return null;
        });
        return m;
    }

    private static <T> T read(JmsExceptions.JmsAction<T> action) {
        try {
            return action.run();
        } catch (jakarta.jms.MessageFormatException e) {
            throw new MessageFormatRuntimeException(e.getMessage(), e.getErrorCode(), e);
        } catch (JMSException e) {
            throw JmsExceptions.toRuntime(e);
        }
    }

    @Override
    public boolean getBooleanProperty(String name) {
        return read(() -> view().getBooleanProperty(name));
    }

    @Override
    public byte getByteProperty(String name) {
        return read(() -> view().getByteProperty(name));
    }

    @Override
    public short getShortProperty(String name) {
        return read(() -> view().getShortProperty(name));
    }

    @Override
    public int getIntProperty(String name) {
        return read(() -> view().getIntProperty(name));
    }

    @Override
    public long getLongProperty(String name) {
        return read(() -> view().getLongProperty(name));
    }

    @Override
    public float getFloatProperty(String name) {
        return read(() -> view().getFloatProperty(name));
    }

    @Override
    public double getDoubleProperty(String name) {
        return read(() -> view().getDoubleProperty(name));
    }

    @Override
    public String getStringProperty(String name) {
        return read(() -> view().getStringProperty(name));
    }

    @Override
    public Object getObjectProperty(String name) {
        return properties.get(name);
    }

    @Override
    public Set<String> getPropertyNames() {
        return Collections.unmodifiableSet(new HashSet<>(properties.keySet()));
    }

    @Override
    public JMSProducer setJMSCorrelationIDAsBytes(byte[] correlationID) {
        this.correlationIdBytes = correlationID;
        this.correlationId = null;
        return this;
    }

    @Override
    public byte[] getJMSCorrelationIDAsBytes() {
        return correlationIdBytes;
    }

    @Override
    public JMSProducer setJMSCorrelationID(String correlationID) {
        this.correlationId = correlationID;
        this.correlationIdBytes = null;
        return this;
    }

    @Override
    public String getJMSCorrelationID() {
        return correlationId;
    }

    @Override
    public JMSProducer setJMSType(String type) {
        this.type = type;
        return this;
    }

    @Override
    public String getJMSType() {
        return type;
    }

    @Override
    public JMSProducer setJMSReplyTo(Destination replyTo) {
        this.replyTo = replyTo;
        return this;
    }

    @Override
    public Destination getJMSReplyTo() {
        return replyTo;
    }
}
