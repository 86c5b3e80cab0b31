package dev.millrace.bench.jms;

import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
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
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;

/**
 * One JMS load harness for any provider: it sees only the {@code jakarta.jms} API and the {@link ConnectionFactory}
 * it is given. Every message is a PERSISTENT {@link BytesMessage} of {@link Settings#messageBytes} random bytes sent
 * to a queue by a non-transacted AUTO_ACKNOWLEDGE session; each measurement uses a queue of its own (named from
 * {@link Settings#queuePrefix}) so that none reads another's leftovers.
 *
 * <ul>
 *   <li>sync send: one producer calls {@code send(message)} in a loop (each returns after the broker has the message)
 *       for {@link Settings#syncSeconds}, after one unmeasured second;</li>
 *   <li>async send: one producer sends {@link Settings#messages} messages with a {@link CompletionListener},
 *       at most {@link Settings#asyncWindow} unconfirmed at a time, timed until the last confirmation;</li>
 *   <li>consume: one consumer {@code receive}s the messages of the async run, timed from consumer creation to the
 *       last message;</li>
 *   <li>latency: a producer (async sends) paced at {@link Settings#latencyRate} messages/s, and a consumer with a
 *       MessageListener on another connection; each message carries its scheduled send time ({@code System.nanoTime}
 *       of this JVM), so a stalled producer counts against latency too (no coordinated omission). The first
 *       {@link Settings#latencyWarmupSeconds} are left out of the histogram.</li>
 * </ul>
 *
 * <p>Before the measurements, an unmeasured warm-up runs every path they use: {@link Settings#warmupMessages} async
 * sends received with {@code receive}, then one latency run of {@link Settings#latencyWarmupSeconds} on a queue of its
 * own (a MessageListener consumer, which the first warm-up does not use; until 2026-11-30 the measured latency run was
 * that path's first use in the JVM, and its p99 measured the JIT compiler: 4-6 ms in the benchmark against 1-2 ms
 * once warm, in a probe of Millrace alone).
 *
 * <p>Not thread-safe: one run at a time.
 */
public final class JmsHarness {

    private static final String SCHEDULED = "scheduledNanos";
    private static final String INDEX = "index";

    /** What to run. */
    public record Settings(String queuePrefix, int messageBytes, long warmupMessages, int syncSeconds,
                           long messages, int asyncWindow, int latencyRate, int latencySeconds,
                           int latencyWarmupSeconds, long timeoutMs) {
    }

    /** Figures of one run: messages/s, and end-to-end latency in microseconds. */
    public record Result(double syncPerSecond, double asyncPerSecond, double consumePerSecond,
                         double latencyP50Us, double latencyP99Us, double latencyMaxUs, long latencyCount,
                         double achievedRate) {
    }

    private final ConnectionFactory factory;
    private final Settings settings;
    private final byte[] payload;

    public JmsHarness(ConnectionFactory factory, Settings settings) {
        this.factory = factory;
        this.settings = settings;
        this.payload = new byte[settings.messageBytes()];
        new Random(42).nextBytes(payload);
    }

    public Result run(java.util.function.Consumer<String> log) throws JMSException, InterruptedException {
        log.accept("warmup: " + settings.warmupMessages() + " async sends and receives");
        asyncSend(settings.queuePrefix() + "-warmup", settings.warmupMessages());
        consume(settings.queuePrefix() + "-warmup", settings.warmupMessages());
        log.accept("warmup: latency run for " + settings.latencyWarmupSeconds() + " s");
        latency(settings.queuePrefix() + "-warmup-latency", settings.latencyWarmupSeconds(), 0);
        log.accept("sync send for " + settings.syncSeconds() + " s");
        double sync = syncSend(settings.queuePrefix() + "-sync");
        log.accept(String.format("  %.0f msgs/s; async send of %d", sync, settings.messages()));
        double async = asyncSend(settings.queuePrefix() + "-async", settings.messages());
        log.accept(String.format("  %.0f msgs/s; consume %d", async, settings.messages()));
        double consume = consume(settings.queuePrefix() + "-async", settings.messages());
        log.accept(String.format("  %.0f msgs/s; latency at %d msgs/s for %d s", consume, settings.latencyRate(),
                settings.latencySeconds()));
        Result latency = latency(settings.queuePrefix() + "-latency", settings.latencySeconds(),
                settings.latencyWarmupSeconds());
        Result result = new Result(sync, async, consume, latency.latencyP50Us(), latency.latencyP99Us(),
                latency.latencyMaxUs(), latency.latencyCount(), latency.achievedRate());
        log.accept(String.format("  p50 %.0f us, p99 %.0f us, max %.0f us (%d measured, %.0f msgs/s sent)",
                result.latencyP50Us(), result.latencyP99Us(), result.latencyMaxUs(), result.latencyCount(),
                result.achievedRate()));
        return result;
    }

    private BytesMessage message(Session session) throws JMSException {
        BytesMessage message = session.createBytesMessage();
        message.writeBytes(payload);
        return message;
    }

