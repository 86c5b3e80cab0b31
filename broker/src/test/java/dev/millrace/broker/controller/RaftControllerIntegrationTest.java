package dev.millrace.broker.controller;

import static dev.millrace.broker.controller.ControllerTestSupport.LOOPBACK;
import static dev.millrace.broker.controller.ControllerTestSupport.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.controller.Controller.NewTopic;
import dev.millrace.broker.controller.Controller.TopicConfigChange;
import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.controller.MetadataImage.TopicImage;

/** One embedded voter on 127.0.0.1, restarted on the same port and data directory. */
@Tag("integration")
class RaftControllerIntegrationTest {

    /** Entries committed by a first start: the cluster id, broker 1's registration and its unfencing. */
    private static final int SETUP_ENTRIES = 3;

    @TempDir
    Path tempDir;

    private int port;
    private final List<RaftController> started = new ArrayList<>();

    @BeforeEach
    void pickPort() throws IOException {
        port = ControllerTestSupport.freePort();
    }

    @AfterEach
    void closeControllers() {
        started.forEach(RaftController::close);
    }

    private ControllerConfig config() {
        return ControllerConfig.singleVoter(1, tempDir.resolve("data").resolve("metadata"), LOOPBACK, port)
                .withInitialClusterId(ControllerTestSupport.CLUSTER_ID);
    }

    private RaftController start(List<MetadataListener> listeners) throws Exception {
        RaftController controller = new RaftController(config());
        started.add(controller);
        listeners.forEach(controller::registerListener);
        controller.start();
        ControllerTestSupport.registerUnfenced(controller, 1);
        return controller;
    }

    private RaftController start() throws Exception {
        return start(List.of());
    }

    private static NewTopic topic(String name, int partitions) {
        return new NewTopic(name, partitions, (short) -1, Map.of());
    }

    private static Map<String, ApiError> ok(String... names) {
        Map<String, ApiError> expected = new LinkedHashMap<>();
        for (String name : names) {
            expected.put(name, ApiError.NONE);
        }
        return expected;
    }

    @Test
    @Timeout(30)
    void shouldCreateDescribeGrowAlterAndDeleteTopicsWhenSingleVoter() throws Exception {
        RaftController controller = start();
        assertThat(controller.isActive()).isTrue();
        assertThat(controller.leaderAddress()).contains(LOOPBACK + ":" + port);

        assertThat(await(controller.createTopics(List.of(topic("orders", 3), new NewTopic("audit", -1, (short) 1,
                Map.of("cleanup.policy", "compact"))), false))).isEqualTo(ok("orders", "audit"));

        TopicImage orders = controller.image().topic("orders").orElseThrow();
        assertThat(orders.partitions().values()).extracting(PartitionImage::replicas)
                .containsOnly(List.of(1));
        assertThat(orders.partitions()).containsOnlyKeys(0, 1, 2);
        assertThat(controller.image().topic("audit").orElseThrow().configs())
                .containsExactly(Map.entry("cleanup.policy", "compact"));

        assertThat(await(controller.createPartitions(Map.of("orders", 5), false))).isEqualTo(ok("orders"));
        assertThat(controller.image().topic("orders").orElseThrow().partitions()).hasSize(5);
        assertThat(controller.image().topic("orders").orElseThrow().topicId()).isEqualTo(orders.topicId());

        assertThat(await(controller.alterTopicConfigs(Map.of("orders", new TopicConfigChange(
                Map.of("retention.ms", "60000"), List.of(), false)), false))).isEqualTo(ok("orders"));
        assertThat(controller.image().topic("orders").orElseThrow().configs())
                .containsExactly(Map.entry("retention.ms", "60000"));

        assertThat(await(controller.deleteTopics(List.of("orders")))).isEqualTo(ok("orders"));
        assertThat(controller.image().topics()).containsOnlyKeys("audit");
    }

