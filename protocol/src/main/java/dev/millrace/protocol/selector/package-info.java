/**
 * JMS message selectors (Jakarta Messaging 3.1, section 3.8.1 "Message selection", 3.8.1.1 "Message selector
 * syntax", 3.8.1.2 "Null values", 3.8.1.3 "Special notes"), for both the broker and the JMS provider. This package
 * has no dependency on {@code jakarta.jms}: syntax errors are {@link dev.millrace.protocol.selector.SelectorSyntaxException}
 * (the provider wraps it into {@code InvalidSelectorException}), values come from a
 * {@link dev.millrace.protocol.selector.SelectorContext}.
 *
 * <h2>Use</h2>
 * <pre>
 * Selector selector = Selector.compile(text);            // once, when the consumer or share fetch is set up;
 *                                                        // throws SelectorSyntaxException
 * RecordSelectorContext ctx = new RecordSelectorContext(); // one per thread
 * if (selector.matchesAll() || selector.matches(ctx.reset(headers, key, timestampMs, deliveryCount))) { ... }
 * </pre>
 * The provider, which holds message objects, can instead pass a lambda {@code name -> valueOf(message, name)}.
 *
 * <h2>Decisions where the specification leaves room (or where we chose among its readings)</h2>
 * <ul>
 *   <li><b>Empty selector.</b> {@code null}, {@code ""} and whitespace-only text are no selector (3.8.1.1 says so of
 *       the empty string; blank is treated alike).
 *   <li><b>Exact literals</b> use Java integer literal syntax (3.8.1.1): decimal, hex {@code 0x}, octal leading
 *       {@code 0}, optional {@code L}; the range is {@code long}, whatever the suffix (a selector has no {@code int}
 *       literals). Underscores and binary {@code 0b} are not accepted.
 *   <li><b>Approximate literals</b> use Java decimal floating-point syntax, with {@code F}/{@code D} suffixes; a
 *       value that overflows to infinity or a nonzero value that underflows to zero is a syntax error, as in Java.
 *   <li><b>Header fields.</b> Only JMSDeliveryMode, JMSPriority, JMSMessageID, JMSTimestamp, JMSCorrelationID and
 *       JMSType may be referenced (3.8.1.1). JMSDestination, JMSReplyTo, JMSRedelivered, JMSExpiration and
 *       JMSDeliveryTime are accepted as identifiers (the grammar allows any identifier) but are always NULL; other
 *       names, {@code JMSX*} and {@code JMS_*} included, are properties. JMSCorrelationID set as bytes is NULL.
 *   <li><b>Types.</b> Comparing values of different types is FALSE ("If the comparison of non-like type values is
 *       attempted, the value of the operation is false"), comparing with NULL is UNKNOWN. Strings and booleans
 *       compare only with {@code =} and {@code <>}: ordering them is a syntax error when a literal shows the type,
 *       FALSE otherwise. An identifier whose value is not a boolean is UNKNOWN as a condition.
 *   <li><b>Booleans against numbers or strings.</b> {@code =} or {@code <>} between a side known to be boolean when
 *       the selector is compiled (TRUE, FALSE, a comparison or other condition) and a side known to be a number or a
 *       string (a literal, arithmetic) is a syntax error, e.g. {@code TRUE = 0}, {@code FALSE <> 'x'},
 *       {@code (a > 1) = 1}: such a comparison can never select, and the conformance tests expect
 *       InvalidSelectorException for it. When only the message shows the mismatch ({@code flag = 1} with a boolean
 *       {@code flag}) it is FALSE, as above. A string literal against a number literal ({@code '1' = 1}) stays
 *       FALSE, as the specification says of non-like types.
 *   <li><b>Arithmetic</b> follows Java's binary numeric promotion (3.8.1.1), widened: exact operands compute in
 *       {@code long} (wrapping like Java on overflow), mixed ones in {@code double}. A NULL or non-numeric operand
 *       gives NULL; so does an exact division by zero (Java would throw); an approximate one gives an infinity or
 *       NaN (IEEE 754, as Java).
 *   <li><b>BETWEEN</b> evaluates exactly as the equivalences the specification gives ({@code a >= b AND a <= c};
 *       {@code a < b OR a > c}), so a value that is not a number makes BETWEEN and NOT BETWEEN FALSE.
 *   <li><b>IN</b> is UNKNOWN on NULL (3.8.1.1) and also on a value that is not a String (3.8.1.1: the identifier
 *       "must evaluate to a String or NULL"), so neither IN nor NOT IN selects a number or a boolean; on a String it
 *       is the specification's {@code (x = 'a') OR ...} and its {@code NOT}. IN lists hold string literals only (a
 *       number is a syntax error).
 *   <li><b>LIKE</b> on NULL is UNKNOWN (3.8.1.1), and so is LIKE on a value that is not a String (3.8.1.1: the
 *       identifier "must have a String value"), for LIKE and NOT LIKE alike. An escape character
 *       may only precede {@code _}, {@code %} or itself; anything else, or an escape at the end, is a syntax error
 *       (SQL-92's "invalid escape sequence"). ESCAPE takes exactly one character.
 *   <li><b>IS [NOT] NULL</b> is never UNKNOWN: a property that is not set, or a header field that is null, IS NULL;
 *       any value, whatever its type, IS NOT NULL.
 *   <li><b>Grammar strictness.</b> LIKE, IN and IS NULL take an identifier on the left (3.8.1.1 writes them with
 *       "identifier"); BETWEEN and arithmetic take numbers or identifiers; NULL is no literal outside IS NULL.
 *   <li><b>Keywords</b> are case-insensitive in ASCII only, identifiers case-sensitive (3.8.1.1).
 *   <li><b>SQL comments</b> are not supported (3.8.1.3); {@code --} and {@code /*} are syntax errors rather than two
 *       operators.
 *   <li><b>Untrusted input.</b> The broker compiles selectors sent by any client, so nesting (parentheses, NOT,
 *       signs, arithmetic chains) is limited to 64 levels, a syntax error beyond; AND and OR chains of any length are
 *       flat nodes. Nothing else is limited: the text's length is bounded by the request that carries it.
 * </ul>
 *
 * <h2>Cost</h2>
 * A selector is parsed once into an immutable tree of evaluator nodes, safe to share between threads. Evaluation
 * allocates nothing on comparisons, BETWEEN, IN (up to 8 literals), IS NULL and arithmetic, over
 * {@link dev.millrace.protocol.selector.RecordSelectorContext}; LIKE decodes the String it matches. LIKE patterns are
 * compiled at parse time (no regular expressions).
 */
package dev.millrace.protocol.selector;
