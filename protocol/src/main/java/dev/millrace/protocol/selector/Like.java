package dev.millrace.protocol.selector;

/**
 * {@code identifier [NOT] LIKE 'pattern' [ESCAPE 'c']}: UNKNOWN when the identifier is NULL (as the specification
 * says) and also when its value is not a String (a LIKE on a number has no answer); otherwise the
 * {@link LikePattern} match, or its negation. The value is read with {@link SelectorContext#stringValue}, which for a
 * record context decodes the property (the one common path that allocates).
 */
final class Like extends Expr.Condition {

    private final Identifier identifier;
    private final String source;
    private final LikePattern pattern;
    private final boolean negated;

    Like(Identifier identifier, String source, LikePattern pattern, boolean negated) {
        super(identifier.position, identifier.token);
        this.identifier = identifier;
        this.source = source;
        this.pattern = pattern;
        this.negated = negated;
    }

    @Override
    int truth(SelectorContext ctx) {
        if (identifier.type(ctx) != ValueType.STRING) {
            return Truth.UNKNOWN;
        }
        return Truth.of(pattern.matches(ctx.stringValue(identifier.name)) != negated);
    }

    @Override
    public String toString() {
        return "(" + identifier + (negated ? " NOT LIKE " : " LIKE ") + source + ")";
    }
}
