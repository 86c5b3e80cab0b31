package dev.millrace.protocol.selector;

/** {@code identifier IS [NOT] NULL}: never UNKNOWN. JMSDeliveryMode and JMSPriority are never NULL. */
final class IsNull extends Expr.Condition {

    private final Identifier identifier;
    private final boolean negated;

    IsNull(Identifier identifier, boolean negated) {
        super(identifier.position, identifier.token);
        this.identifier = identifier;
        this.negated = negated;
    }

    @Override
    int truth(SelectorContext ctx) {
        return Truth.of((identifier.type(ctx) == ValueType.NULL) != negated);
    }

    @Override
    public String toString() {
        return "(" + identifier + (negated ? " IS NOT NULL)" : " IS NULL)");
    }
}
