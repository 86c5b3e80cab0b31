package dev.millrace.protocol.selector;

import java.util.Optional;

/**
 * Millrace protocol extension "member selector": a share-group member carries a JMS message selector to the broker in
 * the {@code RackId} field of its ShareGroupHeartbeat, so that the stock {@code KafkaShareConsumer} (which sends its
 * {@code client.rack} config there and lets no other field through) can ask for selective acquisition.
 *
 * <pre>
 *   ShareGroupHeartbeat v1+  RackId (COMPACT_NULLABLE_STRING, UTF-8)
 *
 *   +-------------------------+----------------------------------------------+
 *   | "millrace.selector:"    | selector text, as written by the application |
 *   | PREFIX (18 bytes ASCII) | (JMS 3.1 3.8.1.1 syntax; may be empty)       |
 *   +-------------------------+----------------------------------------------+
 *
 *   e.g.  client.rack = millrace.selector:JMSType = 'car' AND weight &gt; 2500
 *
 *   +--------------------------------------+----------------------------------+
 *   | "millrace.subscription.selector:"    | selector text                    |
 *   | SUBSCRIPTION_PREFIX (31 bytes ASCII) |                                  |
 *   +--------------------------------------+----------------------------------+
 * </pre>
 *
 * <ul>
 *   <li>A RackId that does not start with {@link #PREFIX} (or is null) is an ordinary rack id: the member has no
 *       selector and acquires every record, as in Kafka.
 *   <li>With the prefix, the rest is compiled with {@link Selector#compile}; an empty or blank rest is no selector.
 *       An invalid selector fails the heartbeat with {@code INVALID_REQUEST} and an error message naming the position
 *       and the offending token; the member is not created or changed.
 *   <li>The broker then hands the member only records for which the selector is TRUE; records it does not match stay
 *       available to the group's other members, their delivery count unchanged.
 *   <li>Fetch (v11+) carries the consumer's {@code client.rack} as its RackId too: a Fetch whose RackId starts with
 *       {@link #PREFIX} gets its record batches filtered by the selector (JMS topic subscribers), records it does not
 *       match left out while offsets still advance over them (an empty batch where nothing matched). An invalid
 *       selector answers every partition of the Fetch with {@code INVALID_REQUEST}.
 *   <li>A broker advertises the extension in its ApiVersions response as the supported feature {@link #FEATURE} with
 *       min and max level {@link #FEATURE_LEVEL}. A client that needs broker-side selection should check for it: a
 *       broker without it takes the selector for a rack id and delivers everything.
 * </ul>
 *
 * <p>Stateless; thread-safe.
 */
public final class MemberSelector {

    /** The RackId prefix that marks a selector. */
    public static final String PREFIX = "millrace.selector:";

    /**
     * The RackId prefix of a subscription selector: as {@link #PREFIX}, but a record the member does not match is not
     * part of the subscription at all: the broker archives it instead of keeping it for other members. For JMS shared
     * subscriptions, whose consumers all have the same selector, so that unmatched messages do not pile up.
     */
    public static final String SUBSCRIPTION_PREFIX = "millrace.subscription.selector:";

    /** The ApiVersions supported-feature name of this extension. */
    public static final String FEATURE = "millrace.member.selector";

    /** The feature level of the format described here. */
    public static final short FEATURE_LEVEL = 1;

    private MemberSelector() {
    }

    /** The RackId that carries {@code selectorText}; {@code null} for a null or blank selector (no rack id). */
    public static String encode(String selectorText) {
        if (selectorText == null || selectorText.isBlank()) {
            return null;
        }
        return PREFIX + selectorText;
    }

    /** The RackId that carries {@code selectorText} as a subscription selector; null for no selector. */
    public static String encodeSubscription(String selectorText) {
        if (selectorText == null || selectorText.isBlank()) {
            return null;
        }
        return SUBSCRIPTION_PREFIX + selectorText;
    }

    /** Whether {@code rackId} carries a selector (starts with {@link #PREFIX} or {@link #SUBSCRIPTION_PREFIX}). */
    public static boolean carriesSelector(String rackId) {
        return rackId != null && (rackId.startsWith(PREFIX) || rackId.startsWith(SUBSCRIPTION_PREFIX));
    }

    /** Whether {@code rackId} carries a subscription selector: records it does not match are archived. */
    public static boolean archivesUnmatched(String rackId) {
        return rackId != null && rackId.startsWith(SUBSCRIPTION_PREFIX);
    }

    /** The selector text carried by {@code rackId}, or empty when it is an ordinary rack id. */
    public static Optional<String> decode(String rackId) {
        if (rackId == null) {
            return Optional.empty();
        }
        if (rackId.startsWith(PREFIX)) {
            return Optional.of(rackId.substring(PREFIX.length()));
        }
        if (rackId.startsWith(SUBSCRIPTION_PREFIX)) {
            return Optional.of(rackId.substring(SUBSCRIPTION_PREFIX.length()));
        }
        return Optional.empty();
    }

    /**
     * The compiled selector of a member (either prefix) whose RackId is {@code rackId}; {@code null} when it carries none or carries a
     * blank one (the member gets every record).
     *
     * @throws SelectorSyntaxException if the carried selector is invalid; positions count from the selector's start,
     *                                 not the rack id's
     */
    public static Selector compile(String rackId) {
        Optional<String> text = decode(rackId);
        if (text.isEmpty() || text.get().isBlank()) {
            return null;
        }
        return Selector.compile(text.get());
    }
}
