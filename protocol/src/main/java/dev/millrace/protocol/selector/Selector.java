package dev.millrace.protocol.selector;

import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * A compiled JMS message selector (Jakarta Messaging 3.1, section 3.8.1.1). Compile once with {@link #compile}, then
 * test each message with {@link #matches}: a message matches only when the selector evaluates to TRUE (not FALSE, not
 * UNKNOWN).
 *
 * <pre>
 * Selector s = Selector.compile("JMSType = 'car' AND color = 'blue' AND weight > 2500");
 * RecordSelectorContext ctx = new RecordSelectorContext();          // one per thread, reused
 * boolean deliver = s.matches(ctx.reset(record.headers(), record.key(), record.timestamp(), deliveryCount));
 * </pre>
 *
 * <p><b>Language and decisions</b> (details on the package-private node classes):
 * <ul>
 *   <li>Grammar, keywords (case-insensitive), identifiers (case-sensitive), literals: see {@code Parser} and
 *       {@code Lexer}. A null, empty or blank selector is no selector: it {@linkplain #matchesAll() matches all}.
 *   <li>Header fields: JMSDeliveryMode (the strings {@code 'PERSISTENT'}/{@code 'NON_PERSISTENT'}), JMSPriority,
 *       JMSMessageID, JMSTimestamp, JMSCorrelationID, JMSType. The other header fields (JMSDestination, JMSReplyTo,
 *       JMSRedelivered, JMSExpiration, JMSDeliveryTime) are valid identifiers whose value is always NULL: the
 *       specification restricts header references to the six, and the context is never asked for the others. Any
 *       other identifier, whether it starts with {@code JMSX}, {@code JMS_} or neither, is a property; an unset
 *       property is NULL.
 *   <li>Three-valued logic; comparisons of values of different types are FALSE, with NULL they are UNKNOWN
 *       ({@code Comparison}); arithmetic in long or double, NULL when an operand is NULL or not a number or on an
 *       exact division by zero ({@code Arithmetic}); BETWEEN and IN evaluate as the specification's equivalences;
 *       LIKE on a value that is not a String is UNKNOWN.
 * </ul>
 *
 * <p>Instances are immutable and thread-safe; evaluation allocates nothing unless the context does (the record
 * context does not, except to decode a String for LIKE and long IN lists).
 */
public final class Selector {

    private final String text;
    private final Expr root;
    private final Set<String> identifiers;

    private Selector(String text, Expr root, Set<String> identifiers) {
        this.text = text;
        this.root = root;
        this.identifiers = Collections.unmodifiableSet(identifiers);
    }

    /**
     * Compiles {@code text}; {@code null}, empty or blank means no selector.
     *
     * @throws SelectorSyntaxException if {@code text} is not a valid selector
     */
    public static Selector compile(String text) {
        if (text == null || text.isBlank()) {
            return new Selector(text, null, Set.of());
        }
        Set<String> identifiers = new LinkedHashSet<>();
        Expr root = Parser.parse(text, identifiers);
        return new Selector(text, root, identifiers);
    }

    /** Whether the selector evaluates to TRUE for the message {@code ctx} describes. */
    public boolean matches(SelectorContext ctx) {
        return root == null || root.truth(ctx) == Truth.TRUE;
    }

    /**
     * The selector's value for the message: {@link Boolean#TRUE}, {@link Boolean#FALSE}, or {@code null} for
     * UNKNOWN. No selector evaluates to TRUE.
     */
    public Boolean evaluate(SelectorContext ctx) {
        return root == null ? Boolean.TRUE : Truth.toBoolean(root.truth(ctx));
    }

    /** Whether this is no selector at all (null, empty or blank text), so every message matches without looking. */
    public boolean matchesAll() {
        return root == null;
    }

    /** The text as given to {@link #compile}. */
    public String text() {
        return text;
    }

    /** The identifiers the selector reads, in order of first appearance. */
    public Set<String> identifiers() {
        return identifiers;
    }

    /** The text and the parsed tree, fully parenthesized. */
    @Override
    public String toString() {
        return root == null ? "Selector[matches all]" : "Selector[" + text + " => " + root + "]";
    }
}
