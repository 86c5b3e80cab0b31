package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.errors.InvalidReplicaAssignmentException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ElectLeadersRequest;
import org.apache.kafka.common.requests.ElectLeadersResponse;
import org.apache.kafka.common.requests.IncrementalAlterConfigsRequest;
import org.apache.kafka.common.requests.IncrementalAlterConfigsResponse;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.cluster.ControllerClient;
import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.protocol.net.BrokerChannel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;

/**
 * The Admin client's cluster calls against three brokers in this JVM, with the real kafka-clients: preferred-leader
 * election, partition reassignment while an idempotent producer keeps writing (the old replica's log removed, the new
 * one's filled), refused bad input, and topic config changes through any broker (forwarded to the active controller).
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ClusterAdminIntegrationTest {

    @TempDir
    Path dir;

    private InProcessCluster cluster;
    private Admin admin;

    @BeforeEach
    void startCluster() throws Exception {
        // no periodic preferred-leader check: only the Admin call moves leadership back
        cluster = InProcessCluster.start(dir, 3, Map.of("auto.leader.rebalance.enable", "false"));
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
    void preferredLeaderElectionMovesLeadershipBackToTheFirstReplica() throws Exception {
        createTopic("balance", 1, 3);
        TopicPartition tp = new TopicPartition("balance", 0);
        int preferred = state(tp).replicas().get(0);
        await(() -> state(tp).leader() == preferred, "the preferred replica " + preferred + " leading " + tp);
        assertThat(admin.electLeaders(ElectionType.PREFERRED, Set.of(tp)).partitions().get(30, TimeUnit.SECONDS)
                .get(tp)).get().isInstanceOf(ElectionNotNeededException.class);

        cluster.stop(preferred);
        await(() -> state(tp).leader() >= 0 && state(tp).leader() != preferred, "leadership of " + tp + " moving");
        cluster.start(preferred);
        await(() -> state(tp).isr().contains(preferred), "replica " + preferred + " back in the ISR of " + tp);
        assertThat(state(tp).leader()).isNotEqualTo(preferred);

        Map<TopicPartition, Optional<Throwable>> result = admin.electLeaders(ElectionType.PREFERRED, Set.of(tp))
                .partitions().get(30, TimeUnit.SECONDS);
        assertThat(result.get(tp)).isEmpty();
        await(() -> cluster.runningIds().stream().allMatch(id -> state(id, tp).leader() == preferred),
                "every node seeing " + preferred + " lead " + tp);

        TopicPartition unknown = new TopicPartition("balance", 7);
        assertThat(admin.electLeaders(ElectionType.PREFERRED, Set.of(unknown)).partitions().get(30, TimeUnit.SECONDS)
                .get(unknown)).get().isInstanceOf(UnknownTopicOrPartitionException.class);
    }

    @Test
    void reassignmentMovesAReplicaWhileProducingWithNothingAcknowledgedLost() throws Exception {
        createTopic("moving", 1, 2);
        TopicPartition tp = new TopicPartition("moving", 0);
        List<Integer> original = state(tp).replicas();
        int leaving = original.get(0);
        int staying = original.get(1);
        int joining = cluster.nodeIds().stream().filter(id -> !original.contains(id)).findFirst().orElseThrow();
        List<Integer> target = List.of(staying, joining);

        List<String> acked = Collections.synchronizedList(new ArrayList<>());
        AtomicReference<Exception> sendFailure = new AtomicReference<>();
        AtomicBoolean stop = new AtomicBoolean();
        Thread writer = new Thread(() -> {
            try (KafkaProducer<String, String> producer = producer()) {
                for (int i = 0; !stop.get(); i++) {
                    String value = "v" + i;
                    producer.send(new ProducerRecord<>("moving", value)).get(60, TimeUnit.SECONDS);
                    acked.add(value);
                }
            } catch (Exception e) {
                sendFailure.set(e);
            }
        }, "reassignment-test-producer");
        writer.start();
        try {
            await(() -> acked.size() >= 100 || sendFailure.get() != null, "100 acknowledged records");
            // the joining broker is down, so the reassignment stays in progress until it comes back
            cluster.stop(joining);
            admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(target))))
                    .all().get(30, TimeUnit.SECONDS);
            Map<TopicPartition, PartitionReassignment> ongoing = admin.listPartitionReassignments()
                    .reassignments().get(30, TimeUnit.SECONDS);
            assertThat(ongoing).containsOnlyKeys(tp);
            assertThat(ongoing.get(tp).addingReplicas()).containsExactly(joining);
            assertThat(ongoing.get(tp).removingReplicas()).containsExactly(leaving);
            assertThat(ongoing.get(tp).replicas()).containsExactlyInAnyOrder(leaving, staying, joining);
            int before = acked.size();
            await(() -> acked.size() >= before + 100 || sendFailure.get() != null,
                    "100 more acknowledged records while the reassignment waits");

            cluster.start(joining);
            await(() -> !state(tp).isReassigning() && state(tp).replicas().equals(target),
                    "the reassignment of " + tp + " to " + target + " completing");
            assertThat(admin.listPartitionReassignments().reassignments().get(30, TimeUnit.SECONDS)).isEmpty();
            int completed = acked.size();
            await(() -> acked.size() >= completed + 100 || sendFailure.get() != null,
                    "100 more acknowledged records after the reassignment");
        } finally {
            stop.set(true);
            writer.join(TimeUnit.SECONDS.toMillis(120));
        }
        assertThat(sendFailure.get()).isNull();

        Path leavingDir = dir.resolve("node-" + leaving).resolve("logs").resolve("moving-0");
        await(() -> cluster.broker(leaving).partitionManager().partition(tp).isEmpty() && !Files.exists(leavingDir),
                "node " + leaving + " closing and deleting its log of " + tp);
        long end = cluster.broker(staying).partitionManager().partition(tp).orElseThrow().logEndOffset();
        assertThat(end).isGreaterThanOrEqualTo(acked.size());
        await(() -> cluster.broker(joining).partitionManager().partition(tp).orElseThrow().logEndOffset() == end,
                "node " + joining + " holding the " + end + " records of " + tp);
        assertThat(dir.resolve("node-" + joining).resolve("logs").resolve("moving-0")).isDirectory();

        List<String> values = consumeAll("moving", acked.size()).stream().map(ConsumerRecord::value).toList();
        assertThat(values).containsAll(acked);
        assertThat(new HashSet<>(values)).hasSameSizeAs(values);
    }

    @Test
    void badReassignmentsAreRefusedAndTheClusterCarriesOn() throws Exception {
        createTopic("steady", 1, 2);
        TopicPartition tp = new TopicPartition("steady", 0);
        PartitionImage before = state(tp);
        List<Integer> withUnknown = List.of(before.replicas().get(0), 99);

        assertThatThrownBy(() -> admin.alterPartitionReassignments(Map.of(tp,
                Optional.of(new NewPartitionReassignment(withUnknown)))).all().get(30, TimeUnit.SECONDS))
                .hasCauseInstanceOf(InvalidReplicaAssignmentException.class).hasMessageContaining("99");
        TopicPartition unknown = new TopicPartition("no-such-topic", 0);
        assertThatThrownBy(() -> admin.alterPartitionReassignments(Map.of(unknown,
                Optional.of(new NewPartitionReassignment(before.replicas())))).all().get(30, TimeUnit.SECONDS))
                .hasCauseInstanceOf(UnknownTopicOrPartitionException.class).hasMessageContaining("no-such-topic");

        assertThat(admin.listPartitionReassignments().reassignments().get(30, TimeUnit.SECONDS)).isEmpty();
        assertThat(state(tp).replicas()).isEqualTo(before.replicas());
        try (KafkaProducer<String, String> producer = producer()) {
            producer.send(new ProducerRecord<>("steady", "still-works")).get(30, TimeUnit.SECONDS);
        }
        assertThat(consumeAll("steady", 1)).extracting(ConsumerRecord::value).containsExactly("still-works");
    }

    @Test
    void topicsAreCreatedWithTheReplicasTheClientAssignsAndBadAssignmentsAreRefused() throws Exception {
        admin.createTopics(List.of(new NewTopic("assigned", Map.of(0, List.of(3, 1, 2), 1, List.of(2, 3, 1)))))
                .all().get(30, TimeUnit.SECONDS);
        TopicPartition first = new TopicPartition("assigned", 0);
        TopicPartition second = new TopicPartition("assigned", 1);
        await(() -> state(first) != null && state(second) != null, "the assigned partitions in the metadata");
        assertThat(state(first).replicas()).containsExactly(3, 1, 2);
        assertThat(state(first).leader()).isEqualTo(3);
        assertThat(state(second).replicas()).containsExactly(2, 3, 1);
        assertThat(state(second).leader()).isEqualTo(2);

        assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("badly-assigned", Map.of(0, List.of(1, 99)))))
                .all().get(30, TimeUnit.SECONDS))
                .hasCauseInstanceOf(InvalidReplicaAssignmentException.class).hasMessageContaining("broker 99");
        assertThat(admin.listTopics().names().get(30, TimeUnit.SECONDS)).doesNotContain("badly-assigned");
        await(() -> cluster.broker(3).partitionManager().partition(first).isPresent(), "the leader's replica open");
        try (KafkaProducer<String, String> producer = producer()) {
            producer.send(new ProducerRecord<>("assigned", 0, null, "still-works")).get(30, TimeUnit.SECONDS);
        }
        assertThat(consumeAll("assigned", 1)).extracting(ConsumerRecord::value).containsExactly("still-works");
    }

    @Test
    void topicConfigsChangeThroughABrokerThatIsNotTheController() throws Exception {
        createTopic("tuned", 1, 3);
        int active = cluster.broker(cluster.runningIds().get(0)).controller().activeControllerId().orElseThrow();
        int other = cluster.nodeIds().stream().filter(id -> id != active).findFirst().orElseThrow();
        ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, "tuned");
        String bootstrap = "127.0.0.1:" + cluster.broker(other).boundAddress().getPort();
        try (Admin viaOther = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            viaOther.incrementalAlterConfigs(Map.of(topic, List.of(new AlterConfigOp(
                    new ConfigEntry("retention.ms", "123456"), AlterConfigOp.OpType.SET)))).all()
                    .get(30, TimeUnit.SECONDS);
            await(() -> cluster.runningIds().stream().allMatch(id -> "123456".equals(cluster.broker(id).controller()
                    .image().topic("tuned").orElseThrow().configs().get("retention.ms"))),
                    "every node's metadata holding retention.ms=123456");
            Config described = viaOther.describeConfigs(List.of(topic)).all().get(30, TimeUnit.SECONDS).get(topic);
            assertThat(described.get("retention.ms").value()).isEqualTo("123456");
        }

        // sent straight to the node that is not the active controller: forwarded, not refused with NOT_CONTROLLER
        EventLoopGroup group = new NioEventLoopGroup(1);
        try {
            BrokerChannel channel = BrokerChannel.connect(group.next(), "127.0.0.1",
                    cluster.broker(other).boundAddress().getPort(), "admin-test", 30_000).get(30, TimeUnit.SECONDS);
            try {
                IncrementalAlterConfigsRequestData alter = new IncrementalAlterConfigsRequestData();
                alter.resources().add(new IncrementalAlterConfigsRequestData.AlterConfigsResource()
                        .setResourceType(ConfigResource.Type.TOPIC.id()).setResourceName("tuned")
                        .setConfigs(new IncrementalAlterConfigsRequestData.AlterableConfigCollection(List.of(
                                new IncrementalAlterConfigsRequestData.AlterableConfig().setName("retention.ms")
                                        .setValue("654321").setConfigOperation((byte) 0)).iterator())));
                IncrementalAlterConfigsResponse altered = channel.<IncrementalAlterConfigsResponse>send(
                        new IncrementalAlterConfigsRequest.Builder(alter),
                        ApiKeys.INCREMENTAL_ALTER_CONFIGS.latestVersion()).get(30, TimeUnit.SECONDS);
                assertThat(altered.data().responses()).singleElement()
                        .satisfies(r -> assertThat(Errors.forCode(r.errorCode())).isEqualTo(Errors.NONE));
                assertThat(cluster.broker(active).controller().image().topic("tuned").orElseThrow().configs()
                        .get("retention.ms")).isEqualTo("654321");

                TopicPartition tp = new TopicPartition("tuned", 0);
                ElectLeadersResponse elected = channel.<ElectLeadersResponse>send(new ElectLeadersRequest.Builder(
                        ElectionType.PREFERRED, Set.of(tp), 30_000), ApiKeys.ELECT_LEADERS.latestVersion())
                        .get(30, TimeUnit.SECONDS);
                assertThat(Errors.forCode(elected.data().errorCode())).isEqualTo(Errors.NONE);
                assertThat(elected.data().replicaElectionResults().get(0).partitionResult().get(0).errorCode())
                        .isIn(Errors.NONE.code(), Errors.ELECTION_NOT_NEEDED.code());
            } finally {
                channel.close();
            }
            // a request another node forwarded is answered here, never forwarded again: NOT_CONTROLLER
            BrokerChannel forwarded = BrokerChannel.connect(group.next(), "127.0.0.1",
                    cluster.broker(other).boundAddress().getPort(), ControllerClient.CLIENT_ID_PREFIX + "9", 30_000)
                    .get(30, TimeUnit.SECONDS);
            try {
                ElectLeadersResponse refused = forwarded.<ElectLeadersResponse>send(new ElectLeadersRequest.Builder(
                        ElectionType.PREFERRED, Set.of(new TopicPartition("tuned", 0)), 30_000),
                        ApiKeys.ELECT_LEADERS.latestVersion()).get(30, TimeUnit.SECONDS);
                assertThat(Errors.forCode(refused.data().errorCode())).isEqualTo(Errors.NOT_CONTROLLER);
            } finally {
                forwarded.close();
            }
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
        }
    }

    private void createTopic(String name, int partitions, int replicationFactor) throws Exception {
        admin.createTopics(List.of(new NewTopic(name, partitions, (short) replicationFactor))).all()
                .get(30, TimeUnit.SECONDS);
        for (int p = 0; p < partitions; p++) {
            TopicPartition tp = new TopicPartition(name, p);
            await(() -> state(tp) != null && state(tp).leader() >= 0 && state(tp).replicas().stream()
                    .allMatch(id -> cluster.broker(id).partitionManager().partition(tp).isPresent()),
                    "the replicas of " + tp + " open");
        }
    }

    /** The partition's state in the metadata of the first running node, or null. */
    private PartitionImage state(TopicPartition tp) {
        return state(cluster.runningIds().get(0), tp);
    }

    private PartitionImage state(int nodeId, TopicPartition tp) {
        return cluster.broker(nodeId).controller().image().topic(tp.topic())
                .map(t -> t.partitions().get(tp.partition())).orElse(null);
    }

    private KafkaProducer<String, String> producer() {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    private List<ConsumerRecord<String, String>> consumeAll(String topic, int expected) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        List<ConsumerRecord<String, String>> records = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new StringDeserializer())) {
            List<TopicPartition> tps = List.of(new TopicPartition(topic, 0));
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
        cluster.awaitCondition(condition, what, Duration.ofSeconds(90));
    }
}
