package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A broker in its own process, killed with SIGKILL after producers got acks=all and a consumer group
 * committed offsets, then restarted on the same data: every acknowledged record is at its offset, the
 * topic, its configs and the committed offsets are there, and the broker serves on. SIGTERM then
 * stops it cleanly.
 */
@Timeout(240)
class BrokerCrashIntegrationTest {

    @TempDir
    Path tmp;

    @Test
    void shouldKeepEveryAcknowledgedRecordAndTopicAcrossASigkill() throws Exception {
        Path dataDir = tmp.resolve("data");
        int port = TestBrokers.freePort();
        int controllerPort = TestBrokers.freePort();
        Map<TopicPartition, Map<Long, String>> acknowledged = new HashMap<>();
        Map<TopicPartition, OffsetAndMetadata> committed;
        try (BrokerProcess broker = BrokerProcess.start(dataDir, port, controllerPort)) {
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap()))) {
                admin.createTopics(List.of(new NewTopic("durable", 3, (short) 1)
                        .configs(Map.of("retention.ms", "86400000", "segment.bytes", "65536")))).all().get();
            }
            try (KafkaProducer<String, String> producer = producer(broker.bootstrap())) {
                List<Future<RecordMetadata>> sends = new ArrayList<>();
                List<String> values = new ArrayList<>();
                for (int i = 0; i < 20_000; i++) {
                    String value = "record-" + i;
                    values.add(value);
                    sends.add(producer.send(new ProducerRecord<>("durable", "k" + (i % 97), value)));
                }
                producer.flush();
                for (int i = 0; i < sends.size(); i++) {
                    RecordMetadata md = sends.get(i).get(30, TimeUnit.SECONDS);
                    acknowledged.computeIfAbsent(new TopicPartition("durable", md.partition()), p -> new HashMap<>())
                            .put(md.offset(), values.get(i));
                }
            }
            committed = commitOffsets(broker.bootstrap());
            broker.kill();
        }
        assertThat(acknowledged.values().stream().mapToInt(Map::size).sum()).isEqualTo(20_000);

        try (BrokerProcess broker = BrokerProcess.start(dataDir, port, controllerPort)) {
            String output = java.nio.file.Files.readString(tmp.resolve("data-broker.out"));
            assertThat(output).contains("after an unclean shutdown");
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap()))) {
                assertThat(admin.describeTopics(List.of("durable")).allTopicNames().get().get("durable").partitions())
                        .hasSize(3);
                ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, "durable");
                Config config = admin.describeConfigs(List.of(resource)).all().get().get(resource);
                assertThat(config.get("segment.bytes").value()).isEqualTo("65536");
                assertThat(admin.listConsumerGroupOffsets("crash-g").partitionsToOffsetAndMetadata().get())
                        .isEqualTo(committed);
            }
            try (KafkaConsumer<String, String> consumer = consumer(broker.bootstrap())) {
                List<TopicPartition> tps = new ArrayList<>(acknowledged.keySet());
                consumer.assign(tps);
                consumer.seekToBeginning(tps);
                Map<TopicPartition, Map<Long, String>> read = new HashMap<>();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                int count = 0;
                while (count < 20_000 && System.nanoTime() < deadline) {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                        read.computeIfAbsent(new TopicPartition(r.topic(), r.partition()), p -> new HashMap<>())
                                .put(r.offset(), r.value());
                        count++;
                    }
                }
                assertThat(read).isEqualTo(acknowledged);
            }
            try (KafkaProducer<String, String> producer = producer(broker.bootstrap())) {
                RecordMetadata md = producer.send(new ProducerRecord<>("durable", 0, null, "after")).get();
                assertThat(md.offset()).isEqualTo(acknowledged.get(new TopicPartition("durable", 0)).size());
            }
            broker.terminate();
        }
        for (int p = 0; p < 3; p++) {
            assertThat(new File(dataDir.toFile(), "logs/durable-" + p + "/clean-shutdown")).exists();
        }
    }

    /** A group member commits a different offset per partition, as a consumer would after processing. */
    private static Map<TopicPartition, OffsetAndMetadata> commitOffsets(String bootstrap) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "crash-g");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.subscribe(List.of("durable"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (offsets.size() < 3 && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                    if (r.offset() == 100 + 7L * r.partition()) {
                        offsets.put(tp, new OffsetAndMetadata(r.offset() + 1, "processed up to " + r.offset()));
                    }
                }
            }
            consumer.commitSync(offsets);
        }
        assertThat(offsets).hasSize(3);
        return offsets;
    }

    private static KafkaProducer<String, String> producer(String bootstrap) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    private static KafkaConsumer<String, String> consumer(String bootstrap) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }
}
