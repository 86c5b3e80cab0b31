package dev.millrace.broker.share;

import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.utils.Utils;

import dev.millrace.broker.log.BatchCursor;
import dev.millrace.protocol.selector.RecordSelectorContext;
import dev.millrace.protocol.selector.Selector;

/**
 * Evaluates a member's JMS selector ({@link dev.millrace.protocol.selector.MemberSelector}) against a record of the
 * log, for selective acquisition in a {@link SharePartition} and for selective fetches of topic subscribers. Reads the record's headers in place through one
 * reusable {@link RecordSelectorContext}; the record key (JMSXGroupID) is copied only for selectors that name it.
 *
 * <p>A record whose JMS headers are malformed (so it could not become a JMS message) never matches a selector: it
 * stays available to members without one. Any other evaluation failure counts as no match too, so one bad record
 * cannot fail a fetch.
 *
 * <p>Not thread-safe: one per share-partition, used under its monitor; one per fetch.
 */
public final class SelectorMatcher {

    private static final String GROUP_ID = "JMSXGroupID";

    private final RecordSelectorContext context = new RecordSelectorContext();

    /** As {@link #matches(Selector, Record, int)} for the record {@code cursor} is at, its headers read in place. */
    public boolean matches(Selector selector, BatchCursor cursor, int deliveryCount) {
        try {
            byte[] key = selector.identifiers().contains(GROUP_ID) ? cursor.key() : null;
            return selector.matches(context.reset(cursor.buffer(), cursor.headersPosition(), cursor.headerCount(),
                    key, cursor.timestamp(), deliveryCount));
        } catch (RuntimeException malformed) {
            return false;
        }
    }

    /** Whether {@code record}, delivered for the {@code deliveryCount}th time if acquired, matches {@code selector}. */
    public boolean matches(Selector selector, Record record, int deliveryCount) {
        byte[] key = record.hasKey() && selector.identifiers().contains(GROUP_ID) ? Utils.toArray(record.key()) : null;
        try {
            return selector.matches(context.reset(record.headers(), key, record.timestamp(), deliveryCount));
        } catch (RuntimeException malformed) {
            return false;
        }
    }
}
