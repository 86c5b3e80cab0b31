package dev.millrace.bench.jms;

import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.jms.BytesMessage;
import jakarta.jms.CompletionListener;
import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import jakarta.jms.Topic;

/**
 * Throughput through the JMS API only: filling a destination with PERSISTENT 1 KiB {@link BytesMessage}s by async
 * sends (one producer, at most {@code asyncWindow} unconfirmed, timed to the last confirmation), and draining a
 * pre-filled queue or durable topic subscription with one consumer calling {@code receive} (timed from the consumer's
 * creation to the last message and its acknowledge or commit).
 *
 * <p>Not thread-safe: one run at a time.
 */
final class ConsumeThroughput {

    /** The durable subscription {@link #consumeDurable} reads, on a connection with {@link #CLIENT_ID}. */
    static final String SUBSCRIPTION = "bench-sub";
    static final String CLIENT_ID = "bench-durable";

    private final ConnectionFactory factory;
    private final byte[] payload;
    private final int asyncWindow;
    private final long timeoutMs;

    ConsumeThroughput(ConnectionFactory factory, int messageBytes, int asyncWindow, long timeoutMs) {
        this.factory = factory;
        this.payload = new byte[messageBytes];
        new Random(42).nextBytes(payload);
        this.asyncWindow = asyncWindow;
        this.timeoutMs = timeoutMs;
    }

    /** Sends {@code count} messages to the destination asynchronously; returns msgs/s to the last confirmation. */
    double fill(DestinationKind kind, String name, long count) throws JMSException, InterruptedException {
        try (Connection connection = factory.createConnection()) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageProducer producer = session.createProducer(kind.create(session, name));
            producer.setDeliveryMode(DeliveryMode.PERSISTENT);
            Semaphore window = new Semaphore(asyncWindow);
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
                if (!window.tryAcquire(timeoutMs, TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException("no send confirmation within " + timeoutMs + " ms");
                }
                BytesMessage message = session.createBytesMessage();
                message.writeBytes(payload);
                producer.send(message, listener);
            }
            if (!done.await(timeoutMs, TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException(confirmed.get() + " of " + count + " sends to " + name
                        + " confirmed within " + timeoutMs + " ms");
            }
            long elapsed = System.nanoTime() - start;
            if (failure.get() != null) {
                throw new IllegalStateException("async send to " + name + " failed", failure.get());
            }
            return count * 1e9 / elapsed;
        }
    }

    /** Receives {@code count} messages from the queue, settling them as {@code mode} says; returns msgs/s. */
    double consumeQueue(String queue, long count, AckMode mode) throws JMSException {
        try (Connection connection = factory.createConnection()) {
            Session session = mode.createSession(connection);
            long start = System.nanoTime();
            MessageConsumer consumer = session.createConsumer(session.createQueue(queue));
            connection.start();
            drain(consumer, session, count, mode, "queue " + queue);
            return count * 1e9 / (System.nanoTime() - start);
        }
    }

    /**
     * Creates the durable subscription {@link #SUBSCRIPTION} on the topic (client id {@link #CLIENT_ID}) and closes
     * its consumer, so that it keeps what is published from now on; {@link #consumeDurable} reads it.
     */
    void subscribeDurable(String topic) throws JMSException {
        try (Connection connection = factory.createConnection()) {
            connection.setClientID(CLIENT_ID);
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            session.createDurableConsumer(session.createTopic(topic), SUBSCRIPTION).close();
        }
    }

    /**
     * Receives {@code count} messages from the durable subscription {@link #subscribeDurable} made, in
     * AUTO_ACKNOWLEDGE; returns msgs/s from the consumer's creation. Removes the subscription afterwards.
     */
    double consumeDurable(String topic, long count) throws JMSException {
        try (Connection connection = factory.createConnection()) {
            connection.setClientID(CLIENT_ID);
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Topic destination = session.createTopic(topic);
            long start = System.nanoTime();
            MessageConsumer consumer = session.createDurableConsumer(destination, SUBSCRIPTION);
            connection.start();
            drain(consumer, session, count, AckMode.AUTO, "durable subscription " + SUBSCRIPTION + " on " + topic);
            double perSecond = count * 1e9 / (System.nanoTime() - start);
            consumer.close();
            session.unsubscribe(SUBSCRIPTION);
            return perSecond;
        }
    }

    /**
     * A plain (non-durable) subscriber on the topic, then {@code count} messages published by {@link #fill}, then
     * the subscriber drains them in AUTO_ACKNOWLEDGE; returns msgs/s from its connection's {@code start()} after the
     * fill to the last message. So that the subscriber is in place before the fill (it sees only what is published
     * after that), it first receives a ping published until one arrives (and any other pings), and its connection is
     * stopped during the fill.
     */
    double fillAndConsumePlain(String topic, long count) throws JMSException, InterruptedException {
        try (Connection connection = factory.createConnection();
             Connection pinger = factory.createConnection()) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageConsumer consumer = session.createConsumer(session.createTopic(topic));
            connection.start();
            Session pingSession = pinger.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageProducer ping = pingSession.createProducer(pingSession.createTopic(topic));
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            Message first;
            do {
                ping.send(pingSession.createMessage());
                first = consumer.receive(100);
            } while (first == null && System.nanoTime() < deadline);
            if (first == null) {
                throw new IllegalStateException("the subscriber on " + topic + " received no ping within "
                        + timeoutMs + " ms");
            }
            while (consumer.receive(500) != null) {
                // pings sent before the first arrived: all were in the log before it, so a quiet 500 ms clears them
            }
            connection.stop();
            fill(DestinationKind.TOPIC, topic, count);
            long start = System.nanoTime();
            connection.start();
            drain(consumer, session, count, AckMode.AUTO, "subscriber on " + topic);
            return count * 1e9 / (System.nanoTime() - start);
        }
    }

    private void drain(MessageConsumer consumer, Session session, long count, AckMode mode, String what)
            throws JMSException {
        for (long i = 1; i <= count; i++) {
            Message message = consumer.receive(timeoutMs);
            if (message == null) {
                throw new IllegalStateException("received " + (i - 1) + " of " + count + " messages from " + what
                        + "; nothing more within " + timeoutMs + " ms");
            }
            mode.settle(session, message, i, count);
        }
    }
}
