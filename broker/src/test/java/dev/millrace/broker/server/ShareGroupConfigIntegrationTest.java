package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.share.LogShareStateStore;
import dev.millrace.broker.share.ShareGroupConfigs;
import dev.millrace.broker.share.ShareStateSerde;

/**
 * Per-group {@code share.auto.offset.reset} through the Admin client (IncrementalAlterConfigs and
 * DescribeConfigs on GROUP resources) on a broker whose default is {@code latest}; settings an earlier version kept in
 * the share-state topic are moved into the metadata log at start.
 */
@Timeout(60)
class ShareGroupConfigIntegrationTest {

    private static final String TOPIC = "queue";

    @TempDir
    Path dataDir;

    private BrokerServer broker;

    @AfterEach
    void stop() {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void shouldReadFromTheLogStartWhenTheGroupIsSetToEarliestAndKeepTheSettingAcrossARestart() throws Exception {
        Map<String, String> settings = Map.of("controller.port", String.valueOf(TestBrokers.freePort()));
        broker = TestBrokers.start(dataDir, settings);
        ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, "readers");
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
            produce(10);
            admin.incrementalAlterConfigs(Map.of(group, List.of(new AlterConfigOp(
                    new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET)))).all().get();
            assertThat(autoOffsetReset(admin, group).value()).isEqualTo("earliest");
        }
        broker.close();
        broker = TestBrokers.start(dataDir, settings);

