package dev.millrace.ra.it.bench;

import java.util.concurrent.locks.LockSupport;

import jakarta.annotation.Resource;
import jakarta.ejb.Stateless;
import jakarta.ejb.TransactionAttribute;
import jakarta.ejb.TransactionAttributeType;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSProducer;
import jakarta.jms.Queue;

/**
 * Sends the benchmark's messages inside the server, the same way for both sides: through the side's pooled
 * connection factory (the Millrace adapter's {@code java:/jms/millrace/ConnectionFactory}, Artemis's
 * {@code java:/JmsXA}), persistent, a {@value #BODY_CHARS}-character text body, the send time
 * ({@link System#nanoTime()} just before {@code send}) in {@link BenchRecorder#SENT_NANOS}.
 *
 * <ul>
 *   <li>{@link #fill}: one container transaction (Required) of {@code count} sends, to fill a queue whose MDB
 *       does not consume yet (its delivery is stopped): the throughput rounds drain it.</li>
 *   <li>{@link #sendAtFixedRate}: no transaction (each send is its own, synchronous, persistent send), one
 *       message every {@code 1/rate} seconds on a fixed schedule (a late send does not move the ones after it),
 *       for the latency rounds.</li>
 * </ul>
 */
@Stateless
public class BenchSender {

    static final int BODY_CHARS = 100;
    private static final String BODY = "x".repeat(BODY_CHARS);

    @Resource(lookup = "java:/jms/millrace/ConnectionFactory")
    private ConnectionFactory millrace;

    @Resource(lookup = "java:/JmsXA")
    private ConnectionFactory artemis;

    @Resource(lookup = ArtemisBenchMdb.QUEUE_JNDI)
    private Queue artemisQueue;

    /** Sends {@code count} messages to {@code side}'s benchmark queue in the caller's (or a new) transaction. */
    @TransactionAttribute(TransactionAttributeType.REQUIRED)
    public void fill(String side, int count) {
        try (JMSContext context = factory(side).createContext()) {
            Queue queue = queue(side, context);
            JMSProducer producer = context.createProducer().setDeliveryMode(DeliveryMode.PERSISTENT);
            for (int i = 0; i < count; i++) {
                producer.setProperty(BenchRecorder.SENT_NANOS, System.nanoTime()).send(queue, BODY);
            }
        }
    }

    /**
     * Sends {@code count} messages to {@code side}'s benchmark queue at {@code ratePerSec}, outside any
     * transaction; returns the rate reached (messages per second from the first send to the last).
     */
    @TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED)
    public double sendAtFixedRate(String side, int count, int ratePerSec) {
        long periodNanos = 1_000_000_000L / ratePerSec;
        try (JMSContext context = factory(side).createContext()) {
            Queue queue = queue(side, context);
            JMSProducer producer = context.createProducer().setDeliveryMode(DeliveryMode.PERSISTENT);
            long start = System.nanoTime();
            for (int i = 0; i < count; i++) {
                long due = start + i * periodNanos;
                for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) {
                    LockSupport.parkNanos(wait);
                }
                producer.setProperty(BenchRecorder.SENT_NANOS, System.nanoTime()).send(queue, BODY);
            }
            long elapsed = System.nanoTime() - start;
            return count > 1 ? (count - 1) * 1e9 / elapsed : 0;
        }
    }

    private ConnectionFactory factory(String side) {
        BenchRecorder.of(side);
        return "millrace".equals(side) ? millrace : artemis;
    }

    private Queue queue(String side, JMSContext context) {
        return "millrace".equals(side) ? context.createQueue(MillraceBenchMdb.QUEUE) : artemisQueue;
    }
}
