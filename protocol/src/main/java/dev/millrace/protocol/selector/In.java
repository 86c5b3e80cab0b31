package dev.millrace.protocol.selector;

import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * {@code identifier [NOT] IN ('a', 'b', ...)} (Jakarta Messaging 3.1, section 3.8.1.1): UNKNOWN when the identifier
 * is NULL, and also when its value is not a String (the specification: "identifier must evaluate to a String or
 * NULL"; a number has no answer, like LIKE on a number), so neither IN nor NOT IN selects it; otherwise the
 * specification's equivalence {@code (id = 'a') OR (id = 'b') ...}, or its NOT.
 *
 * <p>Up to {@value #LINEAR_MAX} literals are compared one by one through {@link SelectorContext#stringEquals}
 * (no decoding for a record context); longer lists decode the value once and look it up in a hash set.
 */
final class In extends Expr.Condition {

    static final int LINEAR_MAX = 8;

    private final Identifier identifier;
    private final String[] literals;
    private final byte[][] literalsUtf8;
    private final Set<String> set;
    private final boolean negated;

    In(Identifier identifier, List<String> literals, boolean negated) {
        super(identifier.position, identifier.token);
        this.identifier = identifier;
        this.literals = literals.toArray(new String[0]);
        this.literalsUtf8 = new byte[this.literals.length][];
        for (int i = 0; i < this.literals.length; i++) {
            literalsUtf8[i] = StringEquality.utf8(this.literals[i]);
        }
        this.set = this.literals.length > LINEAR_MAX ? new HashSet<>(literals) : null;
        this.negated = negated;
    }

    @Override
    int truth(SelectorContext ctx) {
        if (identifier.type(ctx) != ValueType.STRING) {
            return Truth.UNKNOWN;
        }
        return Truth.of(contains(ctx) != negated);
    }

    private boolean contains(SelectorContext ctx) {
        if (set != null) {
            return set.contains(ctx.stringValue(identifier.name));
        }
        for (int i = 0; i < literals.length; i++) {
            if (ctx.stringEquals(identifier.name, literals[i], literalsUtf8[i])) {
                return true;
            }
        }
        return false;
    }

    @Override
    public String toString() {
        return "(" + identifier + (negated ? " NOT IN (" : " IN (")
                + Arrays.stream(literals).map(s -> "'" + s.replace("'", "''") + "'").collect(Collectors.joining(", "))
                + "))";
    }
}
