package dev.millrace.broker.server;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A kafka-clients producer and consumer doing what well-behaved clients do, beside the hostile ones: each round
 * sends records (acks=all, idempotent) and reads them back in order from partition 0 of its topic. Any error, or a
 * record missing, out of order or changed, fails the round. {@link #startBackground()} runs rounds on a thread of its
 * own until {@link #close()}, keeping the first failure.
 *
 * <p>Rounds are not thread-safe: run them from one thread, or in the background only.
 */
final class WellBehavedClient implements AutoCloseable {

    private static final long ROUND_TIMEOUT_MS = 30_000;

    private final String topic;
    private final KafkaProducer<String, String> producer;
    private final KafkaConsumer<String, String> consumer;
    private final AtomicLong rounds = new AtomicLong();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private long sent;
    private Thread background;
    private volatile boolean stopping;

    WellBehavedClient(String bootstrap, String topic) {
        this.topic = topic;
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, String.valueOf(ROUND_TIMEOUT_MS));
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "20000");
        producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        consumer = new KafkaConsumer<>(c, new StringDeserializer(), new StringDeserializer());
        consumer.assign(List.of(new TopicPartition(topic, 0)));
    }

    /** Sends {@code records} records and reads them back; throws AssertionError or the client's error otherwise. */
    void roundTrip(int records) throws Exception {
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < records; i++) {
            String value = "record-" + sent++;
            expected.add(value);
            producer.send(new ProducerRecord<>(topic, 0, null, value)).get(ROUND_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }
        List<String> received = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ROUND_TIMEOUT_MS);
        while (received.size() < records && System.nanoTime() < deadline) {
            for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(100))) {
                received.add(record.value());
            }
        }
        if (!received.equals(expected)) {
            throw new AssertionError("round " + rounds.get() + ": expected " + expected + " but read " + received);
        }
        rounds.incrementAndGet();
    }

    /** Runs rounds of 5 records on a thread until closed or a round fails. */
    void startBackground() {
        background = new Thread(() -> {
            while (!stopping) {
                try {
                    roundTrip(5);
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                    return;
                }
            }
        }, "well-behaved-client");
        background.setDaemon(true);
        background.start();
    }

    /** Rounds completed so far. */
    long rounds() {
        return rounds.get();
    }

    /** The first failed round's error, or null. */
    Throwable failure() {
        return failure.get();
    }

    /** Waits until {@code more} rounds complete after now; false when a round failed or the deadline passed. */
    boolean awaitMoreRounds(long more, long timeoutMs) {
        long target = rounds.get() + more;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (rounds.get() < target && failure.get() == null && System.nanoTime() < deadline) {
            try {
                background.join(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return rounds.get() >= target;
    }

    @Override
    public void close() throws InterruptedException {
        stopping = true;
        if (background != null) {
            background.join(ROUND_TIMEOUT_MS * 2);
        }
        producer.close(Duration.ofSeconds(5));
        consumer.close(Duration.ofSeconds(5));
    }
}
