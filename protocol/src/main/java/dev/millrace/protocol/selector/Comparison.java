package dev.millrace.protocol.selector;

/**
 * {@code = <> < > <= >=} (Jakarta Messaging 3.1, section 3.8.1.1):
 * <ul>
 *   <li>NULL on either side: UNKNOWN.
 *   <li>Two numbers: compared after Java's binary numeric promotion (two exact numerics as {@code long}, otherwise
 *       as {@code double}, where NaN is unequal to everything, itself included, as with Java's operators).
 *   <li>Two strings, or two booleans: only {@code =} and {@code <>}; equal when they hold the same characters.
 *       Ordering them is FALSE (the parser already refuses it when a side is a literal).
 *   <li>Anything else, i.e. values of different types ("non-like types"): FALSE, as the specification says. So
 *       {@code NumberOfOrders > 1} is FALSE when that property is the String {@code "2"}; the conversions of the
 *       property getters do not apply.
 * </ul>
 */
final class Comparison extends Expr.Condition {

    static final int EQ = 0;
    static final int NE = 1;
    static final int LT = 2;
    static final int GT = 3;
    static final int LE = 4;
    static final int GE = 5;
    private static final String[] SYMBOLS = {"=", "<>", "<", ">", "<=", ">="};

    private final int op;
    private final Expr left;
    private final Expr right;

    Comparison(int op, Expr left, Expr right) {
        super(left.position, left.token);
        this.op = op;
        this.left = left;
        this.right = right;
    }

    static String symbol(int op) {
        return SYMBOLS[op];
    }

    @Override
    int truth(SelectorContext ctx) {
        return compare(op, left, right, ctx);
    }

    static int compare(int op, Expr left, Expr right, SelectorContext ctx) {
        ValueType l = left.type(ctx);
        if (l == ValueType.NULL) {
            return Truth.UNKNOWN;
        }
        ValueType r = right.type(ctx);
        if (r == ValueType.NULL) {
            return Truth.UNKNOWN;
        }
        if (l.isNumeric() && r.isNumeric()) {
            if (l == ValueType.EXACT && r == ValueType.EXACT) {
                return Truth.of(compareLongs(op, left.longValue(ctx), right.longValue(ctx)));
            }
            return Truth.of(compareDoubles(op, left.promotedDouble(l, ctx), right.promotedDouble(r, ctx)));
        }
        if (l != r || l == ValueType.OTHER || (op != EQ && op != NE)) {
            return Truth.FALSE;
        }
        boolean equal = l == ValueType.STRING
                ? left.stringValue(ctx).equals(right.stringValue(ctx))
                : left.booleanValue(ctx) == right.booleanValue(ctx);
        return Truth.of(equal == (op == EQ));
    }

    private static boolean compareLongs(int op, long a, long b) {
        switch (op) {
            case EQ: return a == b;
            case NE: return a != b;
            case LT: return a < b;
            case GT: return a > b;
            case LE: return a <= b;
            default: return a >= b;
        }
    }

    private static boolean compareDoubles(int op, double a, double b) {
        switch (op) {
            case EQ: return a == b;
            case NE: return a != b;
            case LT: return a < b;
            case GT: return a > b;
            case LE: return a <= b;
            default: return a >= b;
        }
    }

    @Override
    public String toString() {
        return "(" + left + " " + SYMBOLS[op] + " " + right + ")";
    }
}
