package dev.millrace.protocol.jms;

import java.nio.charset.StandardCharsets;

/**
 * Which JMS message type a record holds, carried in header {@link JmsHeaders#BODY_TYPE} as a short ASCII word.
 *
 * <p>A record without that header (as written by a plain Kafka producer) is a {@link #BYTES} message whose body is the
 * record value. To have a JMS consumer receive a {@code TextMessage}, a Kafka producer adds header
 * {@code jms.body.type} with the 4 ASCII bytes {@code text} and writes the text as UTF-8 in the record value.
 */
public enum BodyType {
    /** {@code BytesMessage}; also what a record without the marker header is. */
    BYTES("bytes"),
    /** {@code TextMessage}. */
    TEXT("text"),
    /** {@code MapMessage}. */
    MAP("map"),
    /** {@code StreamMessage}. */
    STREAM("stream"),
    /** {@code ObjectMessage}. */
    OBJECT("object"),
    /** A plain {@code Message} with no body. */
    MESSAGE("message");

    private final String marker;
    private final byte[] markerBytes;

    BodyType(String marker) {
        this.marker = marker;
        this.markerBytes = marker.getBytes(StandardCharsets.US_ASCII);
    }

    /** The header value word, e.g. {@code text}. */
    public String marker() {
        return marker;
    }

    byte[] markerBytes() {
        return markerBytes.clone();
    }

    /** Parses a marker header value; {@code null} (header absent) is {@link #BYTES}. */
    public static BodyType fromMarker(byte[] value) {
        if (value == null) {
            return BYTES;
        }
        String word = ByteReader.decodeUtf8(JmsHeaders.BODY_TYPE, value, 0, value.length);
        for (BodyType type : values()) {
            if (type.marker.equals(word)) {
                return type;
            }
        }
        throw new JmsRecordFormatException(JmsHeaders.BODY_TYPE, 0, "unknown body type '" + word
                + "', expected one of bytes, text, map, stream, object, message");
    }
}
