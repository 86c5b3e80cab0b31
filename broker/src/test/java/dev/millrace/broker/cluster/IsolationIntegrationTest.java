package dev.millrace.broker.cluster;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.message.MetadataResponseData.MetadataResponsePartition;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.server.RawConnection;

/**
 * A partition leader cut off from the other brokers while clients still reach it (issue 22, "Isolation"). Three
 * broker processes, each in a network namespace of its own ({@link NamespaceCluster}); a topic of one partition
 * with replication factor 3 and {@code min.insync.replicas=2}; an idempotent {@code acks=all} producer writing
 * steadily. The leader is cut off from the other two (replication, the metadata quorum and its heartbeats all stop)
 * for a while, then healed; once with a leader that is not the controller, once with one that is (it loses the
 * metadata quorum's leadership too). Shown:
 * <ul>
 *   <li>the isolated leader takes the acks=all writes that a client sends straight to it (a raw connection: a
 *       kafka-clients producer would find the new leader through another broker) into its log, but answers each
 *       with an error: it cannot complete them alone, nor shrink its ISR without the controller; and it still
 *       believes in its old leader epoch;</li>
 *   <li>the other two move on: they elect a new leader in a higher epoch and the producer's writes are
 *       acknowledged again while the old leader is still cut off;</li>
 *   <li>after healing, the old leader follows the new one (it stepped down) and is back in the ISR; the writes it
 *       took but never acknowledged are gone (its divergent tail was truncated); every acknowledged record is there
 *       exactly once, in order, in a log that is the same on every replica.</li>
 * </ul>
 * Needs root and iproute2 for the namespaces; skipped with the reason otherwise.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class IsolationIntegrationTest {

    private static final String TOPIC = "isolated";
    private static final TopicPartition PARTITION = new TopicPartition(TOPIC, 0);
    private static final int RECORDS_PER_SECOND = 500;
    /** Notified whenever a send is acknowledged, so that waits re-check their condition. */
    private static final Object PROGRESS = new Object();

    @TempDir
    Path dir;

    /** What a producer sent and what was acknowledged. */
    private static final class Flow {
        final String name;
        final String prefix;
        final AtomicLong sent = new AtomicLong();
        final ConcurrentLinkedQueue<String> acked = new ConcurrentLinkedQueue<>();
        final AtomicLong failed = new AtomicLong();

        Flow(String name, String prefix) {
            this.name = name;
            this.prefix = prefix;
        }
    }

    /** @param alsoController whether the isolated leader is also the metadata quorum's leader (the controller) */
    @ParameterizedTest(name = "leader also the controller: {0}")
    @ValueSource(booleans = {false, true})
    void anIsolatedLeaderAcknowledgesNothingAloneStepsDownAndCatchesUpAfterHealing(boolean alsoController)
            throws Exception {
        Assumptions.assumeTrue(NamespaceCluster.unavailableBecause().isEmpty(),
                () -> "skipped: " + NamespaceCluster.unavailableBecause().orElse(""));
        Map<String, String> settings = Map.of("broker.session.timeout.ms", "2000",
                "broker.heartbeat.interval.ms", "250", "replica.lag.time.max.ms", "4000",
                "auto.leader.rebalance.enable", "false", "offsets.topic.num.partitions", "1",
                "transaction.state.log.num.partitions", "1", "delay.topic.num.partitions", "1");
        try (NamespaceCluster cluster = NamespaceCluster.start(3, dir, settings, ClusterProcesses.FAST_START);
             Admin admin = admin(cluster.bootstrap())) {
            try {
                run(cluster, admin, alsoController);
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "\n" + cluster.describeLogs(), e);
            }
        }
    }

    private void run(NamespaceCluster cluster, Admin admin, boolean alsoController) throws Exception {
        int controller = admin.describeCluster().controller().get(60, TimeUnit.SECONDS).id();
        List<Integer> replicas = new ArrayList<>(cluster.nodeIds());
        replicas.remove(Integer.valueOf(controller));
        replicas.add(alsoController ? 0 : replicas.size(), controller); // the first replica is the preferred leader
        admin.createTopics(List.of(new NewTopic(TOPIC, Map.of(0, replicas)).configs(Map.of("min.insync.replicas",
                "2")))).all().get(120, TimeUnit.SECONDS);
        int[] leaderSeen = {-1};
        await(() -> describe(admin).filter(p -> p.leader() != null && p.isr().size() == 3).map(p -> {
            leaderSeen[0] = p.leader().id(); // kept: asking again may find no answer (describe is empty on errors)
            return true;
        }).orElse(false), "the partition with a leader and all three replicas in sync");
        int leader = leaderSeen[0];
        assertThat(leader == controller).as("leader " + leader + " is the controller " + controller)
                .isEqualTo(alsoController);
        Flow all = new Flow("producer", "p-");
        AtomicBoolean producing = new AtomicBoolean(true);
        Thread producer = new Thread(() -> produce(cluster.bootstrap(), all, producing), "isolation-producer");
        producer.start();
        List<String> rawValues = new ArrayList<>();
        try {
            await(() -> all.acked.size() >= 200, "the producer acknowledged");
            int[] epochSeen = {-1};
            await(() -> partitionSeenBy(cluster, leader).map(p -> epochSeen[0] = p.leaderEpoch()).isPresent(),
                    "the leader's own view of the partition");
            int epochAtCut = epochSeen[0];

            Path segment = cluster.dataDir(leader).resolve("logs").resolve(TOPIC + "-0")
                    .resolve("00000000000000000000.log");
            cluster.isolate(leader);
            long cutAt = System.nanoTime();
            System.out.println("IsolationIntegrationTest: isolated node " + leader + ", the leader in epoch "
                    + epochAtCut + (alsoController ? " and the controller" : "; node " + controller
                    + " is the controller"));
            int[] newLeader = new int[2];
            await(() -> cluster.nodeIds().stream().filter(id -> id != leader).anyMatch(id ->
                    partitionSeenBy(cluster, id).filter(p -> p.leaderId() != leader && p.leaderId() >= 0
                            && p.leaderEpoch() > epochAtCut).map(p -> {
                                newLeader[0] = p.leaderId();
                                newLeader[1] = p.leaderEpoch();
                                return true;
                            }).orElse(false)), "a new leader among the other two");
            long electedAt = System.nanoTime();
            // a client that reaches only the isolated leader: it takes the writes and cannot acknowledge them
            long sizeBefore = Files.size(segment);
            List<Errors> rawErrors = produceTo(cluster, leader, 3, rawValues);
            long grownBy = Files.size(segment) - sizeBefore;
            assertThat(rawErrors).as("acks=all produce answers of the isolated leader").hasSize(3)
                    .doesNotContain(Errors.NONE);
            assertThat(grownBy).as("bytes the isolated leader appended while cut off").isPositive();

            long ackedAtFailover = all.acked.size();
            await(() -> all.acked.size() >= ackedAtFailover + 500, "writes acknowledged by the new leader");
            assertThat(partitionSeenBy(cluster, leader).orElseThrow().leaderEpoch())
                    .as("the isolated node's own view: it cannot hear of the new epoch").isEqualTo(epochAtCut);
            long healAt = System.nanoTime();
            cluster.heal(leader);
            System.out.printf("IsolationIntegrationTest: node %d leads in epoch %d, seen %d ms after the cut; healed "
                    + "after %d ms; the isolated leader answered %s to acks=all writes and appended %d bytes "
                    + "meanwhile%n", newLeader[0], newLeader[1], (electedAt - cutAt) / 1_000_000,
                    (healAt - cutAt) / 1_000_000, rawErrors, grownBy);

            await(() -> partitionSeenBy(cluster, leader).map(p -> p.leaderId() != leader
                    && p.leaderEpoch() >= newLeader[1] && p.isrNodes().size() == 3).orElse(false),
                    "node " + leader + " following the new leader, back in the ISR");
            long ackedAtHeal = all.acked.size();
            await(() -> all.acked.size() >= ackedAtHeal + 200, "more writes acknowledged after the heal");
        } finally {
            producing.set(false);
            producer.join(TimeUnit.MINUTES.toMillis(2));
        }
        List<String> read = readAll(cluster.bootstrap());
        check(all, read);
        assertThat(read).as("records the isolated leader took but never acknowledged: dropped with its tail")
                .doesNotContainAnyElementsOf(rawValues);
        await(() -> describe(admin).map(p -> p.isr().size() == 3).orElse(false), "all in sync before the stop");
        for (int id : cluster.nodeIds()) {
            // 143: the JVM's status after a SIGTERM whose shutdown hooks ran (a clean stop); 137 would be a kill
            assertThat(cluster.stop(id)).as("exit status of node " + id).isIn(0, 143);
        }
        Map<Integer, List<String>> batches = new LinkedHashMap<>();
        for (int id : cluster.nodeIds()) {
            File logDir = cluster.dataDir(id).resolve("logs").resolve(TOPIC + "-0").toFile();
            batches.put(id, ClusterCrashIntegrationTest.batchesOf(logDir));
        }
        for (Map.Entry<Integer, List<String>> replica : batches.entrySet()) {
            assertThat(replica.getValue()).as("the log on node " + replica.getKey() + " against node 1")
                    .isEqualTo(batches.get(1));
        }
    }

    /** Every acknowledged record of {@code flow} read back exactly once, in the order of acknowledgement. */
    private static void check(Flow flow, List<String> read) {
        Map<String, Integer> positions = new LinkedHashMap<>();
        List<String> problems = new ArrayList<>();
        for (int i = 0; i < read.size(); i++) {
            if (positions.putIfAbsent(read.get(i), i) != null) {
                problems.add("duplicate " + read.get(i));
            }
        }
        int last = -1;
        long lost = 0;
        for (String value : flow.acked) {
            Integer at = positions.get(value);
            if (at == null) {
                lost++;
                problems.add("lost " + value);
            } else if (at < last) {
                problems.add("out of order " + value);
            } else {
                last = at;
            }
        }
        System.out.printf("IsolationIntegrationTest %s: sent=%d acknowledged=%d lost=%d failedSends=%d%n", flow.name,
                flow.sent.get(), flow.acked.size(), lost, flow.failed.get());
        assertThat(problems).as(flow.name + ": acknowledged records lost, duplicated or reordered").isEmpty();
    }

    private static void produce(String bootstrap, Flow flow, AtomicBoolean producing) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "120000");
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        props.put(ProducerConfig.METADATA_MAX_AGE_CONFIG, "2000");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(),
                new StringSerializer())) {
            long startNs = System.nanoTime();
            while (producing.get()) {
                long sequence = flow.sent.getAndIncrement();
                String value = flow.prefix + sequence;
                producer.send(new ProducerRecord<>(TOPIC, 0, null, value), (metadata, error) -> {
                    if (error == null) {
                        flow.acked.add(value);
                        synchronized (PROGRESS) {
                            PROGRESS.notifyAll();
                        }
                    } else {
                        flow.failed.incrementAndGet();
                    }
                });
                // pacing a load generator, not waiting for a condition
                long dueNs = startNs + (sequence + 1) * 1_000_000_000L / RECORDS_PER_SECOND;
                LockSupport.parkNanos(dueNs - System.nanoTime());
            }
            producer.flush();
        }
    }

    private static List<String> readAll(String bootstrap) {
        Map<String, Object> props = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        List<String> read = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.assign(List.of(PARTITION));
            consumer.seekToBeginning(List.of(PARTITION));
            long end = consumer.endOffsets(List.of(PARTITION), Duration.ofSeconds(60)).get(PARTITION);
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
            while (consumer.position(PARTITION) < end && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    read.add(record.value());
                }
            }
        }
        return read;
    }

    private static Admin admin(String bootstrap) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000",
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "10000"));
    }

    /** The partition as {@code admin}'s brokers see it, or empty when they do not answer. */
    private static Optional<TopicPartitionInfo> describe(Admin admin) {
        try {
            return admin.describeTopics(List.of(TOPIC)).allTopicNames().get(10, TimeUnit.SECONDS).get(TOPIC)
                    .partitions().stream().findFirst();
        } catch (Exception e) {
            return Optional.empty();
        }
    }

    /**
     * Sends {@code count} acks=all Produce requests of one record each straight to node {@code nodeId} (no client
     * that could find another leader) and returns the error each got; the values sent go into {@code values}.
     */
    private static List<Errors> produceTo(NamespaceCluster cluster, int nodeId, int count, List<String> values)
            throws IOException {
        List<Errors> errors = new ArrayList<>();
        try (RawConnection connection = RawConnection.open("0.0.0.0",
                new InetSocketAddress(cluster.address(nodeId), NamespaceCluster.KAFKA_PORT), 30_000)) {
            List<ProduceRequest> requests = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                String value = "unacknowledged-" + i;
                values.add(value);
                ProduceRequestData data = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(3000);
                ProduceRequestData.TopicProduceData topic = new ProduceRequestData.TopicProduceData().setName(TOPIC);
                topic.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(
                        MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(value.getBytes(UTF_8)))));
                data.topicData().add(topic);
                ProduceRequest request = new ProduceRequest.Builder((short) 9, (short) 9, data).build((short) 9);
                connection.sendRequest(request, i + 1);
                requests.add(request);
            }
            for (int i = 0; i < count; i++) {
                ProduceResponse response = (ProduceResponse) connection.readResponse(
                        RawConnection.header(requests.get(i), i + 1));
                errors.add(Errors.forCode(response.data().responses().iterator().next().partitionResponses().get(0)
                        .errorCode()));
            }
        }
        return errors;
    }

    /** The partition as node {@code nodeId} describes it in a Metadata response, or empty if it does not answer. */
    private static Optional<MetadataResponsePartition> partitionSeenBy(NamespaceCluster cluster, int nodeId) {
        try (RawConnection connection = RawConnection.open("0.0.0.0",
                new InetSocketAddress(cluster.address(nodeId), NamespaceCluster.KAFKA_PORT), 5000)) {
            MetadataRequest request = new MetadataRequest.Builder(List.of(TOPIC), false).build((short) 12);
            connection.sendRequest(request, 1);
            MetadataResponse response = (MetadataResponse) connection.readResponse(RawConnection.header(request, 1));
            return Optional.ofNullable(response.data().topics().find(TOPIC)).map(t -> t.partitions())
                    .filter(p -> !p.isEmpty()).map(p -> p.get(0));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** Waits until {@code condition} holds or 2 minutes pass, re-checking on every acknowledgement and every 100 ms. */
    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            synchronized (PROGRESS) {
                PROGRESS.wait(100);
            }
        }
    }
}
