package dev.millrace.bench.jms;

import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import org.HdrHistogram.Histogram;

import jakarta.jms.BytesMessage;
import jakarta.jms.CompletionListener;
import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.DeliveryMode;
import jakarta.jms.Destination;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;

/**
 * End-to-end latency at a fixed rate, through the JMS API only: one producer connection sends PERSISTENT 1 KiB
 * {@link BytesMessage}s asynchronously (a {@link CompletionListener} per send) at the times a fixed schedule intends
 * ({@code start + i / rate}), and one consumer connection receives them with a {@link jakarta.jms.MessageListener} in
 * AUTO_ACKNOWLEDGE, on a queue or as a plain topic subscriber. Latency = the listener's {@code System.nanoTime()}
 * minus the <em>intended</em> send time (carried in the message; one JVM, one clock), so a producer that falls behind
 * its schedule counts against latency (no coordinated omission). The first {@code unmeasured} messages are left out of
 * the HdrHistogram; the next {@code measured} are recorded.
 *
 * <p>Before the schedule starts, the producer sends "ping" messages (index -1, not measured) every 100 ms until the
 * listener has received one: a topic subscriber sees only what is published after it is in place, and the schedule
 * must not start before.
 *
 * <p>Not thread-safe: one run at a time; the histogram is written by the listener's thread only and read after the
 * last message arrived.
 */
final class PacedLatency {

    private static final String SCHEDULED = "scheduledNanos";
    private static final String INDEX = "index";

    /** Latency percentiles in microseconds, the number measured, and the send rate achieved (msgs/s). */
    record Figures(double p50Us, double p99Us, double maxUs, long count, double achievedRate) {
    }

    private final ConnectionFactory factory;
    private final byte[] payload;
    private final long timeoutMs;

    PacedLatency(ConnectionFactory factory, int messageBytes, long timeoutMs) {
        this.factory = factory;
        this.payload = new byte[messageBytes];
        new Random(42).nextBytes(payload);
        this.timeoutMs = timeoutMs;
    }

    Figures run(DestinationKind kind, String name, int rate, long unmeasured, long measured)
            throws JMSException, InterruptedException {
        if (rate <= 0 || unmeasured < 0 || measured <= 0) {
            throw new IllegalArgumentException("rate " + rate + ", unmeasured " + unmeasured + " and measured "
                    + measured + " must be positive (unmeasured may be 0)");
        }
        long total = unmeasured + measured;
        Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
        CountDownLatch ready = new CountDownLatch(1);
        CountDownLatch received = new CountDownLatch(1);
        AtomicLong count = new AtomicLong();
        AtomicReference<Exception> failure = new AtomicReference<>();
        try (Connection consumerConnection = factory.createConnection();
             Connection producerConnection = factory.createConnection()) {
            Session consumerSession = consumerConnection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageConsumer consumer = consumerSession.createConsumer(kind.create(consumerSession, name));
            consumer.setMessageListener(message -> {
                try {
                    long index = message.getLongProperty(INDEX);
                    if (index < 0) {
                        ready.countDown();
                        return;
                    }
                    long latency = System.nanoTime() - message.getLongProperty(SCHEDULED);
                    if (index >= unmeasured) {
                        histogram.recordValue(Math.min(Math.max(latency, 0), histogram.getHighestTrackableValue()));
                    }
                } catch (JMSException e) {
                    failure.compareAndSet(null, e);
                }
                if (count.incrementAndGet() == total) {
                    received.countDown();
                }
            });
            consumerConnection.start();
            Session session = producerConnection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Destination destination = kind.create(session, name);
            MessageProducer producer = session.createProducer(destination);
            producer.setDeliveryMode(DeliveryMode.PERSISTENT);
            CompletionListener listener = new CompletionListener() {
                @Override
                public void onCompletion(Message message) {
                }

                @Override
                public void onException(Message message, Exception exception) {
                    failure.compareAndSet(null, exception);
                }
            };
            awaitListener(session, producer, listener, ready);
            long intervalNanos = TimeUnit.SECONDS.toNanos(1) / rate;
            long start = System.nanoTime();
            for (long i = 0; i < total && failure.get() == null; i++) {
                long scheduled = start + i * intervalNanos;
                long wait;
                while ((wait = scheduled - System.nanoTime()) > 0) {
                    LockSupport.parkNanos(wait);
                }
                producer.send(message(session, scheduled, i), listener);
            }
            double achieved = total * 1e9 / (System.nanoTime() - start);
            if (!received.await(timeoutMs, TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("received " + count.get() + " of " + total + " messages on "
                        + kind.label() + " " + name + " within " + timeoutMs + " ms of the last send");
            }
            if (failure.get() != null) {
                throw new IllegalStateException("latency run failed", failure.get());
            }
            return new Figures(histogram.getValueAtPercentile(50) / 1e3, histogram.getValueAtPercentile(99) / 1e3,
                    histogram.getMaxValue() / 1e3, histogram.getTotalCount(), achieved);
        }
    }

    /** Sends a ping every 100 ms until the listener has one, at most {@code timeoutMs}. */
    private void awaitListener(Session session, MessageProducer producer, CompletionListener listener,
                               CountDownLatch ready) throws JMSException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        do {
            producer.send(message(session, System.nanoTime(), -1), listener);
            if (ready.await(100, TimeUnit.MILLISECONDS)) {
                return;
            }
        } while (System.nanoTime() < deadline);
        throw new IllegalStateException("the listener received no ping within " + timeoutMs + " ms");
    }

    private BytesMessage message(Session session, long scheduledNanos, long index) throws JMSException {
        BytesMessage message = session.createBytesMessage();
        message.writeBytes(payload);
        message.setLongProperty(SCHEDULED, scheduledNanos);
        message.setLongProperty(INDEX, index);
        return message;
    }
}
