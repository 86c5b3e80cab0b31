package dev.millrace.jms;

import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The redelivery and expiry policy of each destination: the connection factory's defaults ({@code maxDeliveries},
 * {@code redeliveryDelayMs}, {@code maxRedeliveryDelayMs}, {@code deadLetterQueuePattern},
 * {@code expiryQueuePattern}), overridden per destination by the factory option {@code destinationPolicies}:
 *
 * <pre>
 *   destinationPolicies = entry (';' entry)*
 *   entry               = name-or-prefix ':' key '=' value (',' key '=' value)*
 *   name-or-prefix      = a destination name, or a prefix followed by '*'
 *   key                 = maxDeliveries | redeliveryDelayMs | maxRedeliveryDelayMs | deadLetterQueue | expiryQueue
 * </pre>
 *
 * e.g. {@code orders:maxDeliveries=3,deadLetterQueue=orders.poison;audit.*:expiryQueue=audit.expired}. An exact name
 * wins over prefixes, a longer prefix over a shorter one. {@code deadLetterQueue} and {@code expiryQueue} name a
 * queue (an empty value: none); without them the patterns apply, where {@code {destination}} stands for the
 * destination's name. Destination names cannot contain {@code : ; , =} (Kafka topic names are
 * {@code [a-zA-Z0-9._-]}), so the separators are unambiguous.
 *
 * <p>A destination that is itself a dead-letter or expiry queue by the patterns (with the default pattern, a name
 * ending in {@code .DLQ}) gets neither a dead-letter nor an expiry queue of its own, unless an entry names one.
 *
 * <p>Immutable and thread-safe.
 */
public final class DestinationPolicies implements Serializable {

    private static final long serialVersionUID = 1L;

    /** The placeholder of the queue name patterns. */
    public static final String PLACEHOLDER = "{destination}";
    /** Kafka carries delivery counts as int16. */
    public static final int MAX_DELIVERIES_LIMIT = Short.MAX_VALUE;
    private static final Set<String> KEYS = Set.of("maxDeliveries", "redeliveryDelayMs", "maxRedeliveryDelayMs",
            "deadLetterQueue", "expiryQueue");

    /**
     * What applies to one destination. {@code deadLetterQueue} and {@code expiryQueue} are null when there is none.
     */
    public record Policy(int maxDeliveries, long redeliveryDelayMs, long maxRedeliveryDelayMs, String deadLetterQueue,
                         String expiryQueue) implements Serializable {
    }

    private final int maxDeliveries;
    private final long redeliveryDelayMs;
    private final long maxRedeliveryDelayMs;
    private final String deadLetterQueuePattern;
    private final String expiryQueuePattern;
    private final Map<String, Map<String, String>> entries;

    /**
     * @throws IllegalArgumentException naming the option, for a value out of range or a malformed
     *                                  {@code destinationPolicies}
     */
    public DestinationPolicies(int maxDeliveries, long redeliveryDelayMs, long maxRedeliveryDelayMs,
                               String deadLetterQueuePattern, String expiryQueuePattern, String destinationPolicies) {
        this.maxDeliveries = maxDeliveries;
        this.redeliveryDelayMs = redeliveryDelayMs;
        this.maxRedeliveryDelayMs = maxRedeliveryDelayMs;
        this.deadLetterQueuePattern = checkPattern("deadLetterQueuePattern", deadLetterQueuePattern);
        this.expiryQueuePattern = checkPattern("expiryQueuePattern", expiryQueuePattern);
        this.entries = parse(destinationPolicies);
        check("", maxDeliveries, redeliveryDelayMs, maxRedeliveryDelayMs);
        for (String name : entries.keySet()) {
            policyFor(name); // validates the entry against the defaults
        }
    }

    /** Checks the syntax of a {@code destinationPolicies} value, not its values against the defaults. */
    static void checkSyntax(String destinationPolicies) {
        parse(destinationPolicies);
    }

    /** The policy of the destination {@code name}. */
    public Policy policyFor(String name) {
        Map<String, String> entry = entryFor(name);
        int max = entry.containsKey("maxDeliveries") ? parseInt(name, "maxDeliveries", entry) : maxDeliveries;
        long delay = entry.containsKey("redeliveryDelayMs") ? parseLong(name, "redeliveryDelayMs", entry)
                : redeliveryDelayMs;
        long maxDelay = entry.containsKey("maxRedeliveryDelayMs") ? parseLong(name, "maxRedeliveryDelayMs", entry)
                : maxRedeliveryDelayMs;
        check("destinationPolicies entry " + name + ": ", max, delay, maxDelay);
        boolean special = isMadeBy(deadLetterQueuePattern, name) || isMadeBy(expiryQueuePattern, name);
        String deadLetter = entry.containsKey("deadLetterQueue") ? entry.get("deadLetterQueue")
                : special ? "" : apply(deadLetterQueuePattern, name);
        String expiry = entry.containsKey("expiryQueue") ? entry.get("expiryQueue")
                : special ? "" : apply(expiryQueuePattern, name);
        return new Policy(max, delay, maxDelay, emptyToNull(deadLetter, name), emptyToNull(expiry, name));
    }

