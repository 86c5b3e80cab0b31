package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A running {@code KafkaShareConsumer} follows a share-partition whose leadership moves between two live brokers
 * (a reassignment and a preferred election, as when a restarted broker takes its partitions back). kafka-clients 4.4
 * keeps fetching a partition from the broker it last fetched it from until a response names the new leader (KIP-951)
 * or its metadata does; the old leader must name it (NOT_LEADER_OR_FOLLOWER with the current leader and its
 * endpoint). Without that, the failover chaos suite saw the consumer send the moved partition back to the old
 * leader thousands of times a second and consume nothing more of it for minutes.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ShareLeaderMoveIntegrationTest {

    private static final String TOPIC = "moving";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private InProcessCluster cluster;
    private Admin admin;
    private KafkaProducer<String, String> producer;
    private KafkaShareConsumer<String, String> consumer;

    @BeforeEach
    void startCluster() throws Exception {
        cluster = InProcessCluster.start(dir, 3, Map.of("group.share.auto.offset.reset", "earliest",
                "auto.leader.rebalance.enable", "false"));
        admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap()));
        producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap(),
                ProducerConfig.ACKS_CONFIG, "all"), new StringSerializer(), new StringSerializer());
    }

    @AfterEach
    void stopCluster() {
        if (consumer != null) {
            consumer.close(Duration.ofSeconds(1));
        }
        if (producer != null) {
            producer.close(Duration.ofSeconds(5));
        }
        if (admin != null) {
            admin.close(Duration.ofSeconds(5));
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void shouldKeepConsumingAPartitionWhoseLeaderMovesBetweenLiveBrokers() throws Exception {
        admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 3))).all().get(30, TimeUnit.SECONDS);
        cluster.awaitCondition(() -> leaderOf() >= 0 && isrOf().size() == 3, TP + " led, all replicas in sync", WAIT);
        consumer = shareConsumer();
        Set<String> accepted = new HashSet<>();

        produce("a", 10);
        consumeUntil(accepted, "a", 10);

        int first = leaderOf();
        int second = replicasOf().stream().filter(id -> id != first).findFirst().orElseThrow();
        leadOn(second);
        produce("b", 10);
        consumeUntil(accepted, "b", 10);

        leadOn(first);
        produce("c", 10);
        consumeUntil(accepted, "c", 10);
    }

    private void consumeUntil(Set<String> accepted, String prefix, int count) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (countWith(accepted, prefix) < count) {
            assertThat(System.nanoTime() - deadline).as("records " + prefix + "-* consumed from node " + leaderOf()
                    + "; accepted " + accepted).isNegative();
            List<String> polled = new ArrayList<>();
            for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                polled.add(r.value());
            }
            if (!polled.isEmpty() && consumer.commitSync().values().stream().allMatch(Optional::isEmpty)) {
                accepted.addAll(polled);
            }
        }
    }

    private static long countWith(Set<String> values, String prefix) {
        return values.stream().filter(v -> v.startsWith(prefix + "-")).count();
    }

    private void produce(String prefix, int count) throws Exception {
        for (int i = 0; i < count; i++) {
            producer.send(new ProducerRecord<>(TOPIC, 0, null, prefix + "-" + i));
        }
        producer.flush();
    }

    /** Makes {@code target} lead the partition: puts it first among the replicas and runs a preferred election. */
    private void leadOn(int target) throws Exception {
        List<Integer> replicas = new ArrayList<>(replicasOf());
        replicas.remove(Integer.valueOf(target));
        replicas.add(0, target);
        admin.alterPartitionReassignments(Map.of(TP, Optional.of(new NewPartitionReassignment(replicas)))).all()
                .get(30, TimeUnit.SECONDS);
        cluster.awaitCondition(() -> replicasOf().equals(replicas) && isrOf().containsAll(replicas),
                "the replicas of " + TP + " reordered to " + replicas, WAIT);
        admin.electLeaders(ElectionType.PREFERRED, Set.of(TP)).all().get(30, TimeUnit.SECONDS);
        cluster.awaitCondition(() -> leaderOf() == target, "node " + target + " leading " + TP, WAIT);
    }

    private int leaderOf() {
        return cluster.broker(cluster.runningIds().get(0)).controller().image().topic(TOPIC)
                .map(t -> t.partitions().get(0).leader()).orElse(-1);
    }

    private List<Integer> replicasOf() {
        return cluster.broker(cluster.runningIds().get(0)).controller().image().topic(TOPIC)
                .map(t -> t.partitions().get(0).replicas()).orElse(List.of());
    }

    private List<Integer> isrOf() {
        return cluster.broker(cluster.runningIds().get(0)).controller().image().topic(TOPIC)
                .map(t -> t.partitions().get(0).isr()).orElse(List.of());
    }

    private KafkaShareConsumer<String, String> shareConsumer() {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, "movers");
        config.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
        KafkaShareConsumer<String, String> c = new KafkaShareConsumer<>(config, new StringDeserializer(),
                new StringDeserializer());
        c.subscribe(List.of(TOPIC));
        return c;
    }
}
