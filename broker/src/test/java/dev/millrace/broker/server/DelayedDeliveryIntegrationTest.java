package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.protocol.delay.DelayedDelivery;

/**
 * Durable delayed delivery with the real kafka-clients: records written to the delay topic arrive
 * on their target once due, never early, once each, with their key, value and headers; delays
 * survive a restart; malformed requests are refused naming the header, and the broker keeps serving.
 */
@Timeout(120)
class DelayedDeliveryIntegrationTest {

    private static final String TARGET = "delayed-target";

    @TempDir
    Path dataDir;

    private BrokerServer broker;
    private String controllerPort;

    @AfterEach
    void stop() {
        if (broker != null) {
            broker.close();
        }
    }

    /** Starts (or restarts) the broker; the quorum port stays the same, as a restart needs. */
    private void start() throws Exception {
        if (controllerPort == null) {
            controllerPort = String.valueOf(TestBrokers.freePort());
        }
        broker = TestBrokers.start(dataDir, Map.of("controller.port", controllerPort));
    }

    static ProducerRecord<String, String> delayed(String target, Integer partition, String key, String value,
                                                  long dueMs) {
        List<Header> headers = new ArrayList<>(List.of(
                new RecordHeader(DelayedDelivery.TARGET_TOPIC, target.getBytes(StandardCharsets.UTF_8)),
                new RecordHeader(DelayedDelivery.DUE_MS, DelayedDelivery.encodeLong(dueMs)),
                new RecordHeader("app-header", "kept".getBytes(StandardCharsets.UTF_8))));
        if (partition != null) {
            headers.add(new RecordHeader(DelayedDelivery.TARGET_PARTITION, DelayedDelivery.encodeInt(partition)));
        }
        return new ProducerRecord<>(DelayedDelivery.TOPIC, null, null, key, value, headers);
    }

    @Test
    void delayedRecordsArriveOnceEachNeverEarlyWithTheirContent() throws Exception {
        start();
        createTarget();
        Map<String, Long> dueByValue = new HashMap<>();
        try (KafkaProducer<String, String> producer = producer()) {
            long now = System.currentTimeMillis();
            for (int i = 0; i < 200; i++) {
                long due = now + (i % 10) * 150L;
                String value = "v" + i;
                dueByValue.put(value, due);
                Integer partition = i % 3 == 0 ? Integer.valueOf(1) : null;
                producer.send(delayed(TARGET, partition, i % 2 == 0 ? "key-" + i : null, value, due)).get();
            }
        }
        List<ConsumerRecord<String, String>> got = consume(200, Duration.ofSeconds(30));
        assertThat(got).extracting(ConsumerRecord::value).containsExactlyInAnyOrderElementsOf(dueByValue.keySet());
        for (ConsumerRecord<String, String> r : got) {
            long due = dueByValue.get(r.value());
            long delivered = DelayedDelivery.longValue(r.headers().lastHeader(DelayedDelivery.DELIVERED_MS).value(),
                    DelayedDelivery.DELIVERED_MS);
            assertThat(delivered).as("%s delivered at %d, due %d", r.value(), delivered, due).isGreaterThanOrEqualTo(due);
            assertThat(DelayedDelivery.longValue(r.headers().lastHeader(DelayedDelivery.DUE_MS).value(),
                    DelayedDelivery.DUE_MS)).isEqualTo(due);
            assertThat(new String(r.headers().lastHeader("app-header").value(), StandardCharsets.UTF_8))
                    .isEqualTo("kept");
            assertThat(r.headers().lastHeader(DelayedDelivery.TARGET_TOPIC)).isNull();
            int i = Integer.parseInt(r.value().substring(1));
            if (i % 3 == 0) {
                assertThat(r.partition()).as("explicit target partition").isEqualTo(1);
            }
            if (i % 2 == 0) {
                assertThat(r.key()).isEqualTo("key-" + i);
            }
        }
    }

