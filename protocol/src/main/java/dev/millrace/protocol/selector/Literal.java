package dev.millrace.protocol.selector;

/** A literal, its value converted once at compile time. */
final class Literal extends Expr {

    private final ValueType type;
    private final long longValue;
    private final double doubleValue;
    private final boolean booleanValue;
    private final String stringValue;

    private Literal(int position, String token, ValueType type, long l, double d, boolean b, String s) {
        super(position, token);
        this.type = type;
        this.longValue = l;
        this.doubleValue = d;
        this.booleanValue = b;
        this.stringValue = s;
    }

    static Literal exact(int position, String token, long value) {
        return new Literal(position, token, ValueType.EXACT, value, 0, false, null);
    }

    static Literal approximate(int position, String token, double value) {
        return new Literal(position, token, ValueType.APPROXIMATE, 0, value, false, null);
    }

    static Literal bool(int position, String token, boolean value) {
        return new Literal(position, token, ValueType.BOOLEAN, 0, 0, value, null);
    }

    static Literal string(int position, String token, String value) {
        return new Literal(position, token, ValueType.STRING, 0, 0, false, value);
    }

    @Override
    Kind kind() {
        switch (type) {
            case BOOLEAN:
                return Kind.CONDITION;
            case STRING:
                return Kind.STRING;
            default:
                return Kind.NUMERIC;
        }
    }

    @Override
    ValueType type(SelectorContext ctx) {
        return type;
    }

    @Override
    long longValue(SelectorContext ctx) {
        return longValue;
    }

    @Override
    double doubleValue(SelectorContext ctx) {
        return doubleValue;
    }

    @Override
    boolean booleanValue(SelectorContext ctx) {
        return booleanValue;
    }

    @Override
    String stringValue(SelectorContext ctx) {
        return stringValue;
    }

    String string() {
        return stringValue;
    }

    @Override
    public String toString() {
        switch (type) {
            case EXACT:
                return Long.toString(longValue);
            case APPROXIMATE:
                return Double.toString(doubleValue);
            case BOOLEAN:
                return booleanValue ? "TRUE" : "FALSE";
            case STRING:
                return "'" + stringValue.replace("'", "''") + "'";
            default:
                return token;
        }
    }
}
