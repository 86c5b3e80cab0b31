package dev.millrace.chaos;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What one flow sent and what came back, by message id: sends whose acknowledgement the client saw, every delivery to
 * the application with whether the provider flagged it as a redelivery, and the ids whose consumption was made final
 * (an acknowledgement or commit that returned). Counts the outcomes users care about: acknowledged messages lost,
 * deliveries after a final consumption (duplicates that must not happen), and further deliveries that were flagged
 * (allowed after a failover in AUTO/CLIENT acknowledge) or not flagged (never allowed).
 *
 * <p>Thread-safe.
 */
final class Ledger {

    private final Set<String> acknowledged = ConcurrentHashMap.newKeySet();
    private final AtomicLong failedSends = new AtomicLong();
    private final Map<String, Integer> deliveries = new ConcurrentHashMap<>();
    private final Set<String> consumed = ConcurrentHashMap.newKeySet();
    private final AtomicLong afterFinal = new AtomicLong();
    private final AtomicLong flaggedAgain = new AtomicLong();
    private final AtomicLong unflaggedAgain = new AtomicLong();

    void acknowledged(String id) {
        acknowledged.add(id);
    }

    void sendFailed() {
        failedSends.incrementAndGet();
    }

    /**
     * A delivery to the application. A second delivery of an id is a redelivery: {@code flagged} tells whether the
     * client said so (JMSRedelivered, a delivery count above one).
     */
    void delivered(String id, boolean flagged) {
        int count = deliveries.merge(id, 1, Integer::sum);
        if (consumed.contains(id)) {
            afterFinal.incrementAndGet();
        }
        if (count > 1) {
            (flagged ? flaggedAgain : unflaggedAgain).incrementAndGet();
        }
    }

    /** The consumption of {@code ids} is final: their acknowledgement or commit returned. */
    void consumed(List<String> ids) {
        consumed.addAll(ids);
    }

    boolean allAcknowledgedDelivered() {
        return deliveries.keySet().containsAll(acknowledged);
    }

    long acknowledgedCount() {
        return acknowledged.size();
    }

    long lost() {
        return acknowledged.stream().filter(id -> !deliveries.containsKey(id)).count();
    }

    /** Every lost id: acknowledged, never delivered. */
    java.util.Set<String> lostIds() {
        return acknowledged.stream().filter(id -> !deliveries.containsKey(id))
                .collect(java.util.stream.Collectors.toSet());
    }

    /** A few lost ids, for the failure message. */
    List<String> someLost() {
        return lostIds().stream().sorted().limit(10).toList();
    }

    long deliveredAfterFinalConsumption() {
        return afterFinal.get();
    }

    long flaggedRedeliveries() {
        return flaggedAgain.get();
    }

    long unflaggedRedeliveries() {
        return unflaggedAgain.get();
    }

    long failedSends() {
        return failedSends.get();
    }

    long distinctDelivered() {
        return deliveries.size();
    }

    String summary() {
        return String.format("acked=%d delivered=%d lost=%d afterFinal=%d redelivered(flagged)=%d "
                + "redelivered(unflagged)=%d failedSends=%d", acknowledgedCount(), distinctDelivered(), lost(),
                deliveredAfterFinalConsumption(), flaggedRedeliveries(), unflaggedRedeliveries(), failedSends());
    }
}
