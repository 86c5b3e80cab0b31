package dev.millrace.broker.share;

import java.util.Objects;

import dev.millrace.protocol.selector.MemberSelector;
import dev.millrace.protocol.selector.Selector;

/**
 * What a selective share-group member acquires ({@link MemberSelector}): the records its selector matches. The others
 * stay AVAILABLE for other members (a queue consumer's selector), or, with {@code archiveUnmatched} (a shared
 * subscription's selector), are not part of the subscription and are archived without a delivery.
 *
 * @param selector         never one that {@linkplain Selector#matchesAll() matches all}
 * @param archiveUnmatched whether records the selector does not match are archived
 */
public record MemberFilter(Selector selector, boolean archiveUnmatched) {

    public MemberFilter {
        Objects.requireNonNull(selector, "selector");
    }

    /**
     * The filter a member's rack id asks for, or null when it asks for none (no selector, a blank one, or an ordinary
     * rack id).
     *
     * @throws dev.millrace.protocol.selector.SelectorSyntaxException if the carried selector is invalid
     */
    public static MemberFilter of(String rackId) {
        Selector selector = MemberSelector.compile(rackId);
        return selector == null ? null : new MemberFilter(selector, MemberSelector.archivesUnmatched(rackId));
    }
}
