package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.group.OffsetsTopic;

/**
 * The group coordinators follow the leadership of {@code __consumer_offsets} (one partition here, so one broker
 * coordinates every group): real kafka-clients consumers keep consuming, and committing, when the broker that leads
 * it stops (a controlled shutdown moves the leadership; the new leader loads the groups from its replica).
 *
 * <ul>
 *   <li>A classic consumer group of two members (also when a preferred election moves the coordinator, nothing
 *       stopped) on a replicated topic: the committed offsets (as Admin lists them)
 *       never go back while the coordinator moves, none committed before the stop is lost, the members go on at the
 *       new coordinator and consume and commit everything produced afterwards. When the coordinator moves with both
 *       members alive, they keep their generation and assignments: the new coordinator loaded the group Stable.</li>
 *   <li>A {@code KafkaShareConsumer}: after its coordinator's broker stops, it finds the new coordinator (which knows
 *       no members: it rejoins) and receives every record produced afterwards. The share-partition's leader is kept
 *       off the stopped broker, so only the coordinator moves (share-partition state is not this test's concern).</li>
 * </ul>
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class GroupCoordinatorFailoverIntegrationTest {

    private static final Duration WAIT = Duration.ofSeconds(90);

    @TempDir
    Path dir;

    private InProcessCluster cluster;
    private Admin admin;
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicBoolean stop = new AtomicBoolean();
    /** Each consumer's generation as it last saw it after a poll, by client id. */
    private final Map<String, Integer> generations = new ConcurrentHashMap<>();

    @BeforeEach
    void startCluster() throws Exception {
        // a share group starts at the log end by default: the share consumer subscribes while the first records are
        // produced, so without "earliest" it could start after them and wait forever
        cluster = InProcessCluster.start(dir, 3, Map.of("group.share.auto.offset.reset", "earliest"));
        admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap()));
    }

    @AfterEach
    void stopAll() throws InterruptedException {
        stop.set(true);
        for (Thread thread : threads) {
            thread.join(30_000);
        }
        if (admin != null) {
            admin.close(Duration.ofSeconds(5));
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void shouldKeepConsumerGroupCommittingWhenItsCoordinatorsBrokerStops() throws Exception {
        createTopic("events", 3);
        Set<String> seen = ConcurrentHashMap.newKeySet();
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        startConsumer("member-1", seen, failures);
        startConsumer("member-2", seen, failures);
        produce("events", 0, 150);
        Map<TopicPartition, Long> before = awaitCommitted("events", 150, null);
        assertThat(seen).hasSize(150);

        int coordinator = leaderOf(new TopicPartition(OffsetsTopic.NAME, 0));
        cluster.stop(coordinator);
        cluster.awaitCondition(() -> {
            int leader = leaderOf(new TopicPartition(OffsetsTopic.NAME, 0));
            return leader >= 0 && leader != coordinator;
        }, "a new leader of " + OffsetsTopic.NAME, WAIT);
        Map<TopicPartition, Long> atHandOver = committed("events");
        assertThat(atHandOver).as("nothing committed before the stop is lost").isNotNull();
        before.forEach((tp, offset) -> assertThat(atHandOver.getOrDefault(tp, -1L)).as(tp.toString())
                .isGreaterThanOrEqualTo(offset));
        produce("events", 150, 300);

        awaitCommitted("events", 300, atHandOver);
        assertThat(seen).as("every record consumed, after the rejoin too").hasSize(300);
        cluster.awaitCondition(() -> {
            ConsumerGroupDescription group = describe(() -> admin.describeConsumerGroups(List.of("failover-group"))
                    .describedGroups().get("failover-group").get(10, TimeUnit.SECONDS));
            return group != null && group.coordinator().id() != coordinator && group.members().size() == 2
                    && group.groupState() == GroupState.STABLE;
        }, "both members rejoined at the new coordinator", WAIT);
        assertThat(failures).isEmpty();
    }

    @Test
    void shouldKeepConsumerGroupCommittingWhenAPreferredElectionMovesItsCoordinator() throws Exception {
        createTopic("events", 3);
        Set<String> seen = ConcurrentHashMap.newKeySet();
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        startConsumer("member-1", seen, failures);
        startConsumer("member-2", seen, failures);
        produce("events", 0, 100);
        Map<TopicPartition, Long> before = awaitCommitted("events", 100, null);
        TopicPartition offsets = new TopicPartition(OffsetsTopic.NAME, 0);
        int coordinator = leaderOf(offsets);
        int generation = awaitSettled();

        leadOn(offsets, cluster.nodeIds().stream().filter(id -> id != coordinator).findFirst().orElseThrow());
        produce("events", 100, 200);

        awaitCommitted("events", 200, before);
        assertThat(seen).hasSize(200);
        assertThat(failures).isEmpty();
        assertThat(generations).as("the new coordinator loaded the group with its members: they went on in their "
                + "generation, with their assignments, instead of rebalancing").containsOnly(
                        Map.entry("member-1", generation), Map.entry("member-2", generation));
        ConsumerGroupDescription group = describe(() -> admin.describeConsumerGroups(List.of("failover-group"))
                .describedGroups().get("failover-group").get(10, TimeUnit.SECONDS));
        assertThat(group.coordinator().id()).isNotEqualTo(coordinator);
        assertThat(group.groupState()).isEqualTo(GroupState.STABLE);
    }

    /** Waits until both members polled in the same generation of a Stable group of two; returns that generation. */
    private int awaitSettled() throws Exception {
        AtomicReference<Integer> settled = new AtomicReference<>();
        cluster.awaitCondition(() -> {
            ConsumerGroupDescription group = describe(() -> admin.describeConsumerGroups(List.of("failover-group"))
                    .describedGroups().get("failover-group").get(10, TimeUnit.SECONDS));
            Integer first = generations.get("member-1");
            boolean same = first != null && first > 0 && first.equals(generations.get("member-2"));
            if (group != null && group.groupState() == GroupState.STABLE && group.members().size() == 2 && same) {
                settled.set(first);
                return true;
            }
            return false;
        }, "both members in one generation of a Stable group", WAIT);
        return settled.get();
    }

    @Test
    void shouldKeepShareConsumerReceivingWhenItsCoordinatorsBrokerStops() throws Exception {
        createTopic("queue", 1);
        TopicPartition queue = new TopicPartition("queue", 0);
        TopicPartition offsets = new TopicPartition(OffsetsTopic.NAME, 0);
        // share-partition state is written where __share_group_state is led: keep the queue's leader there and the
        // group coordinator elsewhere (moving it is a coordinator hand-over too, through a preferred election)
        int stateLeader = leaderOf(new TopicPartition("__share_group_state", 0));
        if (leaderOf(offsets) == stateLeader) {
            leadOn(offsets, cluster.nodeIds().stream().filter(id -> id != stateLeader).findFirst().orElseThrow());
        }
        if (leaderOf(queue) != stateLeader) {
            leadOn(queue, stateLeader);
        }
        int coordinator = leaderOf(offsets);
        String leaders = " (leaders: " + OffsetsTopic.NAME + " " + coordinator + ", share state " + stateLeader
                + ", queue " + leaderOf(queue) + ")";
        Set<String> seen = ConcurrentHashMap.newKeySet();
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        startShareConsumer(seen, failures);
        produce("queue", 0, 50);
        cluster.awaitCondition(() -> seen.size() == 50, "the share consumer receiving the first 50" + leaders, WAIT);

        cluster.stop(coordinator);
        cluster.awaitCondition(() -> {
            int leader = leaderOf(offsets);
            return leader >= 0 && leader != coordinator;
        }, "a new leader of " + OffsetsTopic.NAME, WAIT);
        produce("queue", 50, 100);

        cluster.awaitCondition(() -> seen.size() == 100, "the share consumer receiving the 50 produced after the stop"
                + leaders, WAIT);
        cluster.awaitCondition(() -> {
            ShareGroupDescription group = describe(() -> admin.describeShareGroups(List.of("failover-share"))
                    .describedGroups().get("failover-share").get(10, TimeUnit.SECONDS));
            return group != null && group.coordinator().id() != coordinator && group.members().size() == 1;
        }, "the member rejoined at the new coordinator", WAIT);
        assertThat(failures).isEmpty();
    }

    // ---- clients

    private void startConsumer(String clientId, Set<String> seen, List<Throwable> failures) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "failover-group");
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
        props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
        props.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        Thread thread = new Thread(() -> {
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                    new StringDeserializer())) {
                consumer.subscribe(List.of("events"));
                boolean uncommitted = false;
                while (!stop.get()) {
                    ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(100));
                    records.forEach(r -> seen.add(r.value()));
                    generations.put(clientId, consumer.groupMetadata().generationId());
                    if (!records.isEmpty() || uncommitted) {
                        try {
                            consumer.commitSync(Duration.ofSeconds(10));
                            uncommitted = false;
                        } catch (CommitFailedException | org.apache.kafka.common.errors.RetriableException
                                 | org.apache.kafka.common.errors.RebalanceInProgressException e) {
                            uncommitted = true; // rejoins at the next poll and commits again
                        }
                    }
                }
            } catch (WakeupException e) {
                // stopping
            } catch (KafkaException | IllegalStateException e) {
                failures.add(e);
            }
        }, "failover-" + clientId);
        thread.setDaemon(true);
        threads.add(thread);
        thread.start();
    }

    private void startShareConsumer(Set<String> seen, List<Throwable> failures) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "failover-share");
        props.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        Thread thread = new Thread(() -> {
            try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(props,
                    new StringDeserializer(), new StringDeserializer())) {
                consumer.subscribe(List.of("queue"));
                while (!stop.get()) {
                    consumer.poll(Duration.ofMillis(100)).forEach(r -> seen.add(r.value()));
                }
            } catch (KafkaException | IllegalStateException e) {
                failures.add(e);
            }
        }, "failover-share-consumer");
        thread.setDaemon(true);
        threads.add(thread);
        thread.start();
    }

    private void produce(String topic, int from, int to) throws Exception {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(),
                new StringSerializer())) {
            for (int i = from; i < to; i++) {
                producer.send(new ProducerRecord<>(topic, "k" + i, "v" + i)).get(60, TimeUnit.SECONDS);
            }
        }
    }

    /** What {@code call} returns, or null while Admin cannot get it (the coordinator is moving). */
    private static <T> T describe(Callable<T> call) {
        try {
            return call.call();
        } catch (Exception e) {
            return null;
        }
    }

    // ---- committed offsets

    /** The group's committed offsets, or null while Admin cannot get them (the coordinator is moving). */
    private Map<TopicPartition, Long> committed(String topic) {
        try {
            Map<TopicPartition, OffsetAndMetadata> all = admin.listConsumerGroupOffsets("failover-group")
                    .partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS);
            Map<TopicPartition, Long> out = new HashMap<>();
            all.forEach((tp, om) -> {
                if (tp.topic().equals(topic) && om != null) {
                    out.put(tp, om.offset());
                }
            });
            return out;
        } catch (Exception e) {
            return null;
        }
    }

    /**
     * Waits until the committed offsets of {@code topic} add up to {@code total}, checking at every look that no
     * partition's committed offset is below the highest seen before (starting from {@code floor}).
     */
    private Map<TopicPartition, Long> awaitCommitted(String topic, long total, Map<TopicPartition, Long> floor)
            throws InterruptedException {
        Map<TopicPartition, Long> highest = new HashMap<>(floor == null ? Map.of() : floor);
        AtomicReference<Map<TopicPartition, Long>> last = new AtomicReference<>();
        cluster.awaitCondition(() -> {
            Map<TopicPartition, Long> now = committed(topic);
            if (now == null) {
                return false;
            }
            highest.forEach((tp, offset) -> assertThat(now.getOrDefault(tp, -1L))
                    .as("the committed offset of %s went back", tp).isGreaterThanOrEqualTo(offset));
            highest.putAll(now);
            last.set(now);
            return now.values().stream().mapToLong(Long::longValue).sum() == total;
        }, "committed offsets of " + topic + " adding up to " + total, WAIT);
        return last.get();
    }

    // ---- topics and leaders

    private void createTopic(String name, int partitions) throws Exception {
        admin.createTopics(List.of(new NewTopic(name, partitions, (short) 3))).all().get(30, TimeUnit.SECONDS);
        for (int p = 0; p < partitions; p++) {
            TopicPartition tp = new TopicPartition(name, p);
            cluster.awaitCondition(() -> leaderOf(tp) >= 0 && replicasOf(tp).stream().allMatch(id -> cluster
                    .broker(id).partitionManager().partition(tp).isPresent()), "the replicas of " + tp + " open", WAIT);
        }
    }

    /** Makes {@code target} lead {@code tp}: puts it first among the replicas and runs a preferred election. */
    private void leadOn(TopicPartition tp, int target) throws Exception {
        List<Integer> replicas = new ArrayList<>(replicasOf(tp));
        replicas.remove(Integer.valueOf(target));
        replicas.add(0, target);
        admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(replicas)))).all()
                .get(30, TimeUnit.SECONDS);
        cluster.awaitCondition(() -> replicasOf(tp).equals(replicas) && isrOf(tp).containsAll(replicas),
                "the replicas of " + tp + " reordered to " + replicas, WAIT);
        admin.electLeaders(ElectionType.PREFERRED, Set.of(tp)).all().get(30, TimeUnit.SECONDS);
        cluster.awaitCondition(() -> leaderOf(tp) == target, "node " + target + " leading " + tp, WAIT);
    }

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
}
