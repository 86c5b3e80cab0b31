package dev.millrace.jms.message;

import jakarta.jms.MessageFormatException;

/**
 * The type conversions of JMS 3.1 for reading a value as another type: the property table (section 3.5.4) and the
 * map/stream table (sections 3.11.2/3.11.3), which agree where both define a type. A value written as the row type
 * can be read as a column type marked X; other reads throw {@link MessageFormatException}.
 *
 * <pre>
 *           boolean byte short char int long float double String byte[]
 * boolean      X                                             X
 * byte              X     X         X    X                   X
 * short                   X         X    X                   X
 * char                         X                             X
 * int                               X    X                   X
 * long                                   X                   X
 * float                                        X     X       X
 * double                                             X       X
 * String       X    X     X         X    X     X     X       X
 * byte[]                                                            X
 * </pre>
 *
 * <p>A {@code null} value (an absent property or map entry, or a null stream value) is read as the primitive's
 * {@code valueOf((String) null)} would: {@code false} for boolean, {@link NumberFormatException} for the integral
 * types, {@link NullPointerException} for float and double (that is what {@code Float.valueOf(null)} throws), and
 * {@code null} for String and byte[]. Reading null as char throws {@link NullPointerException}, since there is no
 * {@code Character.valueOf(String)}. String-to-number conversions throw {@link NumberFormatException} for text
 * {@code valueOf} does not accept.
 *
 * <p>Stateless and thread-safe.
 */
final class ValueConversions {

    private ValueConversions() {
    }

    static boolean toBoolean(Object v) throws MessageFormatException {
        if (v instanceof Boolean) {
            return (Boolean) v;
        }
        if (v == null || v instanceof String) {
            return Boolean.valueOf((String) v);
        }
        throw notConvertible(v, "boolean");
    }

    static byte toByte(Object v) throws MessageFormatException {
        if (v instanceof Byte) {
            return (Byte) v;
        }
        if (v == null || v instanceof String) {
            return Byte.valueOf((String) v);
        }
        throw notConvertible(v, "byte");
    }

    static short toShort(Object v) throws MessageFormatException {
        if (v instanceof Short || v instanceof Byte) {
            return ((Number) v).shortValue();
        }
        if (v == null || v instanceof String) {
            return Short.valueOf((String) v);
        }
        throw notConvertible(v, "short");
    }

    static char toChar(Object v) throws MessageFormatException {
        if (v instanceof Character) {
            return (Character) v;
        }
        if (v == null) {
            throw new NullPointerException("cannot read a null value as a char");
        }
        throw notConvertible(v, "char");
    }

    static int toInt(Object v) throws MessageFormatException {
        if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return ((Number) v).intValue();
        }
        if (v == null || v instanceof String) {
            return Integer.valueOf((String) v);
        }
        throw notConvertible(v, "int");
    }

    static long toLong(Object v) throws MessageFormatException {
        if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return ((Number) v).longValue();
        }
        if (v == null || v instanceof String) {
            return Long.valueOf((String) v);
        }
        throw notConvertible(v, "long");
    }

    static float toFloat(Object v) throws MessageFormatException {
        if (v instanceof Float) {
            return (Float) v;
        }
        if (v == null || v instanceof String) {
            return Float.valueOf((String) v);
        }
        throw notConvertible(v, "float");
    }

    static double toDouble(Object v) throws MessageFormatException {
        if (v instanceof Double || v instanceof Float) {
            return ((Number) v).doubleValue();
        }
        if (v == null || v instanceof String) {
            return Double.valueOf((String) v);
        }
        throw notConvertible(v, "double");
    }

    static String toStringValue(Object v) throws MessageFormatException {
        if (v instanceof byte[]) {
            throw notConvertible(v, "String");
        }
        return v == null ? null : v.toString();
    }

    static byte[] toBytes(Object v) throws MessageFormatException {
        if (v == null) {
            return null;
        }
        if (v instanceof byte[]) {
            return ((byte[]) v).clone();
        }
        throw notConvertible(v, "byte[]");
    }

    /** The value as stored, with byte[] copied so callers cannot change the message. */
    static Object toObject(Object v) {
        return v instanceof byte[] ? ((byte[]) v).clone() : v;
    }

    static String typeName(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof byte[]) {
            return "byte[]";
        }
        if (v instanceof Boolean) {
            return "boolean";
        }
        if (v instanceof Character) {
            return "char";
        }
        if (v instanceof String) {
            return "String";
        }
        return v.getClass().getSimpleName().toLowerCase(java.util.Locale.ROOT).replace("integer", "int");
    }

    private static MessageFormatException notConvertible(Object v, String target) {
        return new MessageFormatException("a " + typeName(v) + " value cannot be read as " + target);
    }
}