    private Map<String, String> entryFor(String name) {
        Map<String, String> exact = entries.get(name);
        if (exact != null) {
            return exact;
        }
        String best = null;
        for (String key : entries.keySet()) {
            if (key.endsWith("*") && name.startsWith(key.substring(0, key.length() - 1))
                    && (best == null || key.length() > best.length())) {
                best = key;
            }
        }
        return best == null ? Map.of() : entries.get(best);
    }

    /** Whether {@code name} is what {@code pattern} makes of some other name. */
    private static boolean isMadeBy(String pattern, String name) {
        if (pattern.isEmpty()) {
            return false;
        }
        int at = pattern.indexOf(PLACEHOLDER);
        String prefix = pattern.substring(0, at);
        String suffix = pattern.substring(at + PLACEHOLDER.length());
        return name.length() > prefix.length() + suffix.length() && name.startsWith(prefix) && name.endsWith(suffix);
    }

    private static String apply(String pattern, String name) {
        return pattern.isEmpty() ? "" : pattern.replace(PLACEHOLDER, name);
    }

    /** Null for none; a queue is never its own dead-letter or expiry queue. */
    private static String emptyToNull(String queue, String name) {
        return queue == null || queue.isEmpty() || queue.equals(name) ? null : queue;
    }

    private static String checkPattern(String option, String pattern) {
        String p = pattern == null ? "" : pattern.trim();
        if (!p.isEmpty() && p.indexOf(PLACEHOLDER) != p.lastIndexOf(PLACEHOLDER) || !p.isEmpty()
                && !p.contains(PLACEHOLDER)) {
            throw new IllegalArgumentException(option + " must contain " + PLACEHOLDER + " exactly once (or be "
                    + "empty for none), not '" + pattern + "'");
        }
        return p;
    }

    private static void check(String where, int max, long delay, long maxDelay) {
        if (max < 1 || max > MAX_DELIVERIES_LIMIT) {
            throw new IllegalArgumentException(where + "maxDeliveries must be 1.." + MAX_DELIVERIES_LIMIT + ", not "
                    + max);
        }
        if (delay < 0) {
            throw new IllegalArgumentException(where + "redeliveryDelayMs must be at least 0, not " + delay);
        }
        if (maxDelay < delay) {
            throw new IllegalArgumentException(where + "maxRedeliveryDelayMs (" + maxDelay + ") must be at least "
                    + "redeliveryDelayMs (" + delay + ")");
        }
    }

    private static Map<String, Map<String, String>> parse(String spec) {
        Map<String, Map<String, String>> out = new LinkedHashMap<>();
        if (spec == null || spec.isBlank()) {
            return out;
        }
        for (String entry : spec.split(";")) {
            if (entry.isBlank()) {
                continue;
            }
            int colon = entry.indexOf(':');
            String name = colon < 0 ? "" : entry.substring(0, colon).trim();
            if (name.isEmpty() || name.equals("*")) {
                throw new IllegalArgumentException("destinationPolicies entry '" + entry.trim() + "' must be "
                        + "name:key=value[,key=value...] with a destination name or prefix*");
            }
            Map<String, String> settings = new LinkedHashMap<>();
            for (String pair : entry.substring(colon + 1).split(",")) {
                int eq = pair.indexOf('=');
                String key = eq < 0 ? pair.trim() : pair.substring(0, eq).trim();
                if (eq < 0 || !KEYS.contains(key)) {
                    throw new IllegalArgumentException("destinationPolicies entry " + name + ": '" + pair.trim()
                            + "' is not key=value with a key of " + KEYS);
                }
                settings.put(key, pair.substring(eq + 1).trim());
            }
            if (out.put(name, Map.copyOf(settings)) != null) {
                throw new IllegalArgumentException("destinationPolicies names " + name + " twice");
            }
        }
        return out;
    }

    private static int parseInt(String name, String key, Map<String, String> entry) {
        long value = parseLong(name, key, entry);
        return (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, value));
    }

    private static long parseLong(String name, String key, Map<String, String> entry) {
        try {
            return Long.parseLong(entry.get(key));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("destinationPolicies entry " + name + ": " + key + " must be a "
                    + "whole number, not '" + entry.get(key) + "'");
        }
    }
}
