package dev.millrace.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
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
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.log.LogConfig;
import dev.millrace.broker.log.PartitionLog;

/**
 * Crash test under load, as processes: three brokers (each a voter), a topic with replication factor 3 and
 * {@code min.insync.replicas=2}, an idempotent {@code acks=all} producer writing steadily to every partition while
 * the test SIGKILLs a random broker (the controller's node or a partition leader, as the draw falls) and restarts
 * it, {@code millrace.chaos.kills} times (20 by default; the {@code chaos} profile runs 100). Between kills it waits
 * until the producer has made progress with the node down and until the node is back in every ISR. The producer
 * is paced ({@value #RECORDS_PER_SECOND} records a second at most), so that the load is steady and the logs a
 * restarted node recovers stay the same size whatever the speed of the machine; the nodes run C1-compiled only
 * ({@link ClusterProcesses#FAST_START}), which makes a restart about twice as fast on this 2-core machine.
 * Each kill prints where its time went.
 *
 * <p>At the end it reports and checks what users care about: every acknowledged record is read back exactly once
 * (lost, duplicated), in acknowledgement order per partition, and every replica's log holds the same records.
 * Seeded: {@code -Dmillrace.chaos.seed=N} replays a run's choice of nodes; the seed is printed.
 */
@Timeout(value = 30, unit = TimeUnit.MINUTES)
class ClusterCrashIntegrationTest {

    private static final String TOPIC = "chaos";
    private static final int PARTITIONS = 4;
    /** The producer's pace: at most this many records a second over all partitions. */
    private static final int RECORDS_PER_SECOND = 5_000;
    /** Notified whenever a send is acknowledged, so that waits re-check their condition. */
    private static final Object PROGRESS = new Object();

    @TempDir
    Path dir;

