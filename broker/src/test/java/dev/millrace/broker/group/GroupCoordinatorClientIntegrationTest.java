package dev.millrace.broker.group;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.message.FindCoordinatorResponseData.Coordinator;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.LeaveGroupRequest;
import org.apache.kafka.common.requests.ListGroupsRequest;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.SyncGroupRequest;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.coordinator.ReplicationAwaiter;
import dev.millrace.broker.network.ApiVersionTable;
import dev.millrace.broker.network.KafkaServer;
import dev.millrace.delay.SystemTimer;
import dev.millrace.delay.Time;
import dev.millrace.delay.TimerReaper;
import dev.millrace.delay.TimerTask;

/**
 * The real {@code KafkaConsumer} (classic protocol) and {@code Admin} against the coordinator over
 * the project's Kafka listener on loopback. Everything but the group APIs is a stand-in: one topic
 * with no records (metadata, list offsets, and fetches that wait and return nothing), so the test
 * exercises exactly the coordinator: member ids, joins, syncs, heartbeats, commits by topic id
 * (OffsetCommit/OffsetFetch v10), leave on close, describe, list and delete.
 */
@Timeout(120)
class GroupCoordinatorClientIntegrationTest {

    private static final String TOPIC = "events";
    private static final Uuid TOPIC_ID = Uuid.randomUuid();
    private static final int PARTITIONS = 4;
    private static final ApiVersionTable VERSIONS = new ApiVersionTable.Builder()
            .addAll(ApiKeys.API_VERSIONS)
            .addAll(ApiKeys.METADATA)
            .add(ApiKeys.FETCH, 4, 12)
            .addAll(ApiKeys.LIST_OFFSETS)
            .addAll(ApiKeys.FIND_COORDINATOR)
            .addAll(ApiKeys.JOIN_GROUP)
            .addAll(ApiKeys.SYNC_GROUP)
            .addAll(ApiKeys.HEARTBEAT)
            .addAll(ApiKeys.LEAVE_GROUP)
            .addAll(ApiKeys.OFFSET_COMMIT)
            .addAll(ApiKeys.OFFSET_FETCH)
            .addAll(ApiKeys.DESCRIBE_GROUPS)
            .addAll(ApiKeys.LIST_GROUPS)
            .addAll(ApiKeys.DELETE_GROUPS)
            .build();

    @TempDir
    Path dir;

    private final AtomicReference<Node> self = new AtomicReference<>();
    private LogBackedOffsetsTopic topic;
    private TimerReaper timer;
    private ExecutorService coordinatorThread;
    private ExecutorService requestThreads;
    private GroupCoordinator coordinator;
    private KafkaServer server;
    private String bootstrap;

    @BeforeEach
    void start() throws Exception {
        topic = LogBackedOffsetsTopic.open(dir, 3);
        timer = TimerReaper.start("group-test-reaper", new SystemTimer("group-test-timer"), 10);
        coordinatorThread = Executors.newSingleThreadExecutor();
        TopicIds ids = new TopicIds() {
            @Override
            public Optional<String> nameOf(Uuid topicId) {
                return TOPIC_ID.equals(topicId) ? Optional.of(TOPIC) : Optional.empty();
            }

            @Override
            public Optional<Uuid> idOf(String topicName) {
                return TOPIC.equals(topicName) ? Optional.of(TOPIC_ID) : Optional.empty();
            }
        };
        coordinator = new GroupCoordinator(GroupCoordinatorConfig.defaults().withInitialRebalanceDelayMs(0), topic,
                ids, ReplicationAwaiter.IMMEDIATE, timer, Time.SYSTEM, coordinatorThread);
        for (int p = 0; p < topic.partitionCount(); p++) {
            coordinator.onElected(p, 0);
        }
        coordinator.awaitLoaded().get(10, TimeUnit.SECONDS);
        requestThreads = Executors.newFixedThreadPool(2);
        server = new KafkaServer("127.0.0.1", 0, 16 << 20, this::handle, VERSIONS, requestThreads);
        InetSocketAddress address = server.start();
        self.set(new Node(1, "127.0.0.1", address.getPort()));
        bootstrap = "127.0.0.1:" + address.getPort();
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (server != null) {
            server.close();
        }
        requestThreads.shutdown();
        coordinator.close();
        coordinatorThread.shutdown();
        coordinatorThread.awaitTermination(10, TimeUnit.SECONDS);
        timer.close();
        topic.close();
    }

