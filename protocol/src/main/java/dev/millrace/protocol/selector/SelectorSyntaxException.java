package dev.millrace.protocol.selector;

/**
 * A message selector that is not valid: a syntax error, or an expression the grammar of Jakarta Messaging 3.1
 * (section 3.8.1.1) rules out, such as a string literal in arithmetic or {@code IN} with a number. Carries the
 * 0-based character position and the text of the offending token, so the message reads, for example:
 *
 * <pre>
 * Unexpected 'AND' at position 14 in selector: color = 'red' AND AND size > 2 (expected a value)
 * </pre>
 *
 * <p>The JMS provider turns it into {@code jakarta.jms.InvalidSelectorException} (this module does not depend on
 * {@code jakarta.jms}); the broker answers with an error code.
 */
public class SelectorSyntaxException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    /** The {@link #token()} of an error found at the end of the selector. */
    public static final String END = "end of selector";

    private final String selector;
    private final int position;
    private final String token;

    /**
     * @param problem  what is wrong, starting with a capital letter, e.g. {@code "Unexpected 'AND'"}
     * @param hint     what would have been valid there, e.g. {@code "expected a value"}, or {@code null}
     */
    SelectorSyntaxException(String selector, int position, String token, String problem, String hint) {
        super(problem + " at position " + position + " in selector: " + selector
                + (hint == null ? "" : " (" + hint + ")"));
        this.selector = selector;
        this.position = position;
        this.token = token;
    }

    /** The selector text as given. */
    public String selector() {
        return selector;
    }

    /** 0-based index of the offending token's first character in {@link #selector()}. */
    public int position() {
        return position;
    }

    /** The offending token as written (a string literal with its quotes), or {@link #END}. */
    public String token() {
        return token;
    }
}
