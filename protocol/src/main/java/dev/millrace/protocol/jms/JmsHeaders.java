package dev.millrace.protocol.jms;

/**
 * The Kafka record header keys of the JMS mapping. See {@link JmsRecordCodec} for the whole layout.
 *
 * <p>Every key starts with the reserved prefix {@value #PREFIX}. Readers ignore {@code jms.} headers they do not know
 * (so a newer writer can add headers) and ignore headers outside the prefix (so Kafka tracing headers and the like
 * pass through). Each key appears at most once; a repeated {@code jms.} key is a malformed record.
 */
public final class JmsHeaders {

    /** Reserved prefix of every header in this mapping. */
    public static final String PREFIX = "jms.";
    /** Prefix of property headers: {@code jms.prop.<property name>}, value in {@link TypedValueCodec} header form. */
    public static final String PROPERTY_PREFIX = "jms.prop.";

    /** Body type marker, ASCII word of {@link BodyType}; absent means {@code bytes}. */
    public static final String BODY_TYPE = "jms.body.type";
    /** JMSMessageID, UTF-8 (normally {@code ID:} followed by the provider's id). */
    public static final String MESSAGE_ID = "jms.message.id";
    /** JMSCorrelationID set as a String, UTF-8. */
    public static final String CORRELATION_ID = "jms.correlation.id";
    /** JMSCorrelationID set as bytes ({@code setJMSCorrelationIDAsBytes}), raw; never together with the String form. */
    public static final String CORRELATION_ID_BYTES = "jms.correlation.id.bytes";
    /** JMSType, UTF-8. */
    public static final String TYPE = "jms.type";
    /** JMSDeliveryMode, 1 byte: 0x01 NON_PERSISTENT, 0x02 PERSISTENT; absent means PERSISTENT. */
    public static final String DELIVERY_MODE = "jms.delivery.mode";
    /** JMSPriority, 1 byte 0..9; absent means 4. */
    public static final String PRIORITY = "jms.priority";
    /** JMSExpiration, int64 milliseconds since the epoch; absent means 0 (never expires). */
    public static final String EXPIRATION = "jms.expiration";
    /** JMSDeliveryTime, int64 milliseconds since the epoch; absent means equal to JMSTimestamp. */
    public static final String DELIVERY_TIME = "jms.delivery.time";
    /** JMSDestination, {@link JmsDestination} encoding; absent means the topic the record was read from. */
    public static final String DESTINATION = "jms.destination";
    /** JMSReplyTo, {@link JmsDestination} encoding; absent means none. */
    public static final String REPLY_TO = "jms.reply.to";
    /**
     * The sending JMS connection, 16 opaque bytes; written by the provider on messages sent to topics so that
     * {@code noLocal} subscribers of the same connection can skip them. Not part of the JMS message: the codec
     * neither writes nor reads it, and readers may ignore it.
     */
    public static final String CONNECTION_ID = "jms.connection.id";

    private JmsHeaders() {
    }

    /** The header key for property {@code name}. */
    public static String propertyKey(String name) {
        return PROPERTY_PREFIX + name;
    }
}