    @Test
    @Timeout(30)
    void shouldReportEveryValidationErrorPerEntityAndChangeNothingWhenValidateOnly() throws Exception {
        RaftController controller = start();
        await(controller.createTopics(List.of(topic("existing", 3)), false));
        MetadataImage before = controller.image();

        Map<String, ApiError> created = await(controller.createTopics(List.of(
                topic("bad/name", 1), topic("existing", 1), topic("zero", 0),
                new NewTopic("rf3", 1, (short) 3, Map.of()),
                new NewTopic("cfg", 1, (short) 1, Map.of("retention.ms", "never")),
                topic("fine", 1)), true));
        Map<String, ApiError> deleted = await(controller.deleteTopics(List.of("missing")));
        Map<String, ApiError> grown = await(controller.createPartitions(Map.of("existing", 2, "missing", 4), false));
        Map<String, ApiError> altered = await(controller.alterTopicConfigs(Map.of(
                "existing", new TopicConfigChange(Map.of("bogus.setting", "1"), List.of(), false),
                "missing", new TopicConfigChange(Map.of("retention.ms", "1"), List.of(), false)), false));

        assertThat(created.get("bad/name").error()).isEqualTo(Errors.INVALID_TOPIC_EXCEPTION);
        assertThat(created.get("existing").error()).isEqualTo(Errors.TOPIC_ALREADY_EXISTS);
        assertThat(created.get("zero").error()).isEqualTo(Errors.INVALID_PARTITIONS);
        assertThat(created.get("rf3")).isEqualTo(new ApiError(Errors.INVALID_REPLICATION_FACTOR,
                "Replication factor 3 is larger than the 1 available (registered and unfenced) broker(s)"));
        assertThat(created.get("cfg").error()).isEqualTo(Errors.INVALID_CONFIG);
        assertThat(created.get("cfg").message()).contains("retention.ms");
        assertThat(created.get("fine")).isEqualTo(ApiError.NONE);
        assertThat(deleted.get("missing").error()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(grown.get("existing")).isEqualTo(new ApiError(Errors.INVALID_PARTITIONS,
                "Topic existing has 3 partitions, cannot reduce or keep the count: asked for 2"));
        assertThat(grown.get("missing").error()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(altered.get("existing").error()).isEqualTo(Errors.INVALID_CONFIG);
        assertThat(altered.get("existing").message()).contains("bogus.setting");
        assertThat(altered.get("missing").error()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(controller.image()).as("nothing was committed").isEqualTo(before);
    }

    @Test
    @Timeout(30)
    void shouldLetExactlyOneOfTwoConcurrentCreatesSucceed() throws Exception {
        RaftController controller = start();
        CountDownLatch go = new CountDownLatch(1);
        List<CompletableFuture<Map<String, ApiError>>> results = new CopyOnWriteArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            int partitions = i + 1;
            Thread thread = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                results.add(controller.createTopics(List.of(topic("contended", partitions)), false));
            });
            thread.start();
            threads.add(thread);
        }
        go.countDown();
        for (Thread thread : threads) {
            thread.join(TimeUnit.SECONDS.toMillis(10));
        }

        List<Errors> outcomes = new ArrayList<>();
        for (CompletableFuture<Map<String, ApiError>> result : results) {
            outcomes.add(await(result).get("contended").error());
        }
        assertThat(outcomes).containsExactlyInAnyOrder(Errors.NONE, Errors.TOPIC_ALREADY_EXISTS);
        assertThat(controller.image().topics()).containsOnlyKeys("contended");
    }

    @Test
    @Timeout(40)
    void shouldRestoreTheSameImageFromTheRaftLogWhenRestartedOnTheSamePort() throws Exception {
        RaftController first = start();
        await(first.createTopics(List.of(topic("a", 2), topic("b", 1), topic("c", 1)), false));
        await(first.createPartitions(Map.of("a", 4), false));
        await(first.alterTopicConfigs(Map.of("b", new TopicConfigChange(Map.of("retention.ms", "5"), List.of(),
                false)), false));
        await(first.deleteTopics(List.of("c")));
        MetadataImage before = first.image();
        first.close();

        List<MetadataImage> replayed = new CopyOnWriteArrayList<>();
        RaftController second = start(List.of((previous, current) -> replayed.add(current)));

        assertThat(second.image()).isEqualTo(before);
        assertThat(replayed).as("one image per committed entry: cluster id, registration, unfencing, 4 changes")
                .hasSize(SETUP_ENTRIES + 4);
        Uuid aId = before.topic("a").orElseThrow().topicId();
        assertThat(await(second.createPartitions(Map.of("a", 5), false))).isEqualTo(ok("a"));
        assertThat(second.image().topic("a").orElseThrow().topicId()).isEqualTo(aId);
    }

