package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;


/** A single broker on loopback driven by the real kafka-clients producer, consumer and Admin client. */
@Timeout(120)
class BrokerIntegrationTest {

    @TempDir
    Path dataDir;

    private BrokerServer broker;
    private String bootstrap;

    @BeforeEach
    void startBroker() throws Exception {
        broker = TestBrokers.start(dataDir, Map.of("num.partitions", "2"));
        bootstrap = TestBrokers.bootstrap(broker);
    }

    @AfterEach
    void stopBroker() {
        if (broker != null) {
            broker.close();
        }
    }

    private Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
    }

    private KafkaProducer<String, String> producer(String acks, String compression) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, acks);
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    private KafkaConsumer<String, String> consumer() {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }

    private static List<ConsumerRecord<String, String>> pollUntil(KafkaConsumer<String, String> consumer, int count) {
        List<ConsumerRecord<String, String>> out = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (out.size() < count && System.nanoTime() < deadline) {
            consumer.poll(Duration.ofMillis(200)).forEach(out::add);
        }
        return out;
    }

    @Test
    void shouldCreateDescribeAlterGrowAndDeleteTopicsWithTheAdminClient() throws Exception {
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic("orders", 3, (short) 1)
                    .configs(Map.of("retention.ms", "60000", "cleanup.policy", "delete")))).all().get();
            assertThat(admin.listTopics().names().get()).contains("orders");
            TopicDescription description = admin.describeTopics(List.of("orders")).allTopicNames().get().get("orders");
            assertThat(description.partitions()).hasSize(3);
            assertThat(description.partitions().get(0).leader().port()).isEqualTo(broker.boundAddress().getPort());

            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, "orders");
            Config config = admin.describeConfigs(List.of(resource)).all().get().get(resource);
            assertThat(config.get("retention.ms").value()).isEqualTo("60000");
            assertThat(config.get("retention.ms").source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG);
            assertThat(config.get("segment.bytes").source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);

            admin.incrementalAlterConfigs(Map.of(resource, List.of(
                    new AlterConfigOp(new ConfigEntry("retention.ms", "120000"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("max.message.bytes", "2048"), AlterConfigOp.OpType.SET))))
                    .all().get();
            config = admin.describeConfigs(List.of(resource)).all().get().get(resource);
            assertThat(config.get("retention.ms").value()).isEqualTo("120000");
            assertThat(config.get("max.message.bytes").value()).isEqualTo("2048");

            admin.createPartitions(Map.of("orders", NewPartitions.increaseTo(5))).all().get();
            assertThat(admin.describeTopics(List.of("orders")).allTopicNames().get().get("orders").partitions())
                    .hasSize(5);

            admin.deleteTopics(List.of("orders")).all().get();
            assertThat(admin.listTopics().names().get()).doesNotContain("orders");
        }
    }

    @Test
    void shouldAnswerBadAdminRequestsWithTheKafkaErrorAndAMessage() throws Exception {
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic("dup", 1, (short) 1))).all().get();
            assertCause(() -> admin.createTopics(List.of(new NewTopic("dup", 1, (short) 1))).all().get(),
                    TopicExistsException.class, "dup");
            assertCause(() -> admin.createTopics(List.of(new NewTopic("bad/name", 1, (short) 1))).all().get(),
                    InvalidTopicException.class, "bad/name");
            assertCause(() -> admin.createTopics(List.of(new NewTopic("zero", 0, (short) 1))).all().get(),
                    InvalidPartitionsException.class, "");
            assertCause(() -> admin.createTopics(List.of(new NewTopic("rf", 1, (short) 3))).all().get(),
                    InvalidReplicationFactorException.class, "3");
            assertCause(() -> admin.createTopics(List.of(new NewTopic("cfg", 1, (short) 1)
                    .configs(Map.of("retention.ms", "soon")))).all().get(), InvalidConfigurationException.class,
                    "retention.ms");
            assertCause(() -> admin.deleteTopics(List.of("missing")).all().get(),
                    UnknownTopicOrPartitionException.class, "");
            assertCause(() -> admin.createPartitions(Map.of("dup", NewPartitions.increaseTo(1))).all().get(),
                    InvalidPartitionsException.class, "");
            assertThat(admin.listTopics().names().get()).containsExactly("dup");
        }
    }

    private static void assertCause(org.assertj.core.api.ThrowableAssert.ThrowingCallable call,
                                    Class<? extends Throwable> type, String messagePart) {
        assertThatThrownBy(call).isInstanceOf(ExecutionException.class).cause().isInstanceOf(type)
                .hasMessageContaining(messagePart);
    }

    @Test
    void shouldDeliverWhatProducersWroteInOrderWithKeysHeadersAndEveryCompression() throws Exception {
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic("events", 2, (short) 1))).all().get();
        }
        Map<Integer, List<String>> sent = new HashMap<>();
        List<String[]> settings = List.of(new String[] {"all", "none"}, new String[] {"1", "gzip"},
                new String[] {"all", "snappy"}, new String[] {"1", "lz4"}, new String[] {"all", "zstd"});
        int n = 0;
        for (String[] s : settings) {
            try (KafkaProducer<String, String> producer = producer(s[0], s[1])) {
                for (int i = 0; i < 200; i++, n++) {
                    ProducerRecord<String, String> record = new ProducerRecord<>("events", null, "key-" + (n % 7),
                            "value-" + n, List.of(new RecordHeader("codec", s[1].getBytes(StandardCharsets.UTF_8))));
                    RecordMetadata md = producer.send(record).get();
                    sent.computeIfAbsent(md.partition(), p -> new ArrayList<>()).add("value-" + n);
                }
            }
        }
        try (KafkaProducer<String, String> fireAndForget = producer("0", "none")) {
            for (int i = 0; i < 50; i++, n++) {
                fireAndForget.send(new ProducerRecord<>("events", 0, null, "value-" + n));
                sent.computeIfAbsent(0, p -> new ArrayList<>()).add("value-" + n);
            }
            fireAndForget.flush();
        }
        try (KafkaConsumer<String, String> consumer = consumer()) {
            List<TopicPartition> tps = List.of(new TopicPartition("events", 0), new TopicPartition("events", 1));
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            List<ConsumerRecord<String, String>> got = pollUntil(consumer, n);
            assertThat(got).hasSize(n);
            for (int partition = 0; partition < 2; partition++) {
                int p = partition;
                List<ConsumerRecord<String, String>> inPartition = got.stream().filter(r -> r.partition() == p).toList();
                assertThat(inPartition).extracting(ConsumerRecord::value).containsExactlyElementsOf(sent.get(p));
                for (int i = 0; i < inPartition.size(); i++) {
                    assertThat(inPartition.get(i).offset()).isEqualTo(i);
                }
            }
            ConsumerRecord<String, String> first = got.get(0);
            assertThat(first.key()).startsWith("key-");
            assertThat(new String(first.headers().lastHeader("codec").value(), StandardCharsets.UTF_8)).isEqualTo("none");
            assertThat(consumer.endOffsets(tps).values().stream().mapToLong(Long::longValue).sum()).isEqualTo(n);
            assertThat(consumer.beginningOffsets(tps).values()).containsOnly(0L);
        }
    }

    @Test
    void shouldFindOffsetsByTimestampAndAutoCreateTopicsOnFirstUse() throws Exception {
        long base = System.currentTimeMillis() - 100_000;
        try (KafkaProducer<String, String> producer = producer("all", "none")) {
            for (int i = 0; i < 10; i++) {
                producer.send(new ProducerRecord<>("auto", 0, base + i * 1000L, null, "v" + i)).get();
            }
        }
        try (KafkaConsumer<String, String> consumer = consumer()) {
            TopicPartition tp = new TopicPartition("auto", 0);
            Map<TopicPartition, OffsetAndTimestamp> found = consumer.offsetsForTimes(Map.of(tp, base + 4500));
            assertThat(found.get(tp).offset()).isEqualTo(5);
            assertThat(found.get(tp).timestamp()).isEqualTo(base + 5000);
            assertThat(consumer.offsetsForTimes(Map.of(tp, base + 50_000)).get(tp)).isNull();
        }
        try (Admin admin = admin()) {
            assertThat(admin.describeTopics(List.of("auto")).allTopicNames().get().get("auto").partitions()).hasSize(2);
        }
    }

    @Test
    void shouldCloseAConnectionThatSendsGarbageAndKeepServingOthers() throws Exception {
        try (KafkaProducer<String, String> producer = producer("all", "none")) {
            producer.send(new ProducerRecord<>("steady", 0, null, "before")).get();
        }
        // a frame whose header names an API key that does not exist
        assertThat(sendRaw(new byte[] {0, 0, 0, 8, 0x7f, 0x7f, 0, 0, 0, 0, 0, 1})).isEqualTo(-1);
        // a frame claiming 2 GB: rejected from its size alone
        assertThat(sendRaw(new byte[] {0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff, 1, 2, 3})).isEqualTo(-1);
        // a Produce v9 header (client id null, no tagged fields) with a body that does not parse
        assertThat(sendRaw(new byte[] {0, 0, 0, 13, 0, 0, 0, 9, 0, 0, 0, 7, (byte) 0xff, (byte) 0xff, 0, 1, 2}))
                .isEqualTo(-1);
        try (KafkaProducer<String, String> producer = producer("all", "none")) {
            producer.send(new ProducerRecord<>("steady", 0, null, "after")).get();
        }
        try (KafkaConsumer<String, String> consumer = consumer()) {
            TopicPartition tp = new TopicPartition("steady", 0);
            consumer.assign(Set.of(tp));
            consumer.seekToBeginning(Set.of(tp));
            assertThat(pollUntil(consumer, 2)).extracting(ConsumerRecord::value).containsExactly("before", "after");
        }
    }

    /**
     * min.insync.replicas above the replication factor is refused at creation (issue 22), so one broker
     * can no longer build a partition whose ISR is below it; NOT_ENOUGH_REPLICAS on acks=all needs an ISR
     * that shrank, which the multi-broker replication tests cover.
     */
    @Test
    void shouldRefuseATopicWhoseMinInsyncReplicasExceedsItsReplicationFactor() throws Exception {
        try (Admin admin = admin()) {
            assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("strict", 1, (short) 1)
                    .configs(Map.of("min.insync.replicas", "2")))).all().get())
                    .isInstanceOf(ExecutionException.class).cause()
                    .isInstanceOf(org.apache.kafka.common.errors.InvalidConfigurationException.class)
                    .hasMessageContaining("min.insync.replicas 2 is larger than the replication factor 1");
        }
    }

    @Test
    void shouldCommitAsynchronouslyAndSeekToTheEnd() throws Exception {
        try (KafkaProducer<String, String> producer = producer("all", "none")) {
            for (int i = 0; i < 20; i++) {
                producer.send(new ProducerRecord<>("async", 0, null, "v" + i)).get();
            }
        }
        TopicPartition tp = new TopicPartition("async", 0);
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "async-g");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.subscribe(List.of("async"));
            assertThat(pollUntil(consumer, 20)).hasSize(20);
            java.util.concurrent.CompletableFuture<Map<TopicPartition, OffsetAndMetadata>> done =
                    new java.util.concurrent.CompletableFuture<>();
            consumer.commitAsync(Map.of(tp, new OffsetAndMetadata(12, "async")), (offsets, error) -> {
                if (error != null) {
                    done.completeExceptionally(error);
                } else {
                    done.complete(offsets);
                }
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!done.isDone() && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(50));
            }
            assertThat(done.get()).containsKey(tp);
            assertThat(consumer.committed(Set.of(tp)).get(tp).offset()).isEqualTo(12);
            assertThat(consumer.committed(Set.of(tp)).get(tp).metadata()).isEqualTo("async");
            consumer.seekToEnd(Set.of(tp));
            assertThat(consumer.position(tp)).isEqualTo(20);
        }
    }

    @Test
    void shouldDeleteRecordsBelowAnOffset() throws Exception {
        try (KafkaProducer<String, String> producer = producer("all", "none")) {
            for (int i = 0; i < 10; i++) {
                producer.send(new ProducerRecord<>("trim", 0, null, "v" + i)).get();
            }
        }
        TopicPartition tp = new TopicPartition("trim", 0);
        try (Admin admin = admin()) {
            long low = admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(6))).lowWatermarks().get(tp).get()
                    .lowWatermark();
            assertThat(low).isEqualTo(6);
            assertCause(() -> admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(11))).all().get(),
                    org.apache.kafka.common.errors.OffsetOutOfRangeException.class, "");
        }
        try (KafkaConsumer<String, String> consumer = consumer()) {
            consumer.assign(Set.of(tp));
            assertThat(consumer.beginningOffsets(Set.of(tp))).containsEntry(tp, 6L);
            consumer.seek(tp, 2);
            assertThat(pollUntil(consumer, 4)).extracting(ConsumerRecord::value).containsExactly("v6", "v7", "v8", "v9");
        }
    }

    @Test
    void shouldStoreWhatADefaultIdempotentProducerSendsExactlyOnce() throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.LINGER_MS_CONFIG, "2");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(),
                new StringSerializer())) {
            List<Future<RecordMetadata>> sends = new ArrayList<>();
            for (int i = 0; i < 2000; i++) {
                sends.add(producer.send(new ProducerRecord<>("idem", 0, null, "v" + i)));
            }
            for (int i = 0; i < sends.size(); i++) {
                assertThat(sends.get(i).get().offset()).isEqualTo(i);
            }
        }
        try (KafkaConsumer<String, String> consumer = consumer()) {
            TopicPartition tp = new TopicPartition("idem", 0);
            consumer.assign(Set.of(tp));
            consumer.seekToBeginning(Set.of(tp));
            List<ConsumerRecord<String, String>> got = pollUntil(consumer, 2000);
            assertThat(got).hasSize(2000);
            assertThat(got.get(1999).value()).isEqualTo("v1999");
        }
    }

    /** Sends raw bytes and returns the first int the broker answers with, or -1 if it closed the connection. */
    private int sendRaw(byte[] bytes) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", broker.boundAddress().getPort())) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write(bytes);
            out.flush();
            InputStream in = socket.getInputStream();
            try {
                return new DataInputStream(in).readInt();
            } catch (java.io.EOFException e) {
                return -1;
            }
        }
    }
}