    @Test
    void acknowledgedRecordsSurviveRepeatedSigkills() throws Exception {
        int kills = Integer.getInteger("millrace.chaos.kills", 20);
        long seed = Long.getLong("millrace.chaos.seed", System.nanoTime());
        System.out.println("ClusterCrashIntegrationTest seed=" + seed + " kills=" + kills
                + " (replay with -Dmillrace.chaos.seed=" + seed + ")");
        Random random = new Random(seed);
        Map<String, String> settings = Map.of("broker.session.timeout.ms", "2000",
                "broker.heartbeat.interval.ms", "250", "replica.lag.time.max.ms", "4000");
        Map<Integer, ConcurrentLinkedQueue<String>> acked = new ConcurrentHashMap<>();
        AtomicLong failedSends = new AtomicLong();
        int[] controllerKills = new int[1];
        try (ClusterProcesses cluster = ClusterProcesses.start(3, dir, settings,
                ClusterProcesses.FAST_START);
             Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap()))) {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 3)
                    .configs(Map.of("min.insync.replicas", "2")))).all().get(120, TimeUnit.SECONDS);
            for (int p = 0; p < PARTITIONS; p++) {
                acked.put(p, new ConcurrentLinkedQueue<>());
            }
            AtomicBoolean producing = new AtomicBoolean(true);
            Thread producer = new Thread(() -> produce(cluster.bootstrap(), producing, acked, failedSends),
                    "chaos-producer");
            producer.start();
            try {
                runKills(cluster, admin, random, kills, seed, acked, controllerKills);
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "\nISR: " + describeIsr(admin) + "\n"
                        + cluster.describeLogs(), e);
            } finally {
                producing.set(false);
                producer.join(TimeUnit.MINUTES.toMillis(3));
            }
            Map<Integer, List<String>> read = readAll(cluster.bootstrap(), acked);
            System.out.println("ClusterCrashIntegrationTest seed=" + seed + ": " + controllerKills[0] + " of " + kills
                    + " kills hit the active controller's node");
            report(seed, kills, acked, read, failedSends.get());
            awaitAllInSync(admin, 3, "all replicas in sync before the clean stop", seed);
            for (int id : cluster.nodeIds()) {
                cluster.stop(id);
            }
            assertReplicasIdentical(cluster, seed);
        }
    }

    private static void runKills(ClusterProcesses cluster, Admin admin, Random random, int kills, long seed,
                                 Map<Integer, ConcurrentLinkedQueue<String>> acked, int[] controllerKills)
            throws Exception {
        long restarted = System.nanoTime();
        for (int kill = 1; kill <= kills; kill++) {
            awaitAllInSync(admin, 3, "all replicas in sync before kill " + kill, seed);
            long inSync = System.nanoTime();
            long before = total(acked);
            int victim = cluster.nodeIds().get(random.nextInt(cluster.nodeIds().size()));
            if (admin.describeCluster().controller().get(30, TimeUnit.SECONDS).id() == victim) {
                controllerKills[0]++;
            }
            cluster.kill(victim);
            int round = kill;
            await(() -> total(acked) >= before + 200, "progress with node " + victim + " killed (kill " + round + ")",
                    seed);
            long progressed = System.nanoTime();
            cluster.restart(victim);
            long started = System.nanoTime();
            // where a kill's time goes, for whoever wants the cycle shorter
            System.out.printf("ClusterCrashIntegrationTest kill %d (node %d): back in sync %d ms after the restart, "
                    + "progress %d ms after the kill, restart %d ms%n", kill, victim,
                    (inSync - restarted) / 1_000_000, (progressed - inSync) / 1_000_000,
                    (started - progressed) / 1_000_000);
            restarted = started;
        }
        awaitAllInSync(admin, 3, "all replicas in sync after the last kill", seed);
    }

    private static String describeIsr(Admin admin) {
        try {
            return admin.describeTopics(List.of(TOPIC)).allTopicNames().get(10, TimeUnit.SECONDS).get(TOPIC)
                    .partitions().toString();
        } catch (Exception e) {
            return "unknown (" + e + ")";
        }
    }

    private static void produce(String bootstrap, AtomicBoolean producing,
                                Map<Integer, ConcurrentLinkedQueue<String>> acked, AtomicLong failedSends) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "120000");
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        props.put(ProducerConfig.METADATA_MAX_AGE_CONFIG, "2000");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(),
                new StringSerializer())) {
            long[] next = new long[PARTITIONS];
            int p = 0;
            long sent = 0;
            long startNs = System.nanoTime();
            while (producing.get()) {
                int partition = p;
                String value = partition + "-" + next[partition]++;
                producer.send(new ProducerRecord<>(TOPIC, partition, null, value), (metadata, error) -> {
                    if (error == null) {
                        acked.get(partition).add(value);
                        synchronized (PROGRESS) {
                            PROGRESS.notifyAll();
                        }
                    } else {
                        failedSends.incrementAndGet();
                    }
                });
                p = (p + 1) % PARTITIONS;
                sent++;
                if (next[PARTITIONS - 1] % 50 == 0) {
                    producer.flush(); // keep the load steady rather than unbounded
                    // pacing a load generator, not waiting for a condition: sleep until this many are due
                    long dueNs = startNs + sent * 1_000_000_000L / RECORDS_PER_SECOND;
                    LockSupport.parkNanos(dueNs - System.nanoTime());
                }
            }
            producer.flush();
        }
    }

    /** Reads every partition from the beginning to its end offset. */
    private static Map<Integer, List<String>> readAll(String bootstrap, Map<Integer, ConcurrentLinkedQueue<String>> acked) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        Map<Integer, List<String>> read = new HashMap<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new StringDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++) {
                tps.add(new TopicPartition(TOPIC, p));
                read.put(p, new ArrayList<>());
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> ends = consumer.endOffsets(tps, Duration.ofSeconds(60));
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
            while (tps.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp)) && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    read.get(record.partition()).add(record.value());
                }
            }
        }
        return read;
    }

    private static void report(long seed, int kills, Map<Integer, ConcurrentLinkedQueue<String>> acked,
                               Map<Integer, List<String>> read, long failedSends) {
        long ackedCount = 0;
        long lost = 0;
        long duplicates = 0;
        long outOfOrder = 0;
        List<String> problems = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            List<String> got = read.get(p);
            Map<String, Integer> positions = new LinkedHashMap<>();
            for (int i = 0; i < got.size(); i++) {
                if (positions.putIfAbsent(got.get(i), i) != null) {
                    duplicates++;
                    problems.add("duplicate " + got.get(i));
                }
            }
            int last = -1;
            for (String value : acked.get(p)) {
                ackedCount++;
                Integer at = positions.get(value);
                if (at == null) {
                    lost++;
                    problems.add("lost " + value);
                } else if (at < last) {
                    outOfOrder++;
                    problems.add("out of order " + value);
                } else {
                    last = at;
                }
            }
        }
        System.out.println("ClusterCrashIntegrationTest seed=" + seed + " kills=" + kills + " acknowledged="
                + ackedCount + " lost=" + lost + " duplicates=" + duplicates + " outOfOrder=" + outOfOrder
                + " failedSends=" + failedSends);
        assertThat(problems.size()).as("seed " + seed + ": acknowledged records lost, duplicated or reordered; "
                + "the first: " + problems.subList(0, Math.min(20, problems.size()))).isZero();
        assertThat(ackedCount).as("seed " + seed + ": acknowledged records").isGreaterThan(kills * 200L);
    }

    /** After a clean stop, every node's log of every partition holds the same batches (offsets and checksums). */
    private static void assertReplicasIdentical(ClusterProcesses cluster, long seed) throws Exception {
        for (int p = 0; p < PARTITIONS; p++) {
            Map<Integer, List<String>> batches = new LinkedHashMap<>();
            for (int id : cluster.nodeIds()) {
                File logDir = cluster.layout().node(id).dataDir().resolve("logs").resolve(TOPIC + "-" + p).toFile();
                batches.put(id, batchesOf(logDir));
            }
            List<String> first = batches.values().iterator().next();
            for (Map.Entry<Integer, List<String>> replica : batches.entrySet()) {
                assertThat(replica.getValue()).as("seed " + seed + ": partition " + p + " on node " + replica.getKey()
                        + " against node " + cluster.nodeIds().get(0)).isEqualTo(first);
            }
        }
    }

    /** Every batch of the log in {@code logDir} (closed), as base..last#checksum. */
    static List<String> batchesOf(File logDir) throws Exception {
        List<String> batches = new ArrayList<>();
        try (PartitionLog log = PartitionLog.open(logDir, new LogConfig(Map.of()), Time.SYSTEM,
                (name, task, delayMs) -> { })) {
            long offset = log.logStartOffset();
            while (offset < log.logEndOffset()) {
                long before = offset;
                for (RecordBatch batch : log.read(offset, 1024 * 1024, true).records().batches()) {
                    batches.add(batch.baseOffset() + ".." + batch.lastOffset() + "#" + batch.checksum());
                    offset = batch.nextOffset();
                }
                if (offset == before) {
                    break;
                }
            }
        }
        return batches;
    }

    private static void awaitAllInSync(Admin admin, int replicas, String what, long seed) throws Exception {
        await(() -> {
            try {
                TopicDescription description = admin.describeTopics(List.of(TOPIC)).allTopicNames()
                        .get(10, TimeUnit.SECONDS).get(TOPIC);
                return description.partitions().stream().allMatch(p -> p.leader() != null && p.isr().size() == replicas);
            } catch (Exception e) {
                return false;
            }
        }, what, seed);
    }

    private static long total(Map<Integer, ConcurrentLinkedQueue<String>> acked) {
        return acked.values().stream().mapToLong(ConcurrentLinkedQueue::size).sum();
    }

    /**
     * Waits until {@code condition} holds or 2 minutes pass: re-checked whenever a send is acknowledged, and at
     * least every 100 ms (the ISR changes without a send being acknowledged).
     */
    private static void await(BooleanSupplier condition, String what, long seed) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("seed " + seed + ": timed out waiting for " + what);
            }
            synchronized (PROGRESS) {
                PROGRESS.wait(100);
            }
        }
    }
}