    private CompletableFuture<AbstractResponse> handle(RequestContext context, AbstractRequest request) {
        short version = context.apiVersion();
        return switch (context.header.apiKey()) {
            case API_VERSIONS -> done(new ApiVersionsResponse(VERSIONS.toResponseData()));
            case METADATA -> done(metadata(version));
            case LIST_OFFSETS -> done(listOffsets((ListOffsetsRequest) request));
            case FETCH -> emptyFetchAfterWait((FetchRequest) request);
            case FIND_COORDINATOR -> done(findSelf((FindCoordinatorRequest) request, version));
            case JOIN_GROUP -> widen(coordinator.handleJoinGroup((JoinGroupRequest) request, version,
                    context.clientId(), context.clientAddress().toString()));
            case SYNC_GROUP -> widen(coordinator.handleSyncGroup((SyncGroupRequest) request));
            case HEARTBEAT -> widen(coordinator.handleHeartbeat((HeartbeatRequest) request));
            case LEAVE_GROUP -> widen(coordinator.handleLeaveGroup((LeaveGroupRequest) request, version));
            case OFFSET_COMMIT -> widen(coordinator.handleOffsetCommit((OffsetCommitRequest) request, version));
            case OFFSET_FETCH -> widen(coordinator.handleOffsetFetch((OffsetFetchRequest) request, version));
            case DESCRIBE_GROUPS -> widen(coordinator.handleDescribeGroups((DescribeGroupsRequest) request,
                    version));
            case LIST_GROUPS -> widen(coordinator.handleListGroups((ListGroupsRequest) request));
            case DELETE_GROUPS -> widen(coordinator.handleDeleteGroups((DeleteGroupsRequest) request, version));
            default -> CompletableFuture.failedFuture(new IllegalStateException("not served: "
                    + context.header.apiKey()));
        };
    }

    /** FindCoordinator as the broker answers it on one node: this node for every key. */
    private FindCoordinatorResponse findSelf(FindCoordinatorRequest request, short version) {
        Node node = self.get();
        FindCoordinatorResponseData data = new FindCoordinatorResponseData();
        if (version < FindCoordinatorRequest.MIN_BATCHED_VERSION) {
            data.setNodeId(node.id()).setHost(node.host()).setPort(node.port());
        } else {
            request.data().coordinatorKeys().forEach(key -> data.coordinators().add(new Coordinator().setKey(key)
                    .setNodeId(node.id()).setHost(node.host()).setPort(node.port())));
        }
        return new FindCoordinatorResponse(data);
    }

    private static CompletableFuture<AbstractResponse> done(AbstractResponse response) {
        return CompletableFuture.completedFuture(response);
    }

    private static <T extends AbstractResponse> CompletableFuture<AbstractResponse> widen(CompletableFuture<T> f) {
        return f.thenApply(r -> r);
    }

    private MetadataResponse metadata(short version) {
        Node node = self.get();
        MetadataResponseData data = new MetadataResponseData().setClusterId("group-test").setControllerId(node.id());
        data.brokers().add(new MetadataResponseData.MetadataResponseBroker().setNodeId(node.id())
                .setHost(node.host()).setPort(node.port()));
        MetadataResponseData.MetadataResponseTopic t = new MetadataResponseData.MetadataResponseTopic()
                .setName(TOPIC).setTopicId(TOPIC_ID);
        for (int p = 0; p < PARTITIONS; p++) {
            t.partitions().add(new MetadataResponseData.MetadataResponsePartition().setPartitionIndex(p)
                    .setLeaderId(node.id()).setLeaderEpoch(0).setReplicaNodes(List.of(node.id()))
                    .setIsrNodes(List.of(node.id())));
        }
        data.topics().add(t);
        return new MetadataResponse(data, version);
    }

    private static ListOffsetsResponse listOffsets(ListOffsetsRequest request) {
        ListOffsetsResponseData data = new ListOffsetsResponseData();
        for (ListOffsetsRequestData.ListOffsetsTopic t : request.data().topics()) {
            ListOffsetsResponseData.ListOffsetsTopicResponse out = new ListOffsetsResponseData
                    .ListOffsetsTopicResponse().setName(t.name());
            t.partitions().forEach(p -> out.partitions().add(new ListOffsetsResponseData
                    .ListOffsetsPartitionResponse().setPartitionIndex(p.partitionIndex()).setOffset(0)
                    .setTimestamp(-1).setLeaderEpoch(0)));
            data.topics().add(out);
        }
        return new ListOffsetsResponse(data);
    }

