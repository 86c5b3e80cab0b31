package dev.millrace.protocol.selector;

/**
 * {@code a [NOT] BETWEEN b AND c}, evaluated exactly as the specification's equivalences (Jakarta Messaging 3.1,
 * section 3.8.1.1): {@code a >= b AND a <= c}, and for NOT BETWEEN {@code a < b OR a > c}, with the
 * {@link Comparison} rules and three-valued logic. So a NULL operand gives UNKNOWN unless the other bound already
 * decides ({@code 25 BETWEEN NULL AND 20} is FALSE), and a non-numeric value gives FALSE for both forms.
 */
final class Between extends Expr.Condition {

    private final Expr value;
    private final Expr low;
    private final Expr high;
    private final boolean negated;

    Between(Expr value, Expr low, Expr high, boolean negated) {
        super(value.position, value.token);
        this.value = value;
        this.low = low;
        this.high = high;
        this.negated = negated;
    }

    @Override
    int truth(SelectorContext ctx) {
        if (!negated) {
            int atLeastLow = Comparison.compare(Comparison.GE, value, low, ctx);
            if (atLeastLow == Truth.FALSE) {
                return Truth.FALSE;
            }
            return Truth.and(atLeastLow, Comparison.compare(Comparison.LE, value, high, ctx));
        }
        int belowLow = Comparison.compare(Comparison.LT, value, low, ctx);
        if (belowLow == Truth.TRUE) {
            return Truth.TRUE;
        }
        return Truth.or(belowLow, Comparison.compare(Comparison.GT, value, high, ctx));
    }

    @Override
    public String toString() {
        return "(" + value + (negated ? " NOT BETWEEN " : " BETWEEN ") + low + " AND " + high + ")";
    }
}
