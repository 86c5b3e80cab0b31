package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.log.PartitionLog;

/**
 * Three brokers in this JVM, each a voter, with the real kafka-clients: they form one cluster, replicate every
 * partition (internal topics too), keep acknowledged records through a leader's controlled shutdown, and refuse what
 * cannot be replicated as asked.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ClusterIntegrationTest {

    @TempDir
    Path dir;

    private InProcessCluster cluster;
    private Admin admin;

    @BeforeEach
    void startCluster() throws Exception {
        cluster = InProcessCluster.start(dir, 3, Map.of());
        admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap()));
    }

    @AfterEach
    void stopCluster() {
        if (admin != null) {
            admin.close(Duration.ofSeconds(5));
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void threeNodesFormOneClusterWithReplicatedInternalTopics() throws Exception {
        Set<Integer> ids = new HashSet<>();
        for (Node node : admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)) {
            ids.add(node.id());
        }
        assertThat(ids).containsExactlyInAnyOrder(1, 2, 3);
        String clusterId = admin.describeCluster().clusterId().get(30, TimeUnit.SECONDS);
        for (int id : cluster.nodeIds()) {
            assertThat(cluster.broker(id).controller().image().clusterId()).isEqualTo(clusterId);
        }
        TopicDescription offsets = admin.describeTopics(List.of("__consumer_offsets")).allTopicNames()
                .get(30, TimeUnit.SECONDS).get("__consumer_offsets");
        assertThat(offsets.partitions()).allSatisfy(p -> assertThat(p.replicas()).hasSize(3));
    }

    @Test
    void everyAcknowledgedRecordReachesEveryReplica() throws Exception {
        createTopic("orders", 3, 3, Map.of("min.insync.replicas", "2"));
        List<RecordMetadata> acked = new ArrayList<>();
        try (KafkaProducer<String, String> producer = producer(Map.of())) {
            for (int i = 0; i < 300; i++) {
                acked.add(producer.send(new ProducerRecord<>("orders", i % 3, "k" + i, "v" + i)).get(30,
                        TimeUnit.SECONDS));
            }
        }
        for (int p = 0; p < 3; p++) {
            TopicPartition tp = new TopicPartition("orders", p);
            long expectedEnd = acked.stream().filter(m -> m.partition() == tp.partition()).count();
            await(() -> cluster.nodeIds().stream().allMatch(id -> logOf(id, tp).logEndOffset() == expectedEnd),
                    "every replica of " + tp + " holding " + expectedEnd + " records");
        }
        assertThat(consumeAll("orders", 3, 300)).hasSize(300);
    }

    @Test
    void leaderControlledShutdownLosesNoAcknowledgedRecord() throws Exception {
        createTopic("payments", 1, 3, Map.of("min.insync.replicas", "2"));
        TopicPartition tp = new TopicPartition("payments", 0);
        List<String> acked = new ArrayList<>();
        try (KafkaProducer<String, String> producer = producer(Map.of())) {
            for (int i = 0; i < 100; i++) {
                producer.send(new ProducerRecord<>("payments", "before-" + i)).get(30, TimeUnit.SECONDS);
                acked.add("before-" + i);
            }
            int leader = leaderOf(tp);
            cluster.stop(leader);
            await(() -> leaderOf(tp) >= 0 && leaderOf(tp) != leader, "a new leader of " + tp);
            for (int i = 0; i < 100; i++) {
                producer.send(new ProducerRecord<>("payments", "after-" + i)).get(60, TimeUnit.SECONDS);
                acked.add("after-" + i);
            }
            cluster.start(leader);
        }
        List<String> values = consumeAll("payments", 1, acked.size()).stream().map(ConsumerRecord::value).toList();
        assertThat(values).containsExactlyElementsOf(acked);
    }

    @Test
    void acksAllIsRefusedBelowMinInsyncReplicasAndAcceptedWhenTheIsrGrowsBack() throws Exception {
        createTopic("ledger", 1, 2, Map.of("min.insync.replicas", "2"));
        TopicPartition tp = new TopicPartition("ledger", 0);
        TopicDescription description = describe("ledger");
        int leader = description.partitions().get(0).leader().id();
        int follower = description.partitions().get(0).replicas().stream().mapToInt(Node::id)
                .filter(id -> id != leader).findFirst().orElseThrow();
        try (KafkaProducer<String, String> producer = producer(Map.of(ProducerConfig.RETRIES_CONFIG, "0",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false"))) {
            producer.send(new ProducerRecord<>("ledger", "first")).get(30, TimeUnit.SECONDS);
            cluster.stop(follower);
            await(() -> isrOf(tp).size() == 1, "the ISR of " + tp + " shrinking to the leader");
            assertThatThrownBy(() -> producer.send(new ProducerRecord<>("ledger", "refused")).get(30,
                    TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(NotEnoughReplicasException.class);
            cluster.start(follower);
            await(() -> isrOf(tp).size() == 2, "the ISR of " + tp + " growing back");
            producer.send(new ProducerRecord<>("ledger", "second")).get(30, TimeUnit.SECONDS);
        }
        List<String> values = consumeAll("ledger", 1, 2).stream().map(ConsumerRecord::value).toList();
        assertThat(values).containsExactly("first", "second");
    }

    @Test
    void refusesReplicationItCannotProvide() {
        assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("too-many", 1, (short) 4))).all()
                .get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(InvalidReplicationFactorException.class)
                .hasMessageContaining("4");
        assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("strict", 1, (short) 3)
                .configs(Map.of("min.insync.replicas", "4")))).all().get(30, TimeUnit.SECONDS))
                .hasCauseInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("min.insync.replicas");
    }

    private void createTopic(String name, int partitions, int replicationFactor, Map<String, String> configs)
            throws Exception {
        admin.createTopics(List.of(new NewTopic(name, partitions, (short) replicationFactor).configs(configs)))
                .all().get(30, TimeUnit.SECONDS);
        for (int p = 0; p < partitions; p++) {
            TopicPartition tp = new TopicPartition(name, p);
            await(() -> leaderOf(tp) >= 0 && replicasOf(tp).stream().allMatch(id -> cluster.broker(id)
                    .partitionManager().partition(tp).isPresent()), "the replicas of " + tp + " open");
        }
    }

    private TopicDescription describe(String topic) throws Exception {
        return admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic);
    }

    /** The leader in the metadata of a running node, or -1. */
    private int leaderOf(TopicPartition tp) {
        int any = cluster.runningIds().get(0);
        return cluster.broker(any).controller().image().topic(tp.topic())
                .map(t -> t.partitions().get(tp.partition()).leader()).orElse(-1);
    }

    private List<Integer> replicasOf(TopicPartition tp) {
        int any = cluster.runningIds().get(0);
        return cluster.broker(any).controller().image().topic(tp.topic())
                .map(t -> t.partitions().get(tp.partition()).replicas()).orElse(List.of());
    }

    private List<Integer> isrOf(TopicPartition tp) {
        int any = cluster.runningIds().get(0);
        return cluster.broker(any).controller().image().topic(tp.topic())
                .map(t -> t.partitions().get(tp.partition()).isr()).orElse(List.of());
    }

    private PartitionLog logOf(int nodeId, TopicPartition tp) {
        return cluster.broker(nodeId).partitionManager().partition(tp).orElseThrow().log();
    }

    private KafkaProducer<String, String> producer(Map<String, String> overrides) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        props.putAll(overrides);
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    private List<ConsumerRecord<String, String>> consumeAll(String topic, int partitions, int expected) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        List<ConsumerRecord<String, String>> records = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new StringDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                tps.add(new TopicPartition(topic, p));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (records.size() < expected && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            }
        }
        return records;
    }

    private void await(BooleanSupplier condition, String what) throws InterruptedException {
        cluster.awaitCondition(condition, what, Duration.ofSeconds(60));
    }
}
