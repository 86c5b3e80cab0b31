package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.protocol.delay.DelayedDelivery;

/**
 * Delayed delivery across a failover, on three in-process brokers: records are scheduled a few seconds ahead for a
 * target topic with replication factor 3, then the broker that leads the delay partition is shut down before any is
 * due. The new leader of the delay partition delivers them: a read-committed consumer sees each exactly once, none
 * stamped before its due time; the worst lateness (delivery stamp and arrival at the consumer, each minus the due
 * time) is printed.
 */
@Timeout(180)
class DelayedDeliveryFailoverIntegrationTest {

    private static final String TARGET = "delayed-failover";
    private static final TopicPartition DELAY_PARTITION = new TopicPartition(DelayedDelivery.TOPIC, 0);
    private static final int RECORDS = 60;
    /** Far enough ahead that the shutdown of the delay partition's leader is over before the first is due. */
    private static final long FIRST_DUE_IN_MS = 6_000;

    @TempDir
    Path dir;

    private InProcessCluster cluster;
    private Admin admin;

    @BeforeEach
    void startCluster() throws Exception {
        cluster = InProcessCluster.start(dir, 3, Map.of());
        admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap()));
        admin.createTopics(List.of(new NewTopic(TARGET, 3, (short) 3)
                .configs(Map.of("min.insync.replicas", "2")))).all().get(60, TimeUnit.SECONDS);
        // the delay topic's leader checks targets against its own metadata
        cluster.awaitCondition(() -> cluster.runningIds().stream().allMatch(id -> cluster.broker(id).controller()
                .image().topic(TARGET).isPresent()), "every node knowing " + TARGET, Duration.ofSeconds(30));
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
    void shouldDeliverEveryDelayedRecordOnceAndNotEarlyWhenTheDelayPartitionsLeaderStops() throws Exception {
        Map<String, Long> dueOf = new HashMap<>();
        long firstDue = System.currentTimeMillis() + FIRST_DUE_IN_MS;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap(), ProducerConfig.ACKS_CONFIG, "all"),
                new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < RECORDS; i++) {
                long due = firstDue + (i % 20) * 50L;
                producer.send(DelayedDeliveryIntegrationTest.delayed(TARGET, i % 3, "k" + i, "m" + i, due))
                        .get(30, TimeUnit.SECONDS);
                dueOf.put("m" + i, due);
            }
        }
        int oldLeader = leaderOf(DELAY_PARTITION);
        cluster.awaitCondition(() -> pendingOn(oldLeader) == RECORDS, "the delay partition's leader holding every record",
                Duration.ofSeconds(30));
        cluster.stop(oldLeader);
        cluster.awaitCondition(() -> leaderOf(DELAY_PARTITION) >= 0 && leaderOf(DELAY_PARTITION) != oldLeader,
                "a new leader of " + DELAY_PARTITION, Duration.ofSeconds(30));
        assertThat(System.currentTimeMillis()).as("the leader stopped before the first record was due (the test's "
                + "premise; raise FIRST_DUE_IN_MS if this machine is slower)").isLessThan(firstDue);

        Map<String, Integer> seen = new HashMap<>();
        long worstStampLateMs = Long.MIN_VALUE;
        long worstArrivalLateMs = Long.MIN_VALUE;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap(),
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"), new StringDeserializer(),
                new StringDeserializer())) {
            List<TopicPartition> targets = new ArrayList<>();
            for (int p = 0; p < 3; p++) {
                targets.add(new TopicPartition(TARGET, p));
            }
            consumer.assign(targets);
            consumer.seekToBeginning(targets);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (seen.size() < RECORDS || !caughtUp(consumer, targets)) {
                assertThat(System.nanoTime() - deadline).as("all %s records delivered in time; got %s", RECORDS,
                        seen.keySet()).isNegative();
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    long arrivedMs = System.currentTimeMillis();
                    long due = dueOf.get(record.value());
                    long deliveredMs = deliveredMs(record);
                    assertThat(deliveredMs).as("%s stamped no earlier than due", record.value())
                            .isGreaterThanOrEqualTo(due);
                    assertThat(arrivedMs).as("%s arrived no earlier than due", record.value())
                            .isGreaterThanOrEqualTo(due);
                    worstStampLateMs = Math.max(worstStampLateMs, deliveredMs - due);
                    worstArrivalLateMs = Math.max(worstArrivalLateMs, arrivedMs - due);
                    seen.merge(record.value(), 1, Integer::sum);
                }
            }
        }
        assertThat(seen).as("every record exactly once").hasSize(RECORDS).allSatisfy((value, count) ->
                assertThat(count).as(value).isEqualTo(1));
        System.out.printf("Delayed delivery across the stop of node %d (leader of %s): %d records, worst lateness "
                + "%d ms by the delivery stamp, %d ms at the consumer%n", oldLeader, DELAY_PARTITION, RECORDS,
                worstStampLateMs, worstArrivalLateMs);
    }

    private int pendingOn(int nodeId) {
        try {
            return cluster.broker(nodeId).delayService().pendingCount();
        } catch (Exception e) {
            return -1;
        }
    }

    /** Whether the consumer has read every partition up to its last stable offset (so a duplicate would show). */
    private static boolean caughtUp(KafkaConsumer<String, String> consumer, List<TopicPartition> targets) {
        Map<TopicPartition, Long> ends = consumer.endOffsets(targets, Duration.ofSeconds(10));
        return targets.stream().allMatch(tp -> consumer.position(tp, Duration.ofSeconds(10)) >= ends.get(tp));
    }

    private static long deliveredMs(ConsumerRecord<String, String> record) {
        Header header = record.headers().lastHeader(DelayedDelivery.DELIVERED_MS);
        assertThat(header).as("%s carries %s", record.value(), DelayedDelivery.DELIVERED_MS).isNotNull();
        return DelayedDelivery.longValue(header.value(), DelayedDelivery.DELIVERED_MS);
    }

    /** The leader in the metadata of a running node, or -1. */
    private int leaderOf(TopicPartition tp) {
        int any = cluster.runningIds().get(0);
        return cluster.broker(any).controller().image().topic(tp.topic())
                .map(t -> t.partitions().get(tp.partition()).leader()).orElse(-1);
    }
}
