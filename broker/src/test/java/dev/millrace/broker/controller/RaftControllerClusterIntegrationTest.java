package dev.millrace.broker.controller;

import static dev.millrace.broker.controller.ControllerTestSupport.LOOPBACK;
import static dev.millrace.broker.controller.ControllerTestSupport.await;
import static dev.millrace.broker.controller.ControllerTestSupport.awaitImage;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.log.ManualTime;
import dev.millrace.broker.controller.Controller.NewTopic;

/** Three voters in one process on 127.0.0.1, each with its own port and data directory. */
@Tag("integration")
class RaftControllerClusterIntegrationTest {

    private static final int VOTERS = 3;

    @TempDir
    Path tempDir;

    private final List<Integer> ports = new ArrayList<>();
    private final List<RaftController> controllers = new ArrayList<>();
    private final ExecutorService starter = Executors.newFixedThreadPool(VOTERS);
    private final ManualTime time = new ManualTime(1_000_000);

    @BeforeEach
    void pickPorts() throws Exception {
        for (int i = 0; i < VOTERS; i++) {
            ports.add(ControllerTestSupport.freePort());
        }
    }

    @AfterEach
    void closeAll() {
        controllers.forEach(RaftController::close);
        starter.shutdownNow();
    }

    private ControllerConfig config(int nodeId) {
        Map<Integer, String> voters = new LinkedHashMap<>();
        for (int i = 0; i < VOTERS; i++) {
            voters.put(i, LOOPBACK + ":" + ports.get(i));
        }
        return ControllerConfig.singleVoter(nodeId, tempDir.resolve("node-" + nodeId), LOOPBACK, ports.get(nodeId))
                .withVoters(voters)
                .withInitialClusterId(ControllerTestSupport.CLUSTER_ID)
                .withElectionTimeout(Duration.ofMillis(500));
    }

    /** Starts the voters together: each start() returns only once a majority runs. */
    private List<RaftController> startAll() throws Exception {
        List<Future<RaftController>> starting = new ArrayList<>();
        for (int i = 0; i < VOTERS; i++) {
            RaftController controller = new RaftController(config(i), time);
            controllers.add(controller);
            starting.add(starter.submit(() -> {
                controller.start();
                return controller;
            }));
        }
        List<RaftController> running = new ArrayList<>();
        for (Future<RaftController> future : starting) {
            running.add(future.get(30, TimeUnit.SECONDS));
        }
        return running;
    }

    private static RaftController awaitLeader(List<RaftController> candidates) throws Exception {
        CompletableFuture<?>[] activations = candidates.stream().map(RaftController::whenActive)
                .toArray(CompletableFuture[]::new);
        await(CompletableFuture.anyOf(activations));
        List<RaftController> active = candidates.stream().filter(RaftController::isActive).toList();
        assertThat(active).as("exactly one active controller").hasSize(1);
        return active.get(0);
    }

    private static void registerBrokers(RaftController leader) throws Exception {
        for (int id = 0; id < 3; id++) {
            ControllerTestSupport.registerUnfenced(leader, id);
        }
    }

    @Test
    @Timeout(60)
    void shouldReplicateTopicsCreatedOnTheLeaderToEveryVoter() throws Exception {
        List<RaftController> voters = startAll();
        RaftController leader = awaitLeader(voters);
        RaftController follower = voters.stream().filter(c -> c != leader).findFirst().orElseThrow();
        registerBrokers(leader);

        Map<String, ApiError> created = await(leader.createTopics(
                List.of(new NewTopic("replicated", 3, (short) 3, Map.of("retention.ms", "1000"))), false));
        Map<String, ApiError> refused = await(follower.createTopics(
                List.of(new NewTopic("elsewhere", 1, (short) 1, Map.of())), false));

        assertThat(created).containsExactly(Map.entry("replicated", ApiError.NONE));
        Uuid topicId = leader.image().topic("replicated").orElseThrow().topicId();
        for (RaftController voter : voters) {
            MetadataImage image = awaitImage(voter, i -> i.topic("replicated").isPresent());
            assertThat(image).isEqualTo(leader.image());
            assertThat(image.topic("replicated").orElseThrow().topicId()).isEqualTo(topicId);
        }
        assertThat(refused.get("elsewhere").error()).isEqualTo(Errors.NOT_CONTROLLER);
        assertThat(refused.get("elsewhere").message()).contains(leader.config().address());
        assertThat(follower.leaderAddress()).contains(leader.config().address());
    }

