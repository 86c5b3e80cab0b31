package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.protocol.delay.DelayedDelivery;

/**
 * A broker process holding 10,000 pending delayed records is killed with SIGKILL while deliveries
 * are under way, and restarted on the same data: every record arrives on its target, none before
 * its due time, none twice (read-committed).
 */
@Timeout(240)
class DelayedDeliveryCrashIntegrationTest {

    private static final String TARGET = "delayed-after-crash";
    private static final int RECORDS = 10_000;

    @TempDir
    Path tmp;

    @Test
    void everyDelayedRecordArrivesOnceAndNeverEarlyAcrossASigkill() throws Exception {
        Path dataDir = tmp.resolve("data");
        int port = TestBrokers.freePort();
        int controllerPort = TestBrokers.freePort();
        List<String> settings = List.of("delay.topic.num.partitions=2", "offsets.topic.num.partitions=1",
                "transaction.state.log.num.partitions=2");
        Map<String, Long> dueByValue = new HashMap<>();
        long lastDue;
        try (BrokerProcess broker = BrokerProcess.start(dataDir, port, controllerPort, settings)) {
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap()))) {
                admin.createTopics(List.of(new NewTopic(TARGET, 3, (short) 1))).all().get();
            }
            Random random = new Random(7);
            long start = System.currentTimeMillis();
            Properties p = new Properties();
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
            p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(),
                    new StringSerializer())) {
                List<Future<RecordMetadata>> sends = new ArrayList<>();
                for (int i = 0; i < RECORDS; i++) {
                    long due = start + 2_000 + random.nextInt(6_000);
                    String value = "d" + i;
                    dueByValue.put(value, due);
                    sends.add(producer.send(DelayedDeliveryIntegrationTest.delayed(TARGET, null,
                            i % 4 == 0 ? "k" + (i % 97) : null, value, due)));
                }
                for (Future<RecordMetadata> send : sends) {
                    send.get(60, TimeUnit.SECONDS);
                }
            }
            lastDue = dueByValue.values().stream().mapToLong(Long::longValue).max().orElseThrow();
            int seenBeforeKill = countCommitted(broker.bootstrap(), start + 4_000);
            broker.kill();
            assertThat(seenBeforeKill).as("deliveries were under way at the kill").isBetween(1, RECORDS - 1);
        }

        try (BrokerProcess broker = BrokerProcess.start(dataDir, port, controllerPort, settings)) {
            Map<String, Integer> copies = new HashMap<>();
            List<String> early = new ArrayList<>();
            Properties c = consumerProps(broker.bootstrap());
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c, new StringDeserializer(),
                    new StringDeserializer())) {
                List<TopicPartition> tps = targetPartitions();
                consumer.assign(tps);
                consumer.seekToBeginning(tps);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
                while (copies.size() < RECORDS && System.nanoTime() < deadline) {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                        copies.merge(r.value(), 1, Integer::sum);
                        long delivered = DelayedDelivery.longValue(
                                r.headers().lastHeader(DelayedDelivery.DELIVERED_MS).value(), DelayedDelivery.DELIVERED_MS);
                        if (delivered < dueByValue.get(r.value()) || System.currentTimeMillis() < dueByValue.get(r.value())) {
                            early.add(r.value());
                        }
                    }
                }
                Map<TopicPartition, Long> ends = consumer.endOffsets(tps);
                while (tps.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                        copies.merge(r.value(), 1, Integer::sum);
                    }
                }
            }
            assertThat(System.currentTimeMillis()).isGreaterThan(lastDue);
            assertThat(copies.keySet()).as("every delayed record arrived").containsExactlyInAnyOrderElementsOf(
                    dueByValue.keySet());
            assertThat(copies).as("none twice").allSatisfy((value, n) -> assertThat(n).as(value).isEqualTo(1));
            assertThat(early).as("none early").isEmpty();
        }
    }

    /** How many copies a read-committed consumer sees by {@code untilMs} (wall clock). */
    private static int countCommitted(String bootstrap, long untilMs) {
        int count = 0;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps(bootstrap),
                new StringDeserializer(), new StringDeserializer())) {
            List<TopicPartition> tps = targetPartitions();
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            while (System.currentTimeMillis() < untilMs) {
                count += consumer.poll(Duration.ofMillis(100)).count();
            }
        }
        return count;
    }

    private static Properties consumerProps(String bootstrap) {
        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        return c;
    }

    private static List<TopicPartition> targetPartitions() {
        return List.of(new TopicPartition(TARGET, 0), new TopicPartition(TARGET, 1), new TopicPartition(TARGET, 2));
    }
}
