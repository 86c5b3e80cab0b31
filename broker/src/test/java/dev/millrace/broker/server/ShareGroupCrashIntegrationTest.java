package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.share.LogShareStateStore;
import dev.millrace.broker.share.ShareStateSerde;

/**
 * A share group's state across a SIGKILL of the broker's process: a member accepts thousands of records while another
 * holds the first one, so the share-partition's in-flight state grows past the size where saves become deltas;
 * the broker is killed and restarted on the same data, and a new member gets exactly the records not accepted before,
 * the held one again with its delivery counted.
 */
@Timeout(240)
class ShareGroupCrashIntegrationTest {

    private static final String TOPIC = "work";
    private static final String GROUP = "crash-workers";
    private static final int RECORDS = 12_000;
    private static final int ACCEPT_BEFORE_KILL = 9_000;

    @TempDir
    Path tmp;

    @Test
    void shouldNeitherRedeliverAcceptedRecordsNorLoseOthersAcrossASigkill() throws Exception {
        Path dataDir = tmp.resolve("data");
        int port = TestBrokers.freePort();
        int controllerPort = TestBrokers.freePort();
        List<String> settings = List.of("group.share.auto.offset.reset=earliest",
                "group.share.partition.max.record.locks=" + RECORDS, "group.share.record.lock.duration.ms=180000");
        Set<String> acceptedBefore = new HashSet<>();
        String held;
        try (BrokerProcess broker = BrokerProcess.start(dataDir, port, controllerPort, settings)) {
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap()))) {
                admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
            }
            produce(broker.bootstrap());
            // a member takes the first record and neither acknowledges it nor polls again: it stays acquired, and the
            // share-partition's start offset stays behind it while the other member accepts what follows
            KafkaShareConsumer<String, String> holder = shareConsumer(broker.bootstrap(), 1);
            ConsumerRecords<String, String> first = ConsumerRecords.empty();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (first.isEmpty() && System.nanoTime() < deadline) {
                first = holder.poll(Duration.ofMillis(100));
            }
            assertThat(first.count()).isEqualTo(1);
            held = first.iterator().next().value();
            KafkaShareConsumer<String, String> before = shareConsumer(broker.bootstrap(), 500);
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (acceptedBefore.size() < ACCEPT_BEFORE_KILL && System.nanoTime() < deadline) {
                ConsumerRecords<String, String> polled = before.poll(Duration.ofMillis(100));
                for (ConsumerRecord<String, String> record : polled) {
                    if (acceptedBefore.size() < ACCEPT_BEFORE_KILL) {
                        before.acknowledge(record, AcknowledgeType.ACCEPT);
                        acceptedBefore.add(record.value());
                    } else {
                        before.acknowledge(record, AcknowledgeType.RELEASE);
                    }
                }
                if (!polled.isEmpty()) {
                    before.commitSync().values().forEach(r -> assertThat(r).isEmpty());
                }
            }
            assertThat(acceptedBefore).hasSize(ACCEPT_BEFORE_KILL);
            assertThat(stateDeltas(broker.bootstrap())).as("saves of a large in-flight state are deltas")
                    .isPositive();
            broker.kill();
            before.close(Duration.ZERO);
            holder.close(Duration.ZERO);
        }

        try (BrokerProcess broker = BrokerProcess.start(dataDir, port, controllerPort, settings)) {
            Map<String, Integer> acceptedAfter = new HashMap<>();
            try (KafkaShareConsumer<String, String> after = shareConsumer(broker.bootstrap(), 500)) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                while (acceptedBefore.size() + acceptedAfter.size() < RECORDS && System.nanoTime() < deadline) {
                    ConsumerRecords<String, String> polled = after.poll(Duration.ofMillis(100));
                    for (ConsumerRecord<String, String> record : polled) {
                        assertThat(acceptedBefore).as("accepted before the kill").doesNotContain(record.value());
                        assertThat(acceptedAfter.put(record.value(), record.deliveryCount().orElse((short) -1)
                                .intValue())).as("%s accepted twice", record.value()).isNull();
                        after.acknowledge(record, AcknowledgeType.ACCEPT);
                    }
                    if (!polled.isEmpty()) {
                        after.commitSync().values().forEach(r -> assertThat(r).isEmpty());
                    }
                }
            }
            assertThat(acceptedAfter).hasSize(RECORDS - ACCEPT_BEFORE_KILL);
            assertThat(acceptedAfter.get(held)).as("the record held at the kill, delivered a second time")
                    .isEqualTo(2);
            broker.terminate();
        }
    }

    private static void produce(String bootstrap) throws Exception {
        Map<String, Object> config = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.LINGER_MS_CONFIG, 5);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config, new StringSerializer(),
                new StringSerializer())) {
            for (int i = 0; i < RECORDS; i++) {
                producer.send(new ProducerRecord<>(TOPIC, String.valueOf(i)));
            }
            producer.flush();
        }
    }

    private static KafkaShareConsumer<String, String> shareConsumer(String bootstrap, int maxPollRecords) {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
        config.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
        config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, maxPollRecords);
        KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(config, new StringDeserializer(),
                new StringDeserializer());
        consumer.subscribe(List.of(TOPIC));
        return consumer;
    }

    /** How many share-state delta records {@value LogShareStateStore#TOPIC} holds, read with a plain consumer. */
    private static int stateDeltas(String bootstrap) {
        Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = new ArrayList<>();
            consumer.partitionsFor(LogShareStateStore.TOPIC).forEach(p -> partitions.add(
                    new TopicPartition(p.topic(), p.partition())));
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            int deltas = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))
                    && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(100))) {
                    if (ShareStateSerde.keyVersion(ByteBuffer.wrap(record.key()))
                            == ShareStateSerde.DELTA_KEY_VERSION) {
                        deltas++;
                    }
                }
            }
            return deltas;
        }
    }
}
