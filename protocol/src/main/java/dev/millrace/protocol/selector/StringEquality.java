package dev.millrace.protocol.selector;

import java.nio.charset.StandardCharsets;

/**
 * {@code identifier = 'literal'} and {@code identifier <> 'literal'} (either order): the same rules as
 * {@link Comparison}, but the context compares the value with the literal itself
 * ({@link SelectorContext#stringEquals}), so a context holding UTF-8 bytes compares bytes without decoding.
 */
final class StringEquality extends Expr.Condition {

    private final Identifier identifier;
    private final String literal;
    private final byte[] literalUtf8;
    private final boolean equals;

    StringEquality(Identifier identifier, String literal, boolean equals, int position, String token) {
        super(position, token);
        this.identifier = identifier;
        this.literal = literal;
        this.literalUtf8 = utf8(literal);
        this.equals = equals;
    }

    /** The UTF-8 form of {@code s}, or null if it has an unpaired surrogate (which UTF-8 cannot hold). */
    static byte[] utf8(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return null;
            }
        }
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    int truth(SelectorContext ctx) {
        ValueType t = identifier.type(ctx);
        if (t == ValueType.NULL) {
            return Truth.UNKNOWN;
        }
        if (t != ValueType.STRING) {
            return Truth.FALSE;
        }
        return Truth.of(ctx.stringEquals(identifier.name, literal, literalUtf8) == equals);
    }

    @Override
    public String toString() {
        return "(" + identifier + (equals ? " = '" : " <> '") + literal.replace("'", "''") + "')";
    }
}