    @Test
    void malformedRequestsAreRefusedNamingTheProblemAndTheBrokerKeepsServing() throws Exception {
        start();
        createTarget();
        try (KafkaProducer<String, String> producer = producer()) {
            ProducerRecord<String, String> noDue = new ProducerRecord<>(DelayedDelivery.TOPIC, null, null, "k", "v",
                    List.of(new RecordHeader(DelayedDelivery.TARGET_TOPIC, TARGET.getBytes(StandardCharsets.UTF_8))));
            assertThatThrownBy(() -> producer.send(noDue).get()).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(InvalidRecordException.class)
                    .hasMessageContaining("header 'millrace.delay.due.ms' is missing");
            long due = System.currentTimeMillis();
            assertThatThrownBy(() -> producer.send(delayed("no-such-topic", null, null, "v", due)).get())
                    .cause().hasMessageContaining("target topic 'no-such-topic' does not exist");
            assertThatThrownBy(() -> producer.send(delayed(TARGET, 7, null, "v", due)).get())
                    .cause().hasMessageContaining("target partition 7 is outside 0..1");
            assertThatThrownBy(() -> producer.send(delayed(TARGET, null, null, "v", due + 400L * 24 * 3600 * 1000))
                    .get()).cause().hasMessageContaining("delay.max.ms");

            producer.send(delayed(TARGET, null, null, "fine", due)).get();
        }
        assertThat(consume(1, Duration.ofSeconds(20))).extracting(ConsumerRecord::value).containsExactly("fine");
    }

    @Test
    void pendingDelaysSurviveARestartAndArriveOnceAfterIt() throws Exception {
        start();
        createTarget();
        long due;
        try (KafkaProducer<String, String> producer = producer()) {
            producer.send(delayed(TARGET, 0, null, "early", System.currentTimeMillis())).get();
            assertThat(consume(1, Duration.ofSeconds(20))).extracting(ConsumerRecord::value).containsExactly("early");
            due = System.currentTimeMillis() + 2_000;
            for (int i = 0; i < 50; i++) {
                producer.send(delayed(TARGET, null, null, "later-" + i, due)).get();
            }
            producer.send(delayed(TARGET, null, null, "in-30-days", System.currentTimeMillis()
                    + Duration.ofDays(30).toMillis())).get();
        }
        assertThat(broker.delayService().pendingCount()).isEqualTo(51);
        broker.close();
        broker = null;
        assertThat(dataDir.resolve("delay-checkpoints").resolve(DelayedDelivery.TOPIC + "-0")).exists();
        start();
        List<ConsumerRecord<String, String>> got = consume(51, Duration.ofSeconds(30));
        assertThat(got).extracting(ConsumerRecord::value).doesNotHaveDuplicates().hasSize(51).contains("early",
                "later-0", "later-49").doesNotContain("in-30-days");
        assertThat(System.currentTimeMillis()).isGreaterThanOrEqualTo(due);
        assertThat(broker.delayService().pendingCount()).as("the 30-day delay waits on after the restart")
                .isEqualTo(1);
    }

    private void createTarget() throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                TestBrokers.bootstrap(broker)))) {
            admin.createTopics(List.of(new NewTopic(TARGET, 2, (short) 1))).all().get();
        }
    }

    private KafkaProducer<String, String> producer() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestBrokers.bootstrap(broker));
        p.put(ProducerConfig.RETRIES_CONFIG, "0");
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    /** Reads the target read-committed from the start until {@code expected} records or the deadline; then drains what is there. */
    private List<ConsumerRecord<String, String>> consume(int expected, Duration within) {
        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestBrokers.bootstrap(broker));
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        List<ConsumerRecord<String, String>> out = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c, new StringDeserializer(),
                new StringDeserializer())) {
            List<TopicPartition> tps = List.of(new TopicPartition(TARGET, 0), new TopicPartition(TARGET, 1));
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            long deadline = System.nanoTime() + within.toNanos();
            while (out.size() < expected && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(100)).forEach(out::add);
            }
            consumer.poll(Duration.ofMillis(300)).forEach(out::add);
        }
        return out;
    }
}