        try (Admin admin = admin()) {
            ConfigEntry entry = autoOffsetReset(admin, group);
            assertThat(entry.value()).isEqualTo("earliest");
            assertThat(entry.source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_GROUP_CONFIG);
        }
        List<String> received = new ArrayList<>();
        try (KafkaShareConsumer<String, String> consumer = shareConsumer("readers")) {
            consumer.subscribe(List.of(TOPIC));
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (received.size() < 10 && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    received.add(record.value());
                }
            }
        }
        assertThat(received).as("records written before the group's first member, read from the log start")
                .containsExactlyInAnyOrder("0", "1", "2", "3", "4", "5", "6", "7", "8", "9");
    }

    @Test
    void shouldRejectUnknownSettingsAndBadValuesAndDeleteBackToTheBrokerDefault() throws Exception {
        broker = TestBrokers.start(dataDir, Map.of());
        ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, "readers");
        try (Admin admin = admin()) {
            assertThat(autoOffsetReset(admin, group).value()).isEqualTo("latest");
            assertThat(autoOffsetReset(admin, group).source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);

            assertThatThrownBy(() -> set(admin, group, "share.auto.offset.reset", "sometimes"))
                    .isInstanceOf(ExecutionException.class).cause()
                    .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("earliest or latest");
            assertThatThrownBy(() -> set(admin, group, "share.no.such.setting", "1"))
                    .isInstanceOf(ExecutionException.class).cause()
                    .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("share.no.such.setting");

            set(admin, group, "share.auto.offset.reset", "earliest");
            assertThat(autoOffsetReset(admin, group).value()).isEqualTo("earliest");
            admin.incrementalAlterConfigs(Map.of(group, List.of(new AlterConfigOp(
                    new ConfigEntry("share.auto.offset.reset", ""), AlterConfigOp.OpType.DELETE)))).all().get();
            assertThat(autoOffsetReset(admin, group).value()).isEqualTo("latest");
            assertThat(autoOffsetReset(admin, group).source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);
        }
    }

    @Test
    void aReadCommittedGroupNeverGetsAbortedOrOpenTransactionalRecords() throws Exception {
        broker = TestBrokers.start(dataDir, Map.of());
        ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, "committed-readers");
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
            set(admin, group, "share.auto.offset.reset", "earliest");
            set(admin, group, "share.isolation.level", "read_committed");
            assertThatThrownBy(() -> set(admin, group, "share.isolation.level", "sometimes"))
                    .cause().isInstanceOf(InvalidConfigurationException.class)
                    .hasMessageContaining("read_committed or read_uncommitted");
            assertThat(admin.describeConfigs(List.of(group)).all().get().get(group).get("share.isolation.level")
                    .value()).isEqualTo("read_committed");
        }
        Map<String, Object> txn = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestBrokers.bootstrap(broker),
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, "queue-writer");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(txn, new StringSerializer(),
                new StringSerializer())) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(TOPIC, 0, null, "committed-1"));
            producer.commitTransaction();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(TOPIC, 0, null, "aborted"));
            producer.flush();
            producer.abortTransaction();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(TOPIC, 0, null, "committed-2"));
            producer.commitTransaction();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(TOPIC, 0, null, "open-then-committed"));
            producer.flush();

            List<String> received = new ArrayList<>();
            try (KafkaShareConsumer<String, String> consumer = shareConsumer("committed-readers")) {
                consumer.subscribe(List.of(TOPIC));
                long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                while (received.size() < 2 && System.nanoTime() < deadline) {
                    consumer.poll(Duration.ofMillis(200)).forEach(r -> received.add(r.value()));
                }
                consumer.poll(Duration.ofMillis(500)).forEach(r -> received.add(r.value()));
                assertThat(received).as("committed only; the open transaction is held back")
                        .containsExactly("committed-1", "committed-2");

                producer.commitTransaction();
                deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                while (received.size() < 3 && System.nanoTime() < deadline) {
                    consumer.poll(Duration.ofMillis(200)).forEach(r -> received.add(r.value()));
                }
            }
            assertThat(received).containsExactly("committed-1", "committed-2", "open-then-committed");
        }
    }

    /**
     * Two overlapping aborted transactions where the one that began first ends first: the share-partition asks for
     * the aborted transactions of the later one's batch alone, and must find it behind the earlier one's entry.
     */
    @Test
    void aReadCommittedGroupSkipsAnAbortedTransactionThatOverlapsAnEarlierOne() throws Exception {
        broker = TestBrokers.start(dataDir, Map.of());
        ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, "overlap-readers");
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic("overlap", 1, (short) 1))).all().get();
            set(admin, group, "share.auto.offset.reset", "earliest");
            set(admin, group, "share.isolation.level", "read_committed");
        }
        try (KafkaProducer<String, String> first = transactional("first");
             KafkaProducer<String, String> second = transactional("second")) {
            first.beginTransaction();
            first.send(new ProducerRecord<>("overlap", 0, null, "first-aborted")).get();
            second.beginTransaction();
            for (int i = 0; i < 5; i++) {
                second.send(new ProducerRecord<>("overlap", 0, null, "second-aborted-" + i));
            }
            second.flush();
            first.abortTransaction();
            second.abortTransaction();
            first.beginTransaction();
            first.send(new ProducerRecord<>("overlap", 0, null, "committed"));
            first.commitTransaction();
        }
        List<String> received = new ArrayList<>();
        try (KafkaShareConsumer<String, String> consumer = shareConsumer("overlap-readers")) {
            consumer.subscribe(List.of("overlap"));
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (!received.contains("committed") && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(r -> received.add(r.value()));
            }
        }
        assertThat(received).containsExactly("committed");
    }

    private KafkaProducer<String, String> transactional(String id) {
        KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestBrokers.bootstrap(broker),
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, id), new StringSerializer(), new StringSerializer());
        producer.initTransactions();
        return producer;
    }

    private static void set(Admin admin, ConfigResource group, String name, String value) throws Exception {
        admin.incrementalAlterConfigs(Map.of(group, List.of(new AlterConfigOp(new ConfigEntry(name, value),
                AlterConfigOp.OpType.SET)))).all().get();
    }

    private static ConfigEntry autoOffsetReset(Admin admin, ConfigResource group) throws Exception {
        Config config = admin.describeConfigs(List.of(group)).all().get().get(group);
        return config.get("share.auto.offset.reset");
    }

    private Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, TestBrokers.bootstrap(broker)));
    }

    @Test
    void shouldMoveSettingsAnEarlierVersionKeptInTheShareStateTopicIntoTheMetadataLogOnce() throws Exception {
        Map<String, String> settings = Map.of("controller.port", String.valueOf(TestBrokers.freePort()));
        broker = TestBrokers.start(dataDir, settings);
        String groupId = "legacy-readers";
        ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, groupId);
        try (Admin admin = admin(); KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestBrokers.bootstrap(broker)), new ByteArraySerializer(),
                new ByteArraySerializer())) {
            int partitions = admin.describeTopics(List.of(LogShareStateStore.TOPIC)).allTopicNames().get()
                    .get(LogShareStateStore.TOPIC).partitions().size();
            // the record an earlier version wrote for the group's settings (key version 1)
            producer.send(new ProducerRecord<>(LogShareStateStore.TOPIC, Utils.abs(groupId.hashCode()) % partitions,
                    ShareStateSerde.groupConfigKey(groupId),
                    ShareStateSerde.groupConfigValue(Map.of(ShareGroupConfigs.DELIVERY_COUNT_LIMIT, "4")))).get();
        }
        broker.close();
        broker = TestBrokers.start(dataDir, settings);

        assertThat(broker.controller().image().groupConfigs(groupId))
                .containsExactly(Map.entry(ShareGroupConfigs.DELIVERY_COUNT_LIMIT, "4"));
        try (Admin admin = admin()) {
            ConfigEntry limit = describe(admin, group, ShareGroupConfigs.DELIVERY_COUNT_LIMIT);
            assertThat(limit.value()).isEqualTo("4");
            assertThat(limit.source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_GROUP_CONFIG);
            admin.incrementalAlterConfigs(Map.of(group, List.of(new AlterConfigOp(
                    new ConfigEntry(ShareGroupConfigs.DELIVERY_COUNT_LIMIT, ""), AlterConfigOp.OpType.DELETE))))
                    .all().get();
        }
        broker.close();
        broker = TestBrokers.start(dataDir, settings);

        // the old record was dropped once moved: the deletion holds
        assertThat(broker.controller().image().groupConfigs(groupId)).isEmpty();
        try (Admin admin = admin()) {
            assertThat(describe(admin, group, ShareGroupConfigs.DELIVERY_COUNT_LIMIT).source())
                    .isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);
        }
    }

    private static ConfigEntry describe(Admin admin, ConfigResource group, String name) throws Exception {
        return admin.describeConfigs(List.of(group)).all().get().get(group).get(name);
    }

    private void produce(int count) throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestBrokers.bootstrap(broker)), new StringSerializer(),
                new StringSerializer())) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(TOPIC, 0, null, Integer.toString(i))).get();
            }
        }
    }

    private KafkaShareConsumer<String, String> shareConsumer(String groupId) {
        return new KafkaShareConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestBrokers.bootstrap(broker),
                ConsumerConfig.GROUP_ID_CONFIG, groupId), new StringDeserializer(), new StringDeserializer());
    }
}
