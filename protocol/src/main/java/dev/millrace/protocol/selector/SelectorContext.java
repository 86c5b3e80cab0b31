package dev.millrace.protocol.selector;

import java.util.Objects;

/**
 * The values a {@link Selector} reads from one message: header fields and properties by identifier.
 *
 * <p>Only {@link #get} must be implemented; a lambda over a map is a complete context. The other methods let an
 * implementation that holds values in encoded form (such as {@link RecordSelectorContext}, over Kafka record headers)
 * answer without boxing or decoding. The evaluator calls {@link #typeOf} first and then only the accessor that matches
 * the type it got, so an implementation may assume that precondition. Implementations must answer consistently for
 * the duration of one evaluation.
 *
 * <p>Identifiers arrive exactly as written in the selector (case-sensitive). The header fields a selector may name are
 * {@code JMSDeliveryMode} (the String {@code "PERSISTENT"} or {@code "NON_PERSISTENT"}), {@code JMSPriority}
 * (an Integer), {@code JMSMessageID}, {@code JMSTimestamp} (a Long), {@code JMSCorrelationID} and {@code JMSType}; the
 * selector never asks for the other header fields (see {@link Selector}). Everything else is a property, including the
 * {@code JMSX} and {@code JMS_} ones.
 */
@FunctionalInterface
public interface SelectorContext {

    /**
     * The value of {@code identifier}: a {@link Boolean}, {@link Byte}, {@link Short}, {@link Integer}, {@link Long},
     * {@link Float}, {@link Double} or {@link String}, or {@code null} when there is none. Other objects are
     * {@link ValueType#OTHER}.
     */
    Object get(String identifier);

    default ValueType typeOf(String identifier) {
        return ValueType.of(get(identifier));
    }

    /** Called only when {@link #typeOf} answered {@link ValueType#EXACT}. */
    default long longValue(String identifier) {
        return ((Number) get(identifier)).longValue();
    }

    /**
     * Called only when {@link #typeOf} answered {@link ValueType#APPROXIMATE}; a {@code float} widens to
     * {@code double} as in Java.
     */
    default double doubleValue(String identifier) {
        return ((Number) get(identifier)).doubleValue();
    }

    /** Called only when {@link #typeOf} answered {@link ValueType#BOOLEAN}. */
    default boolean booleanValue(String identifier) {
        return (Boolean) get(identifier);
    }

    /** Called only when {@link #typeOf} answered {@link ValueType#STRING}. */
    default String stringValue(String identifier) {
        return (String) get(identifier);
    }

    /**
     * Whether the String value of {@code identifier} equals {@code literal}; called only when {@link #typeOf}
     * answered {@link ValueType#STRING}.
     *
     * @param literalUtf8 {@code literal} in UTF-8, for implementations holding UTF-8 that can compare bytes instead
     *                    of decoding; {@code null} when the literal has no faithful UTF-8 form (an unpaired surrogate)
     */
    default boolean stringEquals(String identifier, String literal, byte[] literalUtf8) {
        return Objects.equals(literal, stringValue(identifier));
    }
}
