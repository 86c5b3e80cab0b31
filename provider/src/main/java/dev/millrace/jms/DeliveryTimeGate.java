package dev.millrace.jms;

import java.util.concurrent.locks.LockSupport;

import dev.millrace.jms.wire.Delivery;

/**
 * The consumer's defensive check of JMSDeliveryTime (JMS 3.1 7.9: a message is not delivered before it). The broker
 * already holds a delayed message back until its due time by the broker's clock; this gate covers clocks that
 * disagree (the sender's, which set JMSDeliveryTime, against this client's) and records written with a future
 * {@code jms.delivery.time} by other means. A message whose JMSDeliveryTime is ahead of this client's clock stays
 * at the front of its consumer's buffer until then: {@code receive} waits for it within its timeout
 * ({@code receiveNoWait} returns null), a listener gets it once it is due. Messages behind it in the same consumer
 * wait too, which keeps the order.
 *
 * <p>Thread-safe.
 */
final class DeliveryTimeGate {

    /** Longest single pause of a receive waiting for a delivery time, so that it notices close promptly. */
    private static final long MAX_PAUSE_MS = 100;

    private volatile long heldUntilMs;

    /** How long before {@code d} may be delivered by {@code nowMs}; 0 when it is due. */
    static long notDueMs(Delivery d, long nowMs) {
        return Math.max(0, d.deliveryTimeMs() - nowMs);
    }

    /** Pauses the calling receive for up to {@code ms} (at most {@value #MAX_PAUSE_MS} at a time). */
    static void pause(long ms) {
        if (ms > 0) {
            LockSupport.parkNanos(Math.min(ms, MAX_PAUSE_MS) * 1_000_000L);
        }
    }

    /** Notes that the listener's next message is held back until {@code untilMs}. */
    void hold(long untilMs) {
        heldUntilMs = untilMs;
    }

    /** Whether the listener's next message is still held back at {@code nowMs}. */
    boolean holding(long nowMs) {
        return heldUntilMs > nowMs;
    }
}
