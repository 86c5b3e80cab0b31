package dev.millrace.protocol.selector;

/**
 * The type of a value as a message selector sees it (Jakarta Messaging 3.1, section 3.8.1.1): the property types
 * collapse into the four selector types, because {@code byte}, {@code short}, {@code int} and {@code long} compare and
 * compute alike (exact numerics) and so do {@code float} and {@code double} (approximate numerics).
 */
public enum ValueType {
    /** No value: a property that is not set, or a header field that is null. */
    NULL,
    BOOLEAN,
    /** {@link Byte}, {@link Short}, {@link Integer} or {@link Long}; read with {@link SelectorContext#longValue}. */
    EXACT,
    /** {@link Float} or {@link Double}; read with {@link SelectorContext#doubleValue}. */
    APPROXIMATE,
    STRING,
    /** Any other object (not a valid property value): equal to nothing, ordered against nothing, not null. */
    OTHER;

    /** The selector type of a plain Java value. */
    public static ValueType of(Object value) {
        if (value == null) {
            return NULL;
        }
        if (value instanceof String) {
            return STRING;
        }
        if (value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte) {
            return EXACT;
        }
        if (value instanceof Double || value instanceof Float) {
            return APPROXIMATE;
        }
        if (value instanceof Boolean) {
            return BOOLEAN;
        }
        return OTHER;
    }

    boolean isNumeric() {
        return this == EXACT || this == APPROXIMATE;
    }
}
