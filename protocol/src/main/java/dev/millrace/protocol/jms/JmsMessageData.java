package dev.millrace.protocol.jms;

import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Everything the JMS mapping stores about one message, as plain Java values: the JMS header fields, the group id,
 * the typed properties and the body already encoded by {@link BodyCodec}. {@link JmsRecordCodec} turns it into record
 * parts and back.
 *
 * <p>Provider-set receive-side values (JMSRedelivered, JMSXDeliveryCount) are not here: they come from the delivery,
 * not from the record. JMSXGroupID is {@link #groupId()}, stored as the record key, and must not be in
 * {@link #properties()}.
 *
 * <p>Instances are immutable (byte arrays are copied in and out) and thread-safe. Build with {@link #builder()}.
 */
public final class JmsMessageData {

    /** JMS {@code DeliveryMode.NON_PERSISTENT}. */
    public static final int NON_PERSISTENT = 1;
    /** JMS {@code DeliveryMode.PERSISTENT}. */
    public static final int PERSISTENT = 2;
    public static final int DEFAULT_PRIORITY = 4;

    private final BodyType bodyType;
    private final byte[] body;
    private final String messageId;
    private final String correlationId;
    private final byte[] correlationIdBytes;
    private final String type;
    private final int deliveryMode;
    private final int priority;
    private final long timestamp;
    private final long expiration;
    private final long deliveryTime;
    private final JmsDestination destination;
    private final JmsDestination replyTo;
    private final String groupId;
    private final Map<String, Object> properties;

    private JmsMessageData(Builder b) {
        this.bodyType = b.bodyType;
        this.body = b.body;
        this.messageId = b.messageId;
        this.correlationId = b.correlationId;
        this.correlationIdBytes = b.correlationIdBytes;
        this.type = b.type;
        this.deliveryMode = b.deliveryMode;
        this.priority = b.priority;
        this.timestamp = b.timestamp;
        this.expiration = b.expiration;
        this.deliveryTime = b.deliveryTime == null ? b.timestamp : b.deliveryTime;
        this.destination = b.destination;
        this.replyTo = b.replyTo;
        this.groupId = b.groupId;
        this.properties = Collections.unmodifiableMap(new LinkedHashMap<>(b.properties));
    }

    public static Builder builder() {
        return new Builder();
    }

    public BodyType bodyType() {
        return bodyType;
    }

    /** The encoded body (record value), or {@code null} for no body. */
    public byte[] body() {
        return body == null ? null : body.clone();
    }

    /**
     * The encoded body itself, not a copy (or {@code null}), for readers that only read it: the received-message path
     * hands it on without copying. The caller must not change it.
     */
    public byte[] bodyUnshared() {
        return body;
    }

    public String messageId() {
        return messageId;
    }

    /** The correlation id when it was set as a String, else {@code null}. */
    public String correlationId() {
        return correlationId;
    }

    /** The correlation id when it was set as bytes, else {@code null}. */
    public byte[] correlationIdBytes() {
        return correlationIdBytes == null ? null : correlationIdBytes.clone();
    }

    public String type() {
        return type;
    }

    public int deliveryMode() {
        return deliveryMode;
    }

    public int priority() {
        return priority;
    }

    /** JMSTimestamp, 0 when not set. */
    public long timestamp() {
        return timestamp;
    }

    public long expiration() {
        return expiration;
    }

    public long deliveryTime() {
        return deliveryTime;
    }

    public JmsDestination destination() {
        return destination;
    }

    public JmsDestination replyTo() {
        return replyTo;
    }

    /** JMSXGroupID, or {@code null}. */
    public String groupId() {
        return groupId;
    }

    /** Properties in insertion order; values are {@link TypedValueCodec#isPropertyValue property values}. */
    public Map<String, Object> properties() {
        return properties;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof JmsMessageData)) {
            return false;
        }
        JmsMessageData d = (JmsMessageData) o;
        return bodyType == d.bodyType && Arrays.equals(body, d.body) && Objects.equals(messageId, d.messageId)
                && Objects.equals(correlationId, d.correlationId)
                && Arrays.equals(correlationIdBytes, d.correlationIdBytes) && Objects.equals(type, d.type)
                && deliveryMode == d.deliveryMode && priority == d.priority && timestamp == d.timestamp
                && expiration == d.expiration && deliveryTime == d.deliveryTime
                && Objects.equals(destination, d.destination) && Objects.equals(replyTo, d.replyTo)
                && Objects.equals(groupId, d.groupId) && properties.equals(d.properties);
    }

    @Override
    public int hashCode() {
        return Objects.hash(bodyType, Arrays.hashCode(body), messageId, type, timestamp, properties.keySet());
    }

    @Override
    public String toString() {
        return "JmsMessageData{" + bodyType + ", id=" + messageId + ", destination=" + destination
                + ", properties=" + properties.keySet() + ", body=" + (body == null ? "none" : body.length + " bytes")
                + "}";
    }

    /** Not thread-safe. Defaults: body type BYTES with no body, PERSISTENT, priority 4, times 0. */
    public static final class Builder {
        private BodyType bodyType = BodyType.BYTES;
        private byte[] body;
        private String messageId;
        private String correlationId;
        private byte[] correlationIdBytes;
        private String type;
        private int deliveryMode = PERSISTENT;
        private int priority = DEFAULT_PRIORITY;
        private long timestamp;
        private long expiration;
        private Long deliveryTime;
        private JmsDestination destination;
        private JmsDestination replyTo;
        private String groupId;
        private final Map<String, Object> properties = new LinkedHashMap<>();

        private Builder() {
        }

        public Builder body(BodyType bodyType, byte[] body) {
            return bodyHandedOver(bodyType, body == null ? null : body.clone());
        }

        /**
         * As {@link #body}, keeping {@code body} itself rather than a copy: for a caller that hands the array over
         * and never changes it again (the decoder, with a record value that only gets read).
         */
        public Builder bodyHandedOver(BodyType bodyType, byte[] body) {
            this.bodyType = Objects.requireNonNull(bodyType, "bodyType");
            this.body = body;
            return this;
        }

        public Builder messageId(String messageId) {
            this.messageId = messageId;
            return this;
        }

        /** Sets the String form and clears the bytes form. */
        public Builder correlationId(String correlationId) {
            this.correlationId = correlationId;
            this.correlationIdBytes = null;
            return this;
        }

        /** Sets the bytes form and clears the String form. */
        public Builder correlationIdBytes(byte[] correlationIdBytes) {
            this.correlationIdBytes = correlationIdBytes == null ? null : correlationIdBytes.clone();
            this.correlationId = null;
            return this;
        }

        public Builder type(String type) {
            this.type = type;
            return this;
        }

        public Builder deliveryMode(int deliveryMode) {
            this.deliveryMode = deliveryMode;
            return this;
        }

        public Builder priority(int priority) {
            this.priority = priority;
            return this;
        }

        public Builder timestamp(long timestamp) {
            this.timestamp = timestamp;
            return this;
        }

        public Builder expiration(long expiration) {
            this.expiration = expiration;
            return this;
        }

        /** Without a call, the delivery time equals the timestamp. */
        public Builder deliveryTime(long deliveryTime) {
            this.deliveryTime = deliveryTime;
            return this;
        }

        public Builder destination(JmsDestination destination) {
            this.destination = destination;
            return this;
        }

        public Builder replyTo(JmsDestination replyTo) {
            this.replyTo = replyTo;
            return this;
        }

        public Builder groupId(String groupId) {
            this.groupId = groupId;
            return this;
        }

        public Builder property(String name, Object value) {
            properties.put(name, value);
            return this;
        }

        public Builder properties(Map<String, ?> values) {
            properties.putAll(values);
            return this;
        }

        public JmsMessageData build() {
            return new JmsMessageData(this);
        }
    }
}