    /**
     * A restart whose replay of the metadata log takes longer than the start timeout, entry after entry (a broker's
     * listener loading partition logs recovered after a SIGKILL), still starts: the deadline moves on while the node
     * applies entries ({@link ProgressDeadline}). The listener's pause per entry stands for that loading.
     */
    @Test
    @Timeout(60)
    void shouldStartWhenItsReplayOutlastsTheStartTimeoutButKeepsApplying() throws Exception {
        RaftController first = start();
        for (int i = 0; i < 15; i++) {
            await(first.createTopics(List.of(topic("t" + i, 1)), false));
        }
        MetadataImage before = first.image();
        first.close();

        RaftController second = new RaftController(config().withStartTimeout(java.time.Duration.ofSeconds(1)));
        started.add(second);
        List<MetadataImage> replayed = new CopyOnWriteArrayList<>();
        second.registerListener((previous, current) -> {
            replayed.add(current);
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(150));
        });
        long startNs = System.nanoTime();
        second.start();

        assertThat(replayed).as("every committed entry replayed, 150 ms each").hasSizeGreaterThanOrEqualTo(
                SETUP_ENTRIES + 15);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs)).as("longer than the start timeout")
                .isGreaterThan(1_000);
        assertThat(second.image().topics()).isEqualTo(before.topics());
    }

    @Test
    @Timeout(40)
    void shouldRestoreTheSameImageFromASnapshotAndTheLogAfterItWhenRestarted() throws Exception {
        RaftController first = start();
        await(first.createTopics(List.of(topic("a", 2)), false));
        await(first.createTopics(List.of(topic("b", 1)), false));
        await(first.createTopics(List.of(topic("gone", 1)), false));
        await(first.deleteTopics(List.of("gone")));
        await(first.snapshot());
        MetadataImage atSnapshot = first.image();
        await(first.alterTopicConfigs(Map.of("a", new TopicConfigChange(Map.of("retention.ms", "7"), List.of(),
                false)), false));
        MetadataImage before = first.image();
        first.close();

        List<MetadataImage> restored = new CopyOnWriteArrayList<>();
        RaftController second = start(List.of((previous, current) -> restored.add(current)));

        assertThat(second.image()).isEqualTo(before);
        assertThat(restored).as("the snapshot in one step, then the one entry after it").hasSize(2);
        assertThat(restored.get(0)).isEqualTo(atSnapshot);
        assertThat(restored.get(0).topic("a").orElseThrow().topicId())
                .isEqualTo(before.topic("a").orElseThrow().topicId());
    }

    @Test
    @Timeout(30)
    void shouldNotifyListenersOfEveryChangeInOrder() throws Exception {
        List<MetadataImage[]> updates = new CopyOnWriteArrayList<>();
        RaftController controller = start(List.of((previous, current) ->
                updates.add(new MetadataImage[] {previous, current})));

        await(controller.createTopics(List.of(topic("x", 1)), false));
        await(controller.createPartitions(Map.of("x", 2), false));
        await(controller.deleteTopics(List.of("x")));

        assertThat(updates).hasSize(SETUP_ENTRIES + 3);
        assertThat(updates.get(0)[0]).isEqualTo(MetadataImage.EMPTY);
        for (int i = 1; i < updates.size(); i++) {
            assertThat(updates.get(i)[0]).isSameAs(updates.get(i - 1)[1]);
            assertThat(updates.get(i)[1].appliedIndex()).isGreaterThan(updates.get(i - 1)[1].appliedIndex());
        }
        assertThat(updates.get(SETUP_ENTRIES)[1].topic("x").orElseThrow().partitions()).hasSize(1);
        assertThat(updates.get(SETUP_ENTRIES + 1)[1].topic("x").orElseThrow().partitions()).hasSize(2);
        assertThat(updates.get(SETUP_ENTRIES + 2)[1].topics()).isEmpty();
        assertThat(updates.get(SETUP_ENTRIES + 2)[1]).isSameAs(controller.image());
    }

    @Test
    @Timeout(30)
    void shouldAnswerNotControllerWhenClosed() throws Exception {
        RaftController controller = start();
        controller.close();

        Map<String, ApiError> result = await(controller.createTopics(List.of(topic("late", 1)), false));

        assertThat(result.get("late").error()).isEqualTo(Errors.NOT_CONTROLLER);
        assertThat(result.get("late").message()).contains("shut down");
    }

    @Test
    @Timeout(30)
    void shouldFailClearlyWhenTheQuorumPortIsTaken() throws Exception {
        try (ServerSocket squatter = new ServerSocket(port, 1, InetAddress.getByName(LOOPBACK))) {
            assertThat(squatter.isBound()).isTrue();
            RaftController controller = new RaftController(config());
            started.add(controller);

            assertThatThrownBy(controller::start)
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("cannot bind the quorum port " + LOOPBACK + ":" + port);
        }
    }
}
