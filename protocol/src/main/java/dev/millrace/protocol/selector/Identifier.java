package dev.millrace.protocol.selector;

/**
 * A header field or property reference; every read goes to the {@link SelectorContext}, except for the header fields
 * a selector may not read ({@link Parser#NON_SELECTABLE_HEADERS}), which are always NULL without asking.
 */
final class Identifier extends Expr {

    final String name;
    private final boolean alwaysNull;

    Identifier(int position, String name, boolean alwaysNull) {
        super(position, name);
        this.name = name;
        this.alwaysNull = alwaysNull;
    }

    @Override
    Kind kind() {
        return Kind.ANY;
    }

    @Override
    ValueType type(SelectorContext ctx) {
        return alwaysNull ? ValueType.NULL : ctx.typeOf(name);
    }

    @Override
    long longValue(SelectorContext ctx) {
        return ctx.longValue(name);
    }

    @Override
    double doubleValue(SelectorContext ctx) {
        return ctx.doubleValue(name);
    }

    @Override
    boolean booleanValue(SelectorContext ctx) {
        return ctx.booleanValue(name);
    }

    @Override
    String stringValue(SelectorContext ctx) {
        return ctx.stringValue(name);
    }

    @Override
    public String toString() {
        return alwaysNull ? name + "{always NULL}" : name;
    }
}
