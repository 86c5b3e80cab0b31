package dev.millrace.protocol.selector;

/**
 * A LIKE pattern compiled once (Jakarta Messaging 3.1, section 3.8.1.1): {@code _} matches any one character,
 * {@code %} any sequence (the empty one included), the escape character makes the next {@code _}, {@code %} or
 * escape character stand for itself, and every other character stands for itself. Matching is case-sensitive and by
 * code point ({@code _} matches a supplementary character whole).
 *
 * <p>Patterns of the shapes {@code abc}, {@code abc%}, {@code %abc} and {@code %abc%} match with
 * {@code equals}/{@code startsWith}/{@code endsWith}/{@code contains}; others with a linear scan that backtracks only
 * to the last {@code %} (worst case proportional to pattern length times value length). No regular expressions, no
 * allocation per match. Immutable and thread-safe.
 */
final class LikePattern {

    private static final byte LITERAL = 0;
    private static final byte ONE = 1;
    private static final byte ANY = 2;

    private enum Shape { EQUALS, PREFIX, SUFFIX, CONTAINS, GENERAL }

    private final char[] chars;
    private final byte[] kinds;
    private final Shape shape;
    /** The literal characters, for the four simple shapes. */
    private final String literal;

    private LikePattern(char[] chars, byte[] kinds, Shape shape, String literal) {
        this.chars = chars;
        this.kinds = kinds;
        this.shape = shape;
        this.literal = literal;
    }

    /**
     * @param escape the escape character, or -1 for none
     * @throws IllegalArgumentException naming the problem, if the escape character is followed by anything but
     *                                  {@code _}, {@code %} or itself, or ends the pattern
     */
    static LikePattern compile(String pattern, int escape) {
        char[] chars = new char[pattern.length()];
        byte[] kinds = new byte[pattern.length()];
        int n = 0;
        for (int i = 0; i < pattern.length(); i++) {
            char c = pattern.charAt(i);
            if (c == escape) {
                if (i + 1 >= pattern.length()) {
                    throw new IllegalArgumentException("the pattern ends with the escape character");
                }
                char next = pattern.charAt(++i);
                if (next != '_' && next != '%' && next != escape) {
                    throw new IllegalArgumentException("the escape character may only precede _, % or itself, not '"
                            + next + "'");
                }
                chars[n] = next;
                kinds[n++] = LITERAL;
            } else if (c == '%') {
                if (n == 0 || kinds[n - 1] != ANY) {
                    kinds[n++] = ANY;
                }
            } else {
                chars[n] = c;
                kinds[n++] = c == '_' ? ONE : LITERAL;
            }
        }
        char[] trimmedChars = java.util.Arrays.copyOf(chars, n);
        byte[] trimmedKinds = java.util.Arrays.copyOf(kinds, n);
        return classify(trimmedChars, trimmedKinds);
    }

    private static LikePattern classify(char[] chars, byte[] kinds) {
        int n = kinds.length;
        boolean leading = n > 0 && kinds[0] == ANY;
        boolean trailing = n > (leading ? 1 : 0) && kinds[n - 1] == ANY;
        int from = leading ? 1 : 0;
        int to = trailing ? n - 1 : n;
        StringBuilder literal = new StringBuilder();
        for (int i = from; i < to; i++) {
            if (kinds[i] != LITERAL) {
                return new LikePattern(chars, kinds, Shape.GENERAL, null);
            }
            literal.append(chars[i]);
        }
        Shape shape = leading ? (trailing ? Shape.CONTAINS : Shape.SUFFIX) : (trailing ? Shape.PREFIX : Shape.EQUALS);
        return new LikePattern(chars, kinds, shape, literal.toString());
    }

    boolean matches(String value) {
        switch (shape) {
            case EQUALS:
                return value.equals(literal);
            case PREFIX:
                return value.startsWith(literal);
            case SUFFIX:
                return value.endsWith(literal);
            case CONTAINS:
                return value.contains(literal);
            default:
                return matchesGeneral(value);
        }
    }

    private boolean matchesGeneral(String value) {
        int s = 0;
        int p = 0;
        int starP = -1;
        int starS = 0;
        int n = value.length();
        int m = kinds.length;
        while (s < n) {
            if (p < m && kinds[p] == ONE) {
                s += Character.charCount(value.codePointAt(s));
                p++;
            } else if (p < m && kinds[p] == LITERAL && chars[p] == value.charAt(s)) {
                s++;
                p++;
            } else if (p < m && kinds[p] == ANY) {
                starP = p++;
                starS = s;
            } else if (starP >= 0) {
                p = starP + 1;
                s = ++starS;
            } else {
                return false;
            }
        }
        while (p < m && kinds[p] == ANY) {
            p++;
        }
        return p == m;
    }
}
