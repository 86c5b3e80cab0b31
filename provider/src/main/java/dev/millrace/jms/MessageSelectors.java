package dev.millrace.jms;

import dev.millrace.protocol.selector.Selector;
import dev.millrace.protocol.selector.SelectorSyntaxException;
import jakarta.jms.InvalidSelectorException;

/**
 * Message selectors at the API boundary: a consumer's selector is compiled when the consumer is created, so a syntax
 * error surfaces there as {@link InvalidSelectorException} (its runtime counterpart in the simplified API), with the
 * position and the offending token in the message. A null, empty or blank selector is no selector. Stateless.
 */
final class MessageSelectors {

    private MessageSelectors() {
    }

    /** {@code text}, or null when it is null or blank (no selector). */
    static String normalize(String text) {
        return text == null || text.isBlank() ? null : text;
    }

    /**
     * The compiled selector, null for no selector.
     *
     * @throws InvalidSelectorException naming the position and token of the error
     */
    static Selector compile(String text) throws InvalidSelectorException {
        String selector = normalize(text);
        if (selector == null) {
            return null;
        }
        try {
            return Selector.compile(selector);
        } catch (SelectorSyntaxException e) {
            InvalidSelectorException invalid = new InvalidSelectorException("invalid message selector: "
                    + e.getMessage() + " [position " + e.position() + ", token " + e.token() + "]");
            invalid.initCause(e);
            throw invalid;
        }
    }
}
