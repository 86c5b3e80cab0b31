package dev.millrace.protocol.jms;

import java.util.Locale;
import java.util.Set;

/**
 * The rule for JMS property names (the message selector identifier rule of Jakarta Messaging 3.1, section 3.8.1.1):
 * a Java letter ({@link Character#isJavaIdentifierStart}, which includes {@code _} and {@code $}) followed by Java
 * letters or digits, and not one of the selector words {@code NULL TRUE FALSE NOT AND OR BETWEEN LIKE IN IS ESCAPE}.
 * Selector words are case-insensitive, so {@code null} and {@code And} are refused too. Identifier-ignorable
 * characters (such as U+0000) are refused, so every accepted name can be typed into a selector.
 *
 * <p>Stateless and thread-safe.
 */
public final class JmsIdentifiers {

    private static final Set<String> RESERVED = Set.of(
            "NULL", "TRUE", "FALSE", "NOT", "AND", "OR", "BETWEEN", "LIKE", "IN", "IS", "ESCAPE");
    /** The length of the longest selector word: longer names need no upper-cased copy to be checked. */
    private static final int LONGEST_RESERVED = RESERVED.stream().mapToInt(String::length).max().orElse(0);

    private JmsIdentifiers() {
    }

    /** Why {@code name} is not a valid property name, or {@code null} if it is. */
    public static String invalidPropertyNameReason(String name) {
        if (name == null || name.isEmpty()) {
            return "a property name must not be null or empty";
        }
        if (!Character.isJavaIdentifierStart(name.charAt(0))) {
            return "property name '" + name + "' must start with a Java letter, not '" + name.charAt(0) + "'";
        }
        for (int i = 1; i < name.length(); i++) {
            char c = name.charAt(i);
            if (!Character.isJavaIdentifierPart(c) || Character.isIdentifierIgnorable(c)) {
                return "property name '" + name + "' has character U+" + String.format("%04X", (int) c)
                        + " at index " + i + ", which is not a Java letter or digit";
            }
        }
        if (name.length() <= LONGEST_RESERVED && RESERVED.contains(name.toUpperCase(Locale.ROOT))) {
            return "property name '" + name + "' is a reserved message selector word";
        }
        return null;
    }
}
