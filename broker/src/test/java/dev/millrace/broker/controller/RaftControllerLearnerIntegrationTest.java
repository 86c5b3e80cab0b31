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

import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.controller.Controller.NewTopic;

/**
 * Three voters and one learner (node 3, not in the voter list) in one process on 127.0.0.1: the learner
 * applies the same metadata log, names the active controller, and never becomes it.
 */
@Tag("integration")
class RaftControllerLearnerIntegrationTest {

    private static final int VOTERS = 3;
    private static final int LEARNER = 3;

    @TempDir
    Path tempDir;

    private final List<Integer> ports = new ArrayList<>();
    private final List<RaftController> controllers = new ArrayList<>();
    private final ExecutorService starter = Executors.newFixedThreadPool(VOTERS + 1);

    @BeforeEach
    void pickPorts() throws Exception {
        for (int i = 0; i <= VOTERS; i++) {
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

    /** Starts the three voters and the learner together; each start() returns once it has caught up. */
    private List<RaftController> startAll() throws Exception {
        List<Future<RaftController>> starting = new ArrayList<>();
        for (int i = 0; i <= VOTERS; i++) {
            RaftController controller = new RaftController(config(i));
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

    private static Map<String, ApiError> create(Controller controller, String topic, short replicationFactor)
            throws Exception {
        return await(controller.createTopics(List.of(new NewTopic(topic, 2, replicationFactor, Map.of())), false));
    }

    @Test
    @Timeout(90)
    void shouldFollowEveryChangeAndTheNewLeaderWithoutEverLeading() throws Exception {
        List<RaftController> all = startAll();
        RaftController learner = all.get(LEARNER);
        List<RaftController> voters = all.subList(0, VOTERS);
        assertThat(learner.config().isLearner()).isTrue();
        RaftController oldLeader = awaitLeader(voters);
        for (int id = 0; id <= LEARNER; id++) {
            ControllerTestSupport.registerUnfenced(oldLeader, id);
        }
        assertThat(create(oldLeader, "before", (short) 3)).containsExactly(Map.entry("before", ApiError.NONE));

        awaitImage(learner, image -> image.topic("before").isPresent());
        assertThat(learner.image()).isEqualTo(oldLeader.image());
        assertThat(learner.image().unfencedBrokerIds()).containsExactly(0, 1, 2, 3);
        assertThat(learner.activeControllerId()).contains(oldLeader.config().nodeId());
        assertThat(learner.isActive()).isFalse();
        Map<String, ApiError> refused = create(learner, "on-learner", (short) 1);
        assertThat(refused.get("on-learner").error()).isEqualTo(Errors.NOT_CONTROLLER);
        assertThat(refused.get("on-learner").message()).contains(oldLeader.config().address());

        oldLeader.close();
        List<RaftController> survivors = voters.stream().filter(c -> c != oldLeader).toList();
        RaftController newLeader = awaitLeader(survivors);
        assertThat(create(newLeader, "after", (short) 3)).containsExactly(Map.entry("after", ApiError.NONE));

        awaitImage(learner, image -> image.topic("after").isPresent());
        assertThat(learner.image()).isEqualTo(newLeader.image());
        assertThat(learner.isActive()).as("a learner never becomes the active controller").isFalse();
        assertThat(learner.activeControllerId()).contains(newLeader.config().nodeId());
        assertThat(learner.leaderAddress()).contains(newLeader.config().address());
    }

    @Test
    @Timeout(90)
    void shouldCatchUpWhenTheLearnerRestarts() throws Exception {
        List<RaftController> all = startAll();
        RaftController learner = all.get(LEARNER);
        RaftController leader = awaitLeader(all.subList(0, VOTERS));
        for (int id = 0; id < VOTERS; id++) {
            ControllerTestSupport.registerUnfenced(leader, id);
        }
        create(leader, "first", (short) 3);
        awaitImage(learner, image -> image.topic("first").isPresent());

        learner.close();
        assertThat(create(leader, "while-down", (short) 2)).containsExactly(Map.entry("while-down", ApiError.NONE));
        leader.snapshot().get(15, TimeUnit.SECONDS);
        assertThat(create(leader, "after-snapshot", (short) 1))
                .containsExactly(Map.entry("after-snapshot", ApiError.NONE));

        RaftController restarted = new RaftController(learner.config());
        controllers.add(restarted);
        restarted.start();
        MetadataImage caughtUp = awaitImage(restarted, image -> image.topic("after-snapshot").isPresent());
        assertThat(caughtUp.topic("while-down")).isPresent();
        assertThat(caughtUp.topic("first").orElseThrow().topicId())
                .isEqualTo(leader.image().topic("first").orElseThrow().topicId());
        assertThat(restarted.activeControllerId()).contains(leader.config().nodeId());
        assertThat(restarted.isActive()).isFalse();
    }

    @Test
    @Timeout(30)
    void shouldFailStartNamingTheVotersWhenNoVoterAnswers() throws Exception {
        RaftController alone = new RaftController(config(LEARNER).withStartTimeout(Duration.ofSeconds(2)));
        controllers.add(alone);

        assertThatThrownBy(alone::start)
                .isInstanceOf(TimeoutException.class)
                .hasMessageContaining("node 3 is not in " + ControllerConfig.VOTERS_SETTING)
                .hasMessageContaining(LOOPBACK + ":" + ports.get(0))
                .hasMessageContaining("no leader among those voters added it within 2000 ms");
        assertThat(alone.isActive()).isFalse();
    }

    @Test
    @Timeout(10)
    void shouldRefuseALearnerAddressThatIsAVotersAddress() {
        Map<Integer, String> voters = Map.of(0, LOOPBACK + ":" + ports.get(0));
        assertThatThrownBy(() -> ControllerConfig.singleVoter(LEARNER, tempDir, LOOPBACK, ports.get(1))
                .withVoters(Map.of(0, LOOPBACK + ":" + ports.get(0), 1, LOOPBACK + ":" + ports.get(1))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("this node 3 is not a voter, so its learner address " + LOOPBACK + ":"
                        + ports.get(1) + " must differ from every voter's address in "
                        + ControllerConfig.VOTERS_SETTING);
        assertThat(ControllerConfig.singleVoter(LEARNER, tempDir, LOOPBACK, ports.get(1)).withVoters(voters)
                .isLearner()).isTrue();
    }
}