    @Test
    @Timeout(60)
    void shouldElectANewLeaderWithMetadataIntactWhenTheLeaderStops() throws Exception {
        List<RaftController> voters = startAll();
        RaftController oldLeader = awaitLeader(voters);
        registerBrokers(oldLeader);
        await(oldLeader.createTopics(List.of(new NewTopic("before", 2, (short) 2, Map.of())), false));
        MetadataImage committed = oldLeader.image();

        oldLeader.close();
        List<RaftController> survivors = voters.stream().filter(c -> c != oldLeader).toList();
        RaftController newLeader = awaitLeader(survivors);

        assertThat(newLeader.image()).isEqualTo(committed);
        assertThat(await(newLeader.createTopics(List.of(new NewTopic("after", 1, (short) 3, Map.of())), false)))
                .containsExactly(Map.entry("after", ApiError.NONE));
        RaftController otherSurvivor = survivors.stream().filter(c -> c != newLeader).findFirst().orElseThrow();
        awaitImage(otherSurvivor, i -> i.topic("after").isPresent());

        RaftController restarted = new RaftController(oldLeader.config());
        controllers.add(restarted);
        restarted.start();
        MetadataImage caughtUp = awaitImage(restarted, i -> i.topic("after").isPresent());
        assertThat(caughtUp.topic("before").orElseThrow().topicId())
                .isEqualTo(committed.topic("before").orElseThrow().topicId());
    }

    @Test
    @Timeout(30)
    void shouldFailStartWithAClearTimeoutWhenNoMajorityRuns() throws Exception {
        RaftController alone = new RaftController(config(0).withStartTimeout(Duration.ofSeconds(1)));
        controllers.add(alone);

        assertThatThrownBy(alone::start)
                .isInstanceOf(TimeoutException.class)
                .hasMessageContaining("no controller leader was elected within 1000 ms")
                .hasMessageContaining(LOOPBACK + ":" + ports.get(1));
        assertThat(alone.isActive()).isFalse();
    }

    @Test
    @Timeout(60)
    void shouldKeepBrokersAndStartTheirSessionsAfreshWhenTheActiveControllerStops() throws Exception {
        List<RaftController> voters = startAll();
        RaftController oldLeader = awaitLeader(voters);
        registerBrokers(oldLeader);
        await(oldLeader.createTopics(List.of(new NewTopic("t", 3, (short) 3, Map.of())), false));
        MetadataImage committed = oldLeader.image();
        long sessionMs = oldLeader.config().brokerSessionTimeout().toMillis();
        time.advance(sessionMs - 1);

        oldLeader.close();
        List<RaftController> survivors = voters.stream().filter(c -> c != oldLeader).toList();
        RaftController newLeader = awaitLeader(survivors);
        assertThat(await(newLeader.runPeriodicChecks())).as("the first event of the term starts the sessions").isEmpty();

        assertThat(newLeader.activeControllerId()).contains(newLeader.config().nodeId());
        assertThat(newLeader.image().clusterId()).isEqualTo(ControllerTestSupport.CLUSTER_ID);
        assertThat(newLeader.image().brokers()).isEqualTo(committed.brokers());
        assertThat(newLeader.image().unfencedBrokerIds()).containsExactly(0, 1, 2);
        time.advance(2);
        assertThat(await(newLeader.runPeriodicChecks())).as("every session started afresh").isEmpty();

        time.advance(sessionMs - 3);
        for (int id = 1; id <= 2; id++) {
            await(newLeader.brokerHeartbeat(new Controller.BrokerHeartbeat(id, committed.brokers().get(id).epoch(),
                    newLeader.image().appliedIndex(), false, false)));
        }
        time.advance(2);
        await(newLeader.runPeriodicChecks());

        // the periodic tick may have fenced broker 0 first: assert the image, not who fenced it
        assertThat(newLeader.image().unfencedBrokerIds()).containsExactly(1, 2);

        MetadataImage.PartitionImage led = newLeader.image().topic("t").orElseThrow().partitions().get(0);
        assertThat(led.leader()).isIn(1, 2);
        assertThat(led.isr()).containsExactlyInAnyOrder(1, 2);
        RaftController otherSurvivor = survivors.stream().filter(c -> c != newLeader).findFirst().orElseThrow();
        assertThat(awaitImage(otherSurvivor, i -> !i.isUnfenced(0)).brokers().get(0).state())
                .isEqualTo(BrokerState.FENCED);
    }
}