    private CompletableFuture<AbstractResponse> emptyFetchAfterWait(FetchRequest request) {
        FetchResponseData data = new FetchResponseData();
        for (FetchRequestData.FetchTopic t : request.data().topics()) {
            FetchResponseData.FetchableTopicResponse out = new FetchResponseData.FetchableTopicResponse()
                    .setTopic(t.topic()).setTopicId(t.topicId());
            t.partitions().forEach(p -> out.partitions().add(new FetchResponseData.PartitionData()
                    .setPartitionIndex(p.partition()).setHighWatermark(0).setLastStableOffset(0)
                    .setLogStartOffset(0).setRecords(MemoryRecords.EMPTY)));
            data.responses().add(out);
        }
        CompletableFuture<AbstractResponse> result = new CompletableFuture<>();
        timer.add(new TimerTask(Math.min(request.maxWait(), 200)) {
            @Override
            public void run() {
                result.complete(FetchResponse.of(data));
            }
        });
        return result;
    }

    private KafkaConsumer<String, String> consumer(String clientId) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "g");
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
        props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
        props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "100");
        KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new StringDeserializer());
        consumer.subscribe(List.of(TOPIC));
        return consumer;
    }

    /** Polls every consumer in turn until {@code condition} holds; fails after 30 s. */
    private static void pollUntil(List<KafkaConsumer<String, String>> consumers, BooleanSupplier condition,
                                  String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what + "; assignments "
                        + consumers.stream().map(c -> c.assignment().toString()).toList());
            }
            for (KafkaConsumer<String, String> consumer : consumers) {
                consumer.poll(Duration.ofMillis(50));
            }
        }
    }

    @Test
    void shouldServeRealConsumersThroughJoinCommitRebalanceLeaveAndAdminCalls() throws Exception {
        KafkaConsumer<String, String> a = consumer("consumer-a");
        KafkaConsumer<String, String> b = null;
        try {
            pollUntil(List.of(a), () -> a.assignment().size() == PARTITIONS, "a to own every partition");
            Map<TopicPartition, OffsetAndMetadata> commits = new HashMap<>();
            for (int p = 0; p < PARTITIONS; p++) {
                commits.put(new TopicPartition(TOPIC, p), new OffsetAndMetadata(10L * (p + 1), "from-a"));
            }
            a.commitSync(commits);

            KafkaConsumer<String, String> second = consumer("consumer-b");
            b = second;
            pollUntil(List.of(a, second), () -> a.assignment().size() == 2 && second.assignment().size() == 2,
                    "a and b to share the partitions");
            Set<TopicPartition> ofB = second.assignment();
            Map<TopicPartition, OffsetAndMetadata> seenByB = second.committed(ofB);
            for (TopicPartition tp : ofB) {
                assertThat(seenByB.get(tp).offset()).isEqualTo(commits.get(tp).offset());
                assertThat(seenByB.get(tp).metadata()).isEqualTo("from-a");
            }

            a.close();
            pollUntil(List.of(second), () -> second.assignment().size() == PARTITIONS,
                    "b to take over after a left");

            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
                Map<TopicPartition, OffsetAndMetadata> listed = admin.listConsumerGroupOffsets("g")
                        .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
                assertThat(listed).hasSize(PARTITIONS);
                ConsumerGroupDescription description = admin.describeConsumerGroups(List.of("g"))
                        .describedGroups().get("g").get(30, TimeUnit.SECONDS);
                assertThat(description.groupState()).isEqualTo(GroupState.STABLE);
                assertThat(description.members()).singleElement().satisfies(m ->
                        assertThat(m.clientId()).isEqualTo("consumer-b"));

                second.close();
                b = null;
                admin.deleteConsumerGroups(List.of("g")).all().get(30, TimeUnit.SECONDS);
                assertThat(admin.listConsumerGroupOffsets("g").partitionsToOffsetAndMetadata()
                        .get(30, TimeUnit.SECONDS)).isEmpty();
            }
        } finally {
            List<KafkaConsumer<String, String>> open = new ArrayList<>();
            open.add(a);
            if (b != null) {
                open.add(b);
            }
            open.forEach(c -> c.close(Duration.ofSeconds(5)));
        }
    }
}
