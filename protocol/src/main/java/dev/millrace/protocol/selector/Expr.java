package dev.millrace.protocol.selector;

/**
 * A node of a compiled selector. Nodes are immutable, so a compiled tree is safe to evaluate from many threads at
 * once (each with its own {@link SelectorContext}).
 *
 * <p>Evaluation avoids allocation by returning primitives: {@link #truth} for conditions, and for values first
 * {@link #type} and then the one accessor that matches it. A subtree may therefore be evaluated more than once per
 * message (an arithmetic node asks its operands' types, then their values), which costs little for the small trees
 * selectors make and keeps every path free of boxing.
 */
abstract class Expr {

    /** What the parser knows about a node's value before any message is seen. */
    enum Kind {
        /** A comparison, logical operator or TRUE/FALSE: a truth value. */
        CONDITION,
        /** A numeric literal or arithmetic. */
        NUMERIC,
        STRING,
        /** An identifier: any type at run time. */
        ANY
    }

    /** Where the node's first token starts, and that token, for error messages. */
    final int position;
    final String token;
    /** Levels of the subtree this node roots, set by the parser to bound the tree (see {@code Parser.nested}). */
    int height = 1;

    Expr(int position, String token) {
        this.position = position;
        this.token = token;
    }

    abstract Kind kind();

    /** The value's type for this message. */
    abstract ValueType type(SelectorContext ctx);

    /** Only after {@link #type} answered {@link ValueType#EXACT}. */
    long longValue(SelectorContext ctx) {
        throw new IllegalStateException("not an exact numeric: " + this);
    }

    /** Only after {@link #type} answered {@link ValueType#APPROXIMATE}. */
    double doubleValue(SelectorContext ctx) {
        throw new IllegalStateException("not an approximate numeric: " + this);
    }

    /** Only after {@link #type} answered {@link ValueType#BOOLEAN}. */
    boolean booleanValue(SelectorContext ctx) {
        throw new IllegalStateException("not a boolean: " + this);
    }

    /** Only after {@link #type} answered {@link ValueType#STRING}. */
    String stringValue(SelectorContext ctx) {
        throw new IllegalStateException("not a string: " + this);
    }

    /**
     * This node as a condition: a boolean value is TRUE or FALSE, anything else (NULL, a number, a string) is
     * UNKNOWN. Condition nodes override this with their own logic.
     */
    int truth(SelectorContext ctx) {
        if (type(ctx) != ValueType.BOOLEAN) {
            return Truth.UNKNOWN;
        }
        return Truth.of(booleanValue(ctx));
    }

    /** The value as a double, Java's widening of a long included; only when {@code type} is numeric. */
    final double promotedDouble(ValueType type, SelectorContext ctx) {
        return type == ValueType.EXACT ? (double) longValue(ctx) : doubleValue(ctx);
    }

    /** A node whose value is a truth value: its type is BOOLEAN, or NULL when UNKNOWN. */
    abstract static class Condition extends Expr {

        Condition(int position, String token) {
            super(position, token);
        }

        @Override
        final Kind kind() {
            return Kind.CONDITION;
        }

        @Override
        abstract int truth(SelectorContext ctx);

        @Override
        final ValueType type(SelectorContext ctx) {
            return truth(ctx) == Truth.UNKNOWN ? ValueType.NULL : ValueType.BOOLEAN;
        }

        @Override
        final boolean booleanValue(SelectorContext ctx) {
            return truth(ctx) == Truth.TRUE;
        }
    }
}