    double syncSend(String queueName) throws JMSException {
        try (Connection connection = factory.createConnection()) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageProducer producer = session.createProducer(session.createQueue(queueName));
            producer.setDeliveryMode(DeliveryMode.PERSISTENT);
            long warmEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
            while (System.nanoTime() < warmEnd) {
                producer.send(message(session));
            }
            long start = System.nanoTime();
            long end = start + TimeUnit.SECONDS.toNanos(settings.syncSeconds());
            long sent = 0;
            long now;
            do {
                producer.send(message(session));
                sent++;
                now = System.nanoTime();
            } while (now < end);
            return sent * 1e9 / (now - start);
        }
    }

    double asyncSend(String queueName, long count) throws JMSException, InterruptedException {
        try (Connection connection = factory.createConnection()) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageProducer producer = session.createProducer(session.createQueue(queueName));
            producer.setDeliveryMode(DeliveryMode.PERSISTENT);
            Semaphore window = new Semaphore(settings.asyncWindow());
            CountDownLatch done = new CountDownLatch(1);
            AtomicLong confirmed = new AtomicLong();
            AtomicReference<Exception> failure = new AtomicReference<>();
            CompletionListener listener = new CompletionListener() {
                @Override
                public void onCompletion(Message message) {
                    window.release();
                    if (confirmed.incrementAndGet() == count) {
                        done.countDown();
                    }
                }

                @Override
                public void onException(Message message, Exception exception) {
                    failure.compareAndSet(null, exception);
                    window.release();
                    done.countDown();
                }
            };
            long start = System.nanoTime();
            for (long i = 0; i < count && failure.get() == null; i++) {
                if (!window.tryAcquire(settings.timeoutMs(), TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException("no send confirmation within " + settings.timeoutMs() + " ms");
                }
                producer.send(message(session), listener);
            }
            if (!done.await(settings.timeoutMs(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException(confirmed.get() + " of " + count + " sends confirmed");
            }
            long elapsed = System.nanoTime() - start;
            if (failure.get() != null) {
                throw new IllegalStateException("async send failed", failure.get());
            }
            return count * 1e9 / elapsed;
        }
    }

    double consume(String queueName, long count) throws JMSException {
        try (Connection connection = factory.createConnection()) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            long start = System.nanoTime();
            MessageConsumer consumer = session.createConsumer(session.createQueue(queueName));
            connection.start();
            for (long i = 0; i < count; i++) {
                Message message = consumer.receive(settings.timeoutMs());
                if (message == null) {
                    throw new IllegalStateException("received " + i + " of " + count + " messages from "
                            + queueName + "; nothing more within " + settings.timeoutMs() + " ms");
                }
            }
            return count * 1e9 / (System.nanoTime() - start);
        }
    }

    /** A latency run of {@code seconds}, the first {@code excludedSeconds} of it left out of the histogram. */
    Result latency(String queueName, int seconds, int excludedSeconds) throws JMSException, InterruptedException {
        long total = (long) settings.latencyRate() * seconds;
        long warmup = (long) settings.latencyRate() * excludedSeconds;
        Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
        CountDownLatch received = new CountDownLatch(1);
        AtomicLong count = new AtomicLong();
        AtomicReference<Exception> failure = new AtomicReference<>();
        try (Connection consumerConnection = factory.createConnection();
             Connection producerConnection = factory.createConnection()) {
            Session consumerSession = consumerConnection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageConsumer consumer = consumerSession.createConsumer(consumerSession.createQueue(queueName));
            consumer.setMessageListener(message -> {
                try {
                    long latency = System.nanoTime() - message.getLongProperty(SCHEDULED);
                    if (message.getLongProperty(INDEX) >= warmup) {
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
            MessageProducer producer = session.createProducer(session.createQueue(queueName));
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
            long intervalNanos = TimeUnit.SECONDS.toNanos(1) / settings.latencyRate();
            long start = System.nanoTime();
            for (long i = 0; i < total && failure.get() == null; i++) {
                long scheduled = start + i * intervalNanos;
                long wait;
                while ((wait = scheduled - System.nanoTime()) > 0) {
                    LockSupport.parkNanos(wait);
                }
                BytesMessage message = message(session);
                message.setLongProperty(SCHEDULED, scheduled);
                message.setLongProperty(INDEX, i);
                producer.send(message, listener);
            }
            double achieved = total * 1e9 / (System.nanoTime() - start);
            if (!received.await(settings.timeoutMs(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("received " + count.get() + " of " + total + " messages");
            }
            if (failure.get() != null) {
                throw new IllegalStateException("latency run failed", failure.get());
            }
            return new Result(0, 0, 0, histogram.getValueAtPercentile(50) / 1e3,
                    histogram.getValueAtPercentile(99) / 1e3, histogram.getMaxValue() / 1e3,
                    histogram.getTotalCount(), achieved);
        }
    }
}
