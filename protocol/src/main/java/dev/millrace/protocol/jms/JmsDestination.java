package dev.millrace.protocol.jms;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * A JMS destination as written in headers {@link JmsHeaders#DESTINATION} and {@link JmsHeaders#REPLY_TO}.
 *
 * <pre>
 * +-----------+--------------------------------------+
 * | type:u8   | name: ASCII (rest of the value)      |
 * +-----------+--------------------------------------+
 * type 0x01 queue, 0x02 topic, 0x03 temporary queue, 0x04 temporary topic
 * </pre>
 *
 * <p>Every destination is stored as the Kafka topic of the same name, so a name follows Kafka's topic name rules:
 * 1 to {@value #MAX_NAME_LENGTH} characters from {@code [A-Za-z0-9._-]}, and neither {@code .} nor {@code ..}.
 * Kafka tools then show JMS destinations under their JMS names, with no escaping to learn.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class JmsDestination {

    public static final int MAX_NAME_LENGTH = 249;

    private final DestinationType type;
    private final String name;

    /**
     * @throws IllegalArgumentException if the name is not a valid destination name
     */
    public JmsDestination(DestinationType type, String name) {
        this(type, name, true);
    }

    /** {@code checkName} false: the caller has checked {@code name} already ({@link #decode}). */
    private JmsDestination(DestinationType type, String name, boolean checkName) {
        this.type = Objects.requireNonNull(type, "type");
        String problem = checkName ? invalidNameReason(name) : null;
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        this.name = name;
    }

    public DestinationType type() {
        return type;
    }

    public String name() {
        return name;
    }

    /** Why {@code name} cannot name a destination, or {@code null} if it can. */
    public static String invalidNameReason(String name) {
        if (name == null || name.isEmpty()) {
            return "a destination name must not be null or empty";
        }
        if (name.length() > MAX_NAME_LENGTH) {
            return "destination name is " + name.length() + " characters long, the maximum is " + MAX_NAME_LENGTH;
        }
        if (name.equals(".") || name.equals("..")) {
            return "destination name '" + name + "' is not allowed";
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean legal = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '.' || c == '_' || c == '-';
            if (!legal) {
                return "destination name '" + name + "' has character '" + c + "' at index " + i
                        + "; only ASCII letters, digits, '.', '_' and '-' are allowed";
            }
        }
        return null;
    }

    public byte[] encode() {
        byte[] nameBytes = name.getBytes(StandardCharsets.US_ASCII);
        byte[] out = new byte[nameBytes.length + 1];
        out[0] = type.code();
        System.arraycopy(nameBytes, 0, out, 1, nameBytes.length);
        return out;
    }

    /**
     * @param headerKey the header the bytes came from, named in errors
     * @throws JmsRecordFormatException for an empty value, an unknown type byte or an invalid name
     */
    public static JmsDestination decode(String headerKey, byte[] value) {
        ByteReader reader = new ByteReader(headerKey, value == null ? new byte[0] : value);
        byte code = reader.readByte("the destination type");
        DestinationType type = DestinationType.forCode(code);
        if (type == null) {
            throw reader.error(0, "unknown destination type 0x" + TypedValueCodec.hex(code));
        }
        String name = reader.readRemainingUtf8("the destination name");
        String problem = invalidNameReason(name);
        if (problem != null) {
            throw reader.error(1, problem);
        }
        return new JmsDestination(type, name, false);
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof JmsDestination)) {
            return false;
        }
        JmsDestination other = (JmsDestination) o;
        return type == other.type && name.equals(other.name);
    }

    @Override
    public int hashCode() {
        return 31 * type.hashCode() + name.hashCode();
    }

    @Override
    public String toString() {
        return type + ":" + name;
    }
}
