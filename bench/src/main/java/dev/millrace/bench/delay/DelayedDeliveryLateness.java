package dev.millrace.bench.delay;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Time;

import dev.millrace.broker.config.BrokerConfigLoader;
import dev.millrace.broker.server.BrokerServer;
import dev.millrace.protocol.delay.DelayedDelivery;

/**
 * Lateness of durable delayed delivery with many pending delays: starts a Millrace broker in this
 * JVM on 127.0.0.1 (fresh temporary data directory, default settings: 4 delay partitions), writes
 * {@code --records} delayed records (default 100,000, 100-byte values) whose due times are spread
 * uniformly over a window that starts after the last one is written (so all are pending at once),
 * and reads the target read-committed. For each record it records two latenesses in HdrHistograms:
 * broker (the copy's {@code millrace.delay.delivered.ms} minus its due time) and end to end (the
 * consumer's clock at receipt minus the due time). Early deliveries (negative) are counted apart.
 *
 * <pre>
 * java -Xms2g -Xmx2g -XX:+AlwaysPreTouch -cp bench/target/millrace-bench.jar \
 *     dev.millrace.bench.delay.DelayedDeliveryLateness [--records N] [--window-ms W]
 * </pre>
 */
public final class DelayedDeliveryLateness {

    private static final String TARGET = "lateness-target";

    private DelayedDeliveryLateness() {
    }

    public static void main(String[] args) throws Exception {
        int records = 100_000;
        long windowMs = 20_000;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--records" -> records = Integer.parseInt(args[++i]);
                case "--window-ms" -> windowMs = Long.parseLong(args[++i]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]
                        + " (known: --records N, --window-ms W)");
            }
        }
        Path dataDir = Files.createTempDirectory("millrace-delay-bench");
        BrokerServer broker = new BrokerServer(BrokerConfigLoader.fromMap(Map.of("host", "127.0.0.1", "port", "0",
                "data.dir", dataDir.toString(), "controller.port", String.valueOf(freePort()),
                "offsets.topic.num.partitions", "1", "transaction.state.log.num.partitions", "4")), Time.SYSTEM);
        broker.start();
        try {
            run(broker, "127.0.0.1:" + broker.boundAddress().getPort(), records, windowMs);
        } finally {
            broker.close();
            try (Stream<Path> paths = Files.walk(dataDir)) {
                paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static void run(BrokerServer broker, String bootstrap, int records, long windowMs) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.createTopics(List.of(new NewTopic(TARGET, 4, (short) 1))).all().get();
        }
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "65536");
        byte[] value = new byte[100];
        Random random = new Random(42);
        long writeBudgetMs = Math.max(5_000, records / 10);
        long windowStart = System.currentTimeMillis() + writeBudgetMs;
        long started = System.nanoTime();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(),
                new ByteArraySerializer())) {
            List<Future<RecordMetadata>> sends = new ArrayList<>(records);
            for (int i = 0; i < records; i++) {
                long due = windowStart + (long) (random.nextDouble() * windowMs);
                sends.add(producer.send(new ProducerRecord<>(DelayedDelivery.TOPIC, null, null, null, value, List.of(
                        new RecordHeader(DelayedDelivery.TARGET_TOPIC, TARGET.getBytes(StandardCharsets.UTF_8)),
                        new RecordHeader(DelayedDelivery.DUE_MS, DelayedDelivery.encodeLong(due))))));
            }
            for (Future<RecordMetadata> send : sends) {
                send.get(120, TimeUnit.SECONDS);
            }
        }
        long writtenAt = System.currentTimeMillis();
        System.out.printf("wrote %,d delayed records in %,d ms; window starts in %,d ms and lasts %,d ms%n", records,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), windowStart - writtenAt, windowMs);
        if (writtenAt < windowStart) {
            System.out.printf("pending when the window opens: %,d%n", broker.delayService().pendingCount());
        } else {
            System.out.println("WARNING: writing took longer than the budget; not all records were pending at once");
        }

        Histogram brokerLateness = new Histogram(3_600_000L, 3);
        Histogram endToEnd = new Histogram(3_600_000L, 3);
        long early = 0;
        int received = 0;
        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        c.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "1");
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                tps.add(new TopicPartition(TARGET, i));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            long deadline = System.currentTimeMillis() + writeBudgetMs + windowMs + 120_000;
            while (received < records && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                    long now = System.currentTimeMillis();
                    long due = DelayedDelivery.longValue(r.headers().lastHeader(DelayedDelivery.DUE_MS).value(),
                            DelayedDelivery.DUE_MS);
                    long delivered = DelayedDelivery.longValue(
                            r.headers().lastHeader(DelayedDelivery.DELIVERED_MS).value(), DelayedDelivery.DELIVERED_MS);
                    if (delivered < due || now < due) {
                        early++;
                    } else {
                        brokerLateness.recordValue(delivered - due);
                        endToEnd.recordValue(now - due);
                    }
                    received++;
                }
            }
        }
        System.out.printf("received %,d of %,d; early: %,d%n", received, records, early);
        print("broker lateness (delivered.ms - due)", brokerLateness);
        print("end-to-end lateness (consumer receipt - due)", endToEnd);

    }

    private static void print(String what, Histogram h) {
        System.out.printf("%-46s p50 %,d ms  p99 %,d ms  p99.9 %,d ms  max %,d ms  (n=%,d)%n", what,
                h.getValueAtPercentile(50), h.getValueAtPercentile(99), h.getValueAtPercentile(99.9), h.getMaxValue(),
                h.getTotalCount());
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
