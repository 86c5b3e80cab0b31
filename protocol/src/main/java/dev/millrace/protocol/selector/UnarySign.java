package dev.millrace.protocol.selector;

/**
 * Unary {@code +} or {@code -} on a non-literal operand (a sign before a literal is folded into it by the parser).
 * Like the binary operators, it makes a non-numeric operand NULL: {@code +color} is NULL for a String property.
 */
final class UnarySign extends Expr {

    private final boolean negative;
    private final Expr operand;

    UnarySign(int position, String token, boolean negative, Expr operand) {
        super(position, token);
        this.negative = negative;
        this.operand = operand;
    }

    @Override
    Kind kind() {
        return Kind.NUMERIC;
    }

    @Override
    ValueType type(SelectorContext ctx) {
        ValueType t = operand.type(ctx);
        return t.isNumeric() ? t : ValueType.NULL;
    }

    @Override
    long longValue(SelectorContext ctx) {
        long v = operand.longValue(ctx);
        return negative ? -v : v;
    }

    @Override
    double doubleValue(SelectorContext ctx) {
        double v = operand.doubleValue(ctx);
        return negative ? -v : v;
    }

    @Override
    public String toString() {
        return (negative ? "-" : "+") + operand;
    }
}
