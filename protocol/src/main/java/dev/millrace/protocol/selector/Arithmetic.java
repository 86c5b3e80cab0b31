package dev.millrace.protocol.selector;

/**
 * Binary {@code + - * /} with Java's binary numeric promotion, widened: two exact operands compute in {@code long}
 * (wrapping on overflow like Java; a selector has no {@code int} arithmetic, so {@code 2147483647 + 1} is
 * {@code 2147483648}), otherwise both widen to {@code double} (IEEE 754: {@code 1.0 / 0} is infinity).
 *
 * <p>An operand that is NULL, or not a number (a string or boolean property), makes the result NULL, so a
 * comparison with it is UNKNOWN. So does an exact division by zero, which Java would throw for.
 */
final class Arithmetic extends Expr {

    static final char PLUS = '+';
    static final char MINUS = '-';
    static final char TIMES = '*';
    static final char DIVIDE = '/';

    private final char op;
    private final Expr left;
    private final Expr right;

    Arithmetic(char op, Expr left, Expr right) {
        super(left.position, left.token);
        this.op = op;
        this.left = left;
        this.right = right;
    }

    @Override
    Kind kind() {
        return Kind.NUMERIC;
    }

    @Override
    ValueType type(SelectorContext ctx) {
        ValueType l = left.type(ctx);
        if (!l.isNumeric()) {
            return ValueType.NULL;
        }
        ValueType r = right.type(ctx);
        if (!r.isNumeric()) {
            return ValueType.NULL;
        }
        if (l == ValueType.EXACT && r == ValueType.EXACT) {
            return op == DIVIDE && right.longValue(ctx) == 0 ? ValueType.NULL : ValueType.EXACT;
        }
        return ValueType.APPROXIMATE;
    }

    @Override
    long longValue(SelectorContext ctx) {
        long a = left.longValue(ctx);
        long b = right.longValue(ctx);
        switch (op) {
            case PLUS:
                return a + b;
            case MINUS:
                return a - b;
            case TIMES:
                return a * b;
            default:
                return b == 0 ? 0 : a / b;
        }
    }

    @Override
    double doubleValue(SelectorContext ctx) {
        double a = left.promotedDouble(left.type(ctx), ctx);
        double b = right.promotedDouble(right.type(ctx), ctx);
        switch (op) {
            case PLUS:
                return a + b;
            case MINUS:
                return a - b;
            case TIMES:
                return a * b;
            default:
                return a / b;
        }
    }

    @Override
    public String toString() {
        return "(" + left + " " + op + " " + right + ")";
    }
}
