package dev.millrace.protocol.jms;

/** The kind of a JMS destination, with its one-byte code in the destination encoding of {@link JmsDestination}. */
public enum DestinationType {
    QUEUE((byte) 0x01),
    TOPIC((byte) 0x02),
    TEMPORARY_QUEUE((byte) 0x03),
    TEMPORARY_TOPIC((byte) 0x04);

    private final byte code;

    DestinationType(byte code) {
        this.code = code;
    }

    public byte code() {
        return code;
    }

    public boolean isQueue() {
        return this == QUEUE || this == TEMPORARY_QUEUE;
    }

    public boolean isTemporary() {
        return this == TEMPORARY_QUEUE || this == TEMPORARY_TOPIC;
    }

    /** The type for {@code code}, or {@code null} if the code is unknown. */
    static DestinationType forCode(byte code) {
        for (DestinationType type : values()) {
            if (type.code == code) {
                return type;
            }
        }
        return null;
    }
}
