package dev.millrace.protocol.selector;

import java.util.List;
import java.util.stream.Collectors;

/**
 * AND, OR and NOT over {@link Truth} values, short-circuiting left to right. AND and OR hold a whole chain
 * ({@code a AND b AND c}) as one node with a loop, so a generated selector with hundreds of ORs does not make a tree
 * hundreds of levels deep (the three-valued AND and OR are associative, so the grouping does not change the result).
 */
final class Logical {

    private Logical() {
    }

    static final class And extends Expr.Condition {
        private final Expr[] operands;

        And(List<Expr> operands) {
            super(operands.get(0).position, operands.get(0).token);
            this.operands = operands.toArray(new Expr[0]);
        }

        @Override
        int truth(SelectorContext ctx) {
            int result = Truth.TRUE;
            for (Expr operand : operands) {
                int t = operand.truth(ctx);
                if (t == Truth.FALSE) {
                    return Truth.FALSE;
                }
                result = Truth.and(result, t);
            }
            return result;
        }

        @Override
        public String toString() {
            return join(operands, " AND ");
        }
    }

    static final class Or extends Expr.Condition {
        private final Expr[] operands;

        Or(List<Expr> operands) {
            super(operands.get(0).position, operands.get(0).token);
            this.operands = operands.toArray(new Expr[0]);
        }

        @Override
        int truth(SelectorContext ctx) {
            int result = Truth.FALSE;
            for (Expr operand : operands) {
                int t = operand.truth(ctx);
                if (t == Truth.TRUE) {
                    return Truth.TRUE;
                }
                result = Truth.or(result, t);
            }
            return result;
        }

        @Override
        public String toString() {
            return join(operands, " OR ");
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

    private static String join(Expr[] operands, String operator) {
        return java.util.Arrays.stream(operands).map(Object::toString)
                .collect(Collectors.joining(operator, "(", ")"));
    }
}
