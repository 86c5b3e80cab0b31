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
 *       for the latency rounds. Several threads share the schedule, so that a side whose persistent send takes
 *       longer than {@code 1/rate} (Artemis syncs its journal in every send: about 3.5 ms here) still holds the
 *       rate.</li>
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
     * One of {@code senders} threads that together send {@code count} messages to {@code side}'s benchmark queue at
     * {@code ratePerSec}, outside any transaction: message {@code i} is due at {@code startNanos + i / ratePerSec}
     * and this thread sends those with {@code i % senders == sender}. Returns the {@link System#nanoTime()} after
     * its last send.
     */
    @TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED)
    public long sendAtFixedRate(String side, FixedRate schedule, int sender) {
        try (JMSContext context = factory(side).createContext()) {
            Queue queue = queue(side, context);
            JMSProducer producer = context.createProducer().setDeliveryMode(DeliveryMode.PERSISTENT);
            for (int i = sender; i < schedule.count(); i += schedule.senders()) {
                long due = schedule.dueNanos(i);
                for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) {
                    LockSupport.parkNanos(wait);
                }
                producer.setProperty(BenchRecorder.SENT_NANOS, System.nanoTime()).send(queue, BODY);
            }
            return System.nanoTime();
        }
    }

    /** {@code count} messages at {@code ratePerSec} from {@code startNanos}, shared by {@code senders} threads. */
    public record FixedRate(int count, int ratePerSec, int senders, long startNanos) {

        long dueNanos(int index) {
            return startNanos + index * 1_000_000_000L / ratePerSec;
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
