package dev.millrace.jms.message;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.millrace.protocol.jms.JmsIdentifiers;
import dev.millrace.protocol.jms.TypedValueCodec;
import jakarta.jms.MessageFormatException;
import jakarta.jms.MessageNotWriteableException;

/**
 * The properties of one message: name checks, the value types JMS allows, read-only mode, and the types of the JMSX
 * properties this provider knows ({@code JMSXGroupID}, {@code JMSXUserID}, {@code JMSXAppID},
 * {@code JMSXProducerTXID}, {@code JMSXConsumerTXID}: String; {@code JMSXGroupSeq}, {@code JMSXDeliveryCount},
 * {@code JMSXState}: int; {@code JMSXRcvTimestamp}: long), so that a wrongly typed JMSX value fails when set rather
 * than in a selector. A property may be set to {@code null}; it then exists and reads as an absent one would.
 *
 * <p>Not thread-safe, like the message that owns it.
 */
final class MessageProperties {

    static final String JMSX_DELIVERY_COUNT = "JMSXDeliveryCount";
    static final String JMSX_GROUP_ID = "JMSXGroupID";

    private static final Map<String, Class<?>> JMSX_TYPES = Map.of(
            "JMSXGroupID", String.class,
            "JMSXGroupSeq", Integer.class,
            "JMSXDeliveryCount", Integer.class,
            "JMSXUserID", String.class,
            "JMSXAppID", String.class,
            "JMSXProducerTXID", String.class,
            "JMSXConsumerTXID", String.class,
            "JMSXRcvTimestamp", Long.class,
            "JMSXState", Integer.class);

    private final Map<String, Object> values = new LinkedHashMap<>();
    private boolean readOnly;

    void set(String name, Object value) throws MessageNotWriteableException, MessageFormatException {
        String problem = JmsIdentifiers.invalidPropertyNameReason(name);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        if (readOnly) {
            throw new MessageNotWriteableException("cannot set property " + name
                    + ": the properties of a received message are read-only until clearProperties()");
        }
        if (!TypedValueCodec.isPropertyValue(value)) {
            throw new MessageFormatException("property " + name + ": " + value.getClass().getName()
                    + " is not a property type (Boolean, Byte, Short, Integer, Long, Float, Double, String)");
        }
        Class<?> jmsxType = JMSX_TYPES.get(name);
        if (jmsxType != null && value != null && !jmsxType.isInstance(value)) {
            throw new MessageFormatException("property " + name + " must be a " + jmsxType.getSimpleName()
                    + ", not a " + value.getClass().getSimpleName());
        }
        values.put(name, value);
    }

    /** Sets without checks: values that came from a record or from the delivery. */
    void setTrusted(String name, Object value) {
        values.put(name, value);
    }

    Object get(String name) {
        return values.get(name);
    }

    boolean exists(String name) {
        return values.containsKey(name);
    }

    Enumeration<String> names() {
        return Collections.enumeration(new ArrayList<>(values.keySet()));
    }

    Map<String, Object> snapshot() {
        return new LinkedHashMap<>(values);
    }

    void clear() {
        values.clear();
        readOnly = false;
    }

    void setReadOnly(boolean readOnly) {
        this.readOnly = readOnly;
    }

    boolean isReadOnly() {
        return readOnly;
    }
}
