package dev.millrace.protocol.selector;

/** AND, OR and NOT over {@link Truth} values, short-circuiting left to right. */
final class Logical {

    private Logical() {
    }

    static final class And extends Expr.Condition {
        private final Expr left;
        private final Expr right;

        And(Expr left, Expr right) {
            super(left.position, left.token);
            this.left = left;
            this.right = right;
        }

        @Override
        int truth(SelectorContext ctx) {
            int l = left.truth(ctx);
            return l == Truth.FALSE ? Truth.FALSE : Truth.and(l, right.truth(ctx));
        }

        @Override
        public String toString() {
            return "(" + left + " AND " + right + ")";
        }
    }

    static final class Or extends Expr.Condition {
        private final Expr left;
        private final Expr right;

        Or(Expr left, Expr right) {
            super(left.position, left.token);
            this.left = left;
            this.right = right;
        }

        @Override
        int truth(SelectorContext ctx) {
            int l = left.truth(ctx);
            return l == Truth.TRUE ? Truth.TRUE : Truth.or(l, right.truth(ctx));
        }

        @Override
        public String toString() {
            return "(" + left + " OR " + right + ")";
        }
    }

    static final class Not extends Expr.Condition {
        private final Expr operand;

        Not(int position, String token, Expr operand) {
            super(position, token);
            this.operand = operand;
        }

        @Override
        int truth(SelectorContext ctx) {
            return Truth.not(operand.truth(ctx));
        }

        @Override
        public String toString() {
            return "(NOT " + operand + ")";
        }
    }
}
