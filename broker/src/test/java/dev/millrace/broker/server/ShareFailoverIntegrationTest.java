package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
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
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.share.LogShareStateStore;
import dev.millrace.broker.share.ShareDeadLetterHeaders;

/**
 * Share groups across the loss of a broker, with real {@code KafkaShareConsumer}s on a three-broker cluster and a
 * queue of three partitions replicated three times (each broker leads one), {@code group.share.delivery.count.limit}
 * 3, and one record in ten always released (a poison record, dead-lettered after its third delivery):
 *
 * <ul>
 *   <li>a first consumer takes records and holds them without acknowledging; then a broker stops (a controlled
 *       shutdown: its leaderships move first);</li>
 *   <li>a second consumer accepts every other record and releases the poison ones, until every record is accepted or
 *       dead-lettered.</li>
 * </ul>
 *
 * Checked: every record is accepted exactly once (an accept counts when commitSync reports its partition without
 * error), none comes again after it was accepted, the records the first consumer held on the stopped broker's
 * partition come again with a higher delivery count, and the dead-letter topic holds each poison record exactly once,
 * after exactly 3 deliveries.
 *
 * <p>Which broker stops: one test stops the leader of a queue partition that is neither the group's share-state
 * coordinator (leader of its {@code __share_group_state} partition) nor its membership coordinator (leader of its
 * {@code __consumer_offsets} partition), isolating the move of share-partitions; the other stops the share-state
 * coordinator. The controller places the internal topics' partitions alike, so that node is also the group's
 * membership coordinator, which moves too (the members rejoin at the new one), and it leads a queue partition too:
 * that test moves everything at once. The dead-letter topic is placed as the queue, so that each of its partitions'
 * leader, before and after the stop, is the leader of the queue partition whose records it takes; one test places a
 * dead-letter partition's leader elsewhere (the copy then goes there as a Produce).
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class ShareFailoverIntegrationTest {

    private static final String QUEUE = "queue";
    private static final String DLQ = "queue-dlq";
    private static final int PARTITIONS = 3;
    private static final int RECORDS = 300;
    private static final int LIMIT = 3;

    @TempDir
    Path dir;

    private InProcessCluster cluster;
    private Admin admin;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeEach
    void startCluster() throws Exception {
        cluster = InProcessCluster.start(dir, 3, Map.of("offsets.topic.num.partitions", "3",
                "group.share.auto.offset.reset", "earliest", "group.share.delivery.count.limit", String.valueOf(LIMIT),
                "group.share.record.lock.duration.ms", "5000"));
        admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap()));
    }

    @AfterEach
    void stopCluster() throws Exception {
        for (AutoCloseable c : closeables) {
            c.close();
        }
        if (admin != null) {
            admin.close(Duration.ofSeconds(5));
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void shouldAcceptEveryRecordOnceWhenTheLeaderOfAQueuePartitionStops() throws Exception {
        Coordinators group = pickGroup();
        List<Integer> leaders = createQueue();
        int victim = leaders.stream().filter(id -> id != group.membership() && id != group.state())
                .findFirst().orElseThrow();
        runFailover(group, leaders, victim);
    }

    @Test
    void shouldAcceptEveryRecordOnceWhenTheShareStateCoordinatorStops() throws Exception {
        Coordinators group = pickGroup();
        List<Integer> leaders = createQueue();
        runFailover(group, leaders, group.state());
    }

    /**
     * A record acquired for its last allowed delivery under a lock held on the stopped leader: that delivery counts,
     * so the new leader dead-letters it (once, with delivery count 3) and never delivers it a fourth time.
     */
    @Test
    void shouldDeadLetterARecordWhoseLastDeliveryWasUnderALockLostWithItsLeader() throws Exception {
        Coordinators group = pickGroup();
        List<Integer> leaders = createQueue();
        int victim = leaders.stream().filter(id -> id != group.membership() && id != group.state())
                .findFirst().orElseThrow();
        int victimPartition = leaders.indexOf(victim);
        produce();

        // the holder releases the victim partition's records until a poll brings some at their last delivery: it
        // holds that poll, never acknowledged, while the victim stops
        Set<String> lastDelivery = new HashSet<>();
        KafkaShareConsumer<String, String> holder = shareConsumer(group.groupId());
        long holdDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (lastDelivery.isEmpty()) {
            assertThat(System.nanoTime() - holdDeadline).as("the holder got records at their last delivery")
                    .isNegative();
            ConsumerRecords<String, String> got = holder.poll(Duration.ofMillis(200));
            for (ConsumerRecord<String, String> r : got) {
                if (r.partition() == victimPartition && r.deliveryCount().orElseThrow() == LIMIT) {
                    lastDelivery.add(r.value());
                }
            }
            if (!lastDelivery.isEmpty() || got.isEmpty()) {
                continue;
            }
            for (ConsumerRecord<String, String> r : got) {
                holder.acknowledge(r, r.partition() == victimPartition ? AcknowledgeType.RELEASE
                        : AcknowledgeType.ACCEPT);
            }
            holder.commitSync();
        }

        cluster.stop(victim);
        holder.close(Duration.ofMillis(500));

        KafkaShareConsumer<String, String> worker = shareConsumer(group.groupId());
        KafkaConsumer<String, String> dlq = dlqReader();
        Map<String, ConsumerRecord<String, String>> deadLetters = new HashMap<>();
        Set<String> victimValues = new HashSet<>();
        for (int i = 0; i < RECORDS; i++) {
            if (partitionOf(String.valueOf(i)) == victimPartition) {
                victimValues.add(String.valueOf(i));
            }
        }
        Set<String> acceptedOnVictim = new HashSet<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(150);
        while (!deadLetters.keySet().containsAll(lastDelivery)
                || acceptedOnVictim.size() + lastDelivery.size() < victimValues.size()) {
            assertThat(System.nanoTime() - deadline).as("dead-lettered " + deadLetters.keySet() + " of "
                    + lastDelivery + ", accepted " + acceptedOnVictim.size()).isNegative();
            ConsumerRecords<String, String> got = worker.poll(Duration.ofMillis(200));
            for (ConsumerRecord<String, String> r : got) {
                assertThat(lastDelivery).as("delivered again after its last allowed delivery (count "
                        + r.deliveryCount().orElseThrow() + ")").doesNotContain(r.value());
                worker.acknowledge(r, AcknowledgeType.ACCEPT);
                if (r.partition() == victimPartition) {
                    acceptedOnVictim.add(r.value());
                }
            }
            if (!got.isEmpty()) {
                worker.commitSync();
            }
            for (ConsumerRecord<String, String> r : dlq.poll(Duration.ZERO)) {
                assertThat(deadLetters.put(r.value(), r)).as(r.value() + " dead-lettered once").isNull();
            }
        }
        for (String value : lastDelivery) {
            assertThat(header(deadLetters.get(value), ShareDeadLetterHeaders.DELIVERY_COUNT))
                    .isEqualTo(String.valueOf(LIMIT));
            assertThat(header(deadLetters.get(value), ShareDeadLetterHeaders.REASON))
                    .isEqualTo(dev.millrace.broker.share.DeadLetter.REASON_DELIVERY_LIMIT);
        }
    }

    private void runFailover(Coordinators group, List<Integer> leaders, int victim) throws Exception {
        produce();
        Set<Integer> victimPartitions = new HashSet<>();
        for (int p = 0; p < PARTITIONS; p++) {
            if (leaders.get(p) == victim) {
                victimPartitions.add(p);
            }
        }

        // a holder settles what it gets like the worker below until a poll brings records of the victim's partition
        // (if it leads any): those it holds, never acknowledged, while the victim stops
        Set<String> accepted = new HashSet<>();
        Map<String, Short> lastCount = new HashMap<>();
        Map<String, Short> held = new HashMap<>();
        KafkaShareConsumer<String, String> holder = shareConsumer(group.groupId());
        long holdDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (held.isEmpty()) {
            assertThat(System.nanoTime() - holdDeadline).as("the holder got records of the victim").isNegative();
            ConsumerRecords<String, String> got = holder.poll(Duration.ofMillis(200));
            boolean onVictim = victimPartitions.isEmpty() && !got.isEmpty();
            for (ConsumerRecord<String, String> r : got) {
                onVictim |= victimPartitions.contains(r.partition());
            }
            if (onVictim) {
                got.forEach(r -> held.put(r.value(), r.deliveryCount().orElseThrow()));
            } else {
                settle(holder, got, accepted, lastCount, held);
            }
        }

        cluster.stop(victim);
        holder.close(Duration.ofMillis(500));

        Map<String, ConsumerRecord<String, String>> deadLetters = new HashMap<>();
        int poison = (int) java.util.stream.IntStream.range(0, RECORDS).filter(ShareFailoverIntegrationTest::isPoison)
                .count();
        KafkaShareConsumer<String, String> worker = shareConsumer(group.groupId());
        KafkaConsumer<String, String> dlq = dlqReader();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(150);
        while (accepted.size() < RECORDS - poison || deadLetters.size() < poison) {
            assertThat(System.nanoTime() - deadline).as("all settled; accepted " + accepted.size() + ", dead "
                    + deadLetters.size()).isNegative();
            settle(worker, worker.poll(Duration.ofMillis(200)), accepted, lastCount, held);
            for (ConsumerRecord<String, String> r : dlq.poll(Duration.ZERO)) {
                assertThat(deadLetters.put(r.value(), r)).as(r.value() + " dead-lettered once").isNull();
            }
        }
        for (int i = 0; i < RECORDS; i++) {
            String value = String.valueOf(i);
            if (isPoison(i)) {
                assertThat(accepted).doesNotContain(value);
                assertThat(header(deadLetters.get(value), ShareDeadLetterHeaders.DELIVERY_COUNT))
                        .isEqualTo(String.valueOf(LIMIT));
            } else {
                assertThat(accepted).contains(value);
            }
        }
        assertThat(held).as("the holder got records before the stop").isNotEmpty();
        // nothing more comes: every record is settled
        for (ConsumerRecord<String, String> r : worker.poll(Duration.ofMillis(500))) {
            throw new AssertionError("record " + r.value() + " delivered after every record was settled");
        }
    }

    /**
     * Accepts {@code polled} (releases the poison records), checking each delivery: never one of an accepted record,
     * counts within the limit and rising, above what the holder saw; an accept counts once commitSync reports its
     * partition without error.
     */
    private static void settle(KafkaShareConsumer<String, String> consumer, ConsumerRecords<String, String> polled,
                               Set<String> accepted, Map<String, Short> lastCount, Map<String, Short> held) {
        Map<String, String> acceptedNow = new HashMap<>();
        for (ConsumerRecord<String, String> r : polled) {
            String value = r.value();
            assertThat(accepted).as("an accepted record is never delivered again").doesNotContain(value);
            short count = r.deliveryCount().orElseThrow();
            assertThat(count).as("delivery count of " + value).isBetween((short) 1, (short) LIMIT);
            Short previous = lastCount.put(value, count);
            if (previous != null) {
                assertThat(count).as("redelivered " + value + " counts up").isGreaterThan(previous);
            }
            Short heldCount = held.get(value);
            if (heldCount != null) {
                assertThat(count).as(value + " held on the old leader counts that delivery").isGreaterThan(heldCount);
            }
            if (isPoison(Integer.parseInt(value))) {
                consumer.acknowledge(r, AcknowledgeType.RELEASE);
            } else {
                consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                acceptedNow.put(value, r.topic() + "-" + r.partition());
            }
        }
        if (polled.isEmpty()) {
            return;
        }
        Set<String> failed = new HashSet<>();
        consumer.commitSync().forEach((tip, error) -> {
            if (error.isPresent()) {
                failed.add(tip.topic() + "-" + tip.partition());
            }
        });
        acceptedNow.forEach((value, partition) -> {
            if (!failed.contains(partition)) {
                assertThat(accepted.add(value)).as(value + " accepted exactly once").isTrue();
            }
        });
    }

    private static boolean isPoison(int value) {
        return value % 10 == 7;
    }

    private static int partitionOf(String value) {
        return Integer.parseInt(value) % PARTITIONS;
    }

    private static String header(ConsumerRecord<String, String> r, String key) {
        return new String(r.headers().lastHeader(key).value(), StandardCharsets.UTF_8);
    }

    /** The group and the nodes of its two coordinators (the same node with this cluster's internal topics). */
    private Coordinators pickGroup() throws Exception {
        String groupId = "workers";
        int p = Utils.abs(groupId.hashCode()) % 3;
        return new Coordinators(groupId, leaderOf("__consumer_offsets", p), leaderOf(LogShareStateStore.TOPIC, p));
    }

    private record Coordinators(String groupId, int membership, int state) {
    }

    /**
     * A rejected record of a queue partition whose dead-letter partition another broker leads: the copy goes to that
     * leader (a Produce from the queue partition's leader), not dropped because this broker does not lead it.
     */
    @Test
    void shouldCopyARejectedRecordToADeadLetterPartitionLedByAnotherBroker() throws Exception {
        Coordinators group = pickGroup();
        List<Integer> leaders = createQueue();
        int queueLeader = leaders.get(0);
        TopicPartition dlq0 = new TopicPartition(DLQ, 0);
        List<Integer> replicas = new ArrayList<>(admin.describeTopics(List.of(DLQ)).allTopicNames()
                .get(30, TimeUnit.SECONDS).get(DLQ).partitions().get(0).replicas().stream().map(n -> n.id()).toList());
        int other = replicas.stream().filter(id -> id != queueLeader).findFirst().orElseThrow();
        replicas.remove(Integer.valueOf(other));
        replicas.add(0, other);
        admin.alterPartitionReassignments(Map.of(dlq0, Optional.of(
                new org.apache.kafka.clients.admin.NewPartitionReassignment(replicas)))).all().get(30, TimeUnit.SECONDS);
        // (not in awaitCondition: it holds the lock the nodes' metadata listeners notify, and an election needs them)
        long electDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (leaderOf(DLQ, 0) != other) {
            assertThat(System.nanoTime() - electDeadline).as("node %d leads %s", other, dlq0).isNegative();
            try {
                admin.electLeaders(org.apache.kafka.common.ElectionType.PREFERRED, Set.of(dlq0)).all()
                        .get(30, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                // not yet eligible, or already elected: look again
            }
        }
        assertThat(leaderOf(QUEUE, 0)).isEqualTo(queueLeader);

        Map<String, Object> config = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap(),
                ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config, new StringSerializer(),
                new StringSerializer())) {
            producer.send(new ProducerRecord<>(QUEUE, 0, null, "poison")).get(30, TimeUnit.SECONDS);
        }
        KafkaShareConsumer<String, String> consumer = shareConsumer(group.groupId());
        KafkaConsumer<String, String> dlq = dlqReader();
        boolean rejected = false;
        ConsumerRecord<String, String> copy = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (copy == null) {
            assertThat(System.nanoTime() - deadline).as("the dead-letter copy on %s (led by node %d; the queue "
                    + "partition by node %d), rejected: %s", dlq0, other, queueLeader, rejected).isNegative();
            if (!rejected) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    consumer.acknowledge(r, AcknowledgeType.REJECT);
                    rejected = true;
                }
                if (rejected) {
                    consumer.commitSync();
                }
            }
            for (ConsumerRecord<String, String> r : dlq.poll(Duration.ofMillis(200))) {
                copy = r;
            }
        }
        assertThat(copy.value()).isEqualTo("poison");
        assertThat(copy.partition()).isZero();
        assertThat(header(copy, ShareDeadLetterHeaders.REASON))
                .isEqualTo(dev.millrace.broker.share.DeadLetter.REASON_REJECTED);
    }

    private int leaderOf(String topic, int partition) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic);
        TopicPartitionInfo info = d.partitions().stream().filter(i -> i.partition() == partition).findFirst()
                .orElseThrow();
        return info.leader() == null ? -1 : info.leader().id();
    }

    /**
     * The queue and its dead-letter topic, with the same placement (the controller places partition p on the
     * brokers from {@code p mod n} in id order, so both have the same leader per partition); returns the queue's
     * leader per partition.
     */
    private List<Integer> createQueue() throws Exception {
        admin.createTopics(List.of(new NewTopic(DLQ, PARTITIONS, (short) 3), new NewTopic(QUEUE, PARTITIONS, (short) 3)
                .configs(Map.of("millrace.share.dlq.topic", DLQ)))).all().get(30, TimeUnit.SECONDS);
        List<Integer> leaders = new ArrayList<>();
        cluster.awaitCondition(() -> {
            try {
                leaders.clear();
                // every node knows both topics, so that an Admin call answered by any of them finds them
                for (int id : cluster.runningIds()) {
                    if (cluster.broker(id).controller().image().topic(DLQ).isEmpty()
                            || cluster.broker(id).controller().image().topic(QUEUE).isEmpty()) {
                        return false;
                    }
                }
                for (int p = 0; p < PARTITIONS; p++) {
                    int leader = leaderOf(QUEUE, p);
                    if (leader < 0 || leaderOf(DLQ, p) != leader) {
                        return false;
                    }
                    leaders.add(leader);
                }
                return true;
            } catch (Exception e) {
                return false;
            }
        }, "the queue's leaders", Duration.ofSeconds(30));
        return leaders;
    }

    private void produce() {
        Map<String, Object> config = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap(),
                ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.LINGER_MS_CONFIG, 5);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config, new StringSerializer(),
                new StringSerializer())) {
            for (int i = 0; i < RECORDS; i++) {
                producer.send(new ProducerRecord<>(QUEUE, i % PARTITIONS, null, String.valueOf(i)));
            }
            producer.flush();
        }
    }

    private KafkaShareConsumer<String, String> shareConsumer(String group) {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        config.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
        config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 20);
        KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(config, new StringDeserializer(),
                new StringDeserializer());
        consumer.subscribe(List.of(QUEUE));
        closeables.add(() -> consumer.close(Duration.ofSeconds(1)));
        return consumer;
    }

    private KafkaConsumer<String, String> dlqReader() {
        Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config, new StringDeserializer(),
                new StringDeserializer());
        List<TopicPartition> partitions = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            partitions.add(new TopicPartition(DLQ, p));
        }
        consumer.assign(partitions);
        closeables.add(consumer);
        return consumer;
    }
}
