package dev.millrace.broker.controller;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.millrace.broker.controller.MetadataImage.BrokerImage;

/**
 * The active controller's in-memory view of broker liveness: when each broker was last heard from
 * and which metadata index it must have applied to count as caught up. Nothing here is replicated:
 * a voter that becomes the active controller ({@link #resetIfNewTerm}) starts every registered
 * broker's session afresh and asks fenced brokers to catch up with the whole image it starts with,
 * so a failover never fences a live broker and never unfences one that has not seen its registration.
 *
 * <p>Two clocks per broker: the session (when it expires, {@link #expired}), which a new term starts
 * afresh, and when this controller last actually heard from the broker ({@link #hasLiveSession}), which
 * decides whether a new incarnation of the same broker id is refused as a duplicate. A new term has
 * heard from nobody yet, so a broker restarted together with the controller (embedded mode) may register
 * its new incarnation at once, while a broker that heartbeats to this controller keeps its id.
 *
 * <p>Not thread-safe: used only on the controller's event thread.
 */
final class BrokerSessions {

    private final long sessionTimeoutMs;
    private final Map<Integer, Long> lastContactMs = new HashMap<>();
    private final Map<Integer, Long> heardFromMs = new HashMap<>();
    private final Map<Integer, Long> catchUpIndex = new HashMap<>();
    private long term = -1;

    BrokerSessions(long sessionTimeoutMs) {
        this.sessionTimeoutMs = sessionTimeoutMs;
    }

    /**
     * Starts every registered broker's session at {@code nowMs} when {@code leaderTerm} is a new term.
     *
     * @return whether it was a new term
     */
    boolean resetIfNewTerm(long leaderTerm, MetadataImage image, long nowMs) {
        if (leaderTerm == term) {
            return false;
        }
        term = leaderTerm;
        lastContactMs.clear();
        heardFromMs.clear();
        catchUpIndex.clear();
        for (int id : image.brokers().keySet()) {
            lastContactMs.put(id, nowMs);
            catchUpIndex.put(id, image.appliedIndex());
        }
        return true;
    }

    /**
     * The broker looks dead (its connection to this controller closed, or it ran the voter that led before this
     * one): its session now ends within {@code graceMs} unless it is heard from again. Never lengthens a session.
     */
    void suspect(int brokerId, long nowMs, long graceMs) {
        Long last = lastContactMs.get(brokerId);
        if (last == null) {
            return;
        }
        lastContactMs.put(brokerId, Math.min(last, nowMs - sessionTimeoutMs + graceMs));
    }

    /** The broker was heard from (registration or heartbeat) at {@code nowMs}. */
    void touch(int brokerId, long nowMs) {
        lastContactMs.put(brokerId, nowMs);
        heardFromMs.put(brokerId, nowMs);
    }

    /** Whether this controller heard from the broker, in this term, within the session timeout. */
    boolean hasLiveSession(int brokerId, long nowMs) {
        return within(heardFromMs.get(brokerId), nowMs);
    }

    private boolean within(Long lastMs, long nowMs) {
        return lastMs != null && nowMs - lastMs <= sessionTimeoutMs;
    }

    /** The registration of {@code brokerId} was applied at {@code index}. */
    void registered(int brokerId, long index) {
        catchUpIndex.put(brokerId, index);
    }

    /** Whether a broker that has applied metadata up to {@code appliedIndex} has seen its registration. */
    boolean isCaughtUp(int brokerId, long appliedIndex, MetadataImage image) {
        return appliedIndex >= catchUpIndex.getOrDefault(brokerId, image.appliedIndex());
    }

    /** The registered, not yet fenced brokers whose session has expired, by id. */
    List<BrokerImage> expired(MetadataImage image, long nowMs) {
        List<BrokerImage> expired = new ArrayList<>();
        for (BrokerImage broker : image.brokers().values()) {
            if (broker.state() != BrokerState.FENCED && !within(lastContactMs.get(broker.id()), nowMs)) {
                expired.add(broker);
            }
        }
        return expired;
    }
}
