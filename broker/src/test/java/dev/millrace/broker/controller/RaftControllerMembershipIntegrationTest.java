package dev.millrace.broker.controller;

import static dev.millrace.broker.controller.ControllerTestSupport.CLUSTER_ID;
import static dev.millrace.broker.controller.ControllerTestSupport.LOOPBACK;
import static dev.millrace.broker.controller.ControllerTestSupport.await;
import static dev.millrace.broker.controller.ControllerTestSupport.awaitImage;
import static dev.millrace.broker.controller.ControllerTestSupport.registerUnfenced;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.InconsistentClusterIdException;
import org.apache.kafka.common.errors.StaleBrokerEpochException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.log.ManualTime;
import dev.millrace.broker.controller.Controller.AlterPartitionResult;
import dev.millrace.broker.controller.Controller.BrokerHeartbeat;
import dev.millrace.broker.controller.Controller.BrokerRegistration;
import dev.millrace.broker.controller.Controller.IsrChange;
import dev.millrace.broker.controller.Controller.NewTopic;
import dev.millrace.broker.controller.MetadataImage.PartitionImage;

/** Membership and elections through one embedded voter whose broker sessions run on a manual clock. */
@Tag("integration")
class RaftControllerMembershipIntegrationTest {

    private static final long SESSION_MS = ControllerConfig.DEFAULT_BROKER_SESSION_TIMEOUT.toMillis();

    @TempDir
    Path tempDir;

    private final ManualTime time = new ManualTime(1_000_000);
    private final List<RaftController> started = new ArrayList<>();
    private int port;

    @BeforeEach
    void pickPort() throws Exception {
        port = ControllerTestSupport.freePort();
    }

    @AfterEach
    void closeControllers() {
        started.forEach(RaftController::close);
    }

    private ControllerConfig config() {
        return ControllerConfig.singleVoter(1, tempDir.resolve("metadata"), LOOPBACK, port)
                .withInitialClusterId(CLUSTER_ID);
    }

    private RaftController start(ControllerConfig config) throws Exception {
        RaftController controller = new RaftController(config, time);
        started.add(controller);
        controller.start();
        return controller;
    }

    private static PartitionImage partition(RaftController controller, int partition) {
        return controller.image().topic("t").orElseThrow().partitions().get(partition);
    }

    @Test
    @Timeout(30)
    void shouldCommitTheInitialClusterIdAndNameItselfAsActiveController() throws Exception {
        RaftController controller = start(config());

        assertThat(awaitImage(controller, image -> image.clusterId() != null).clusterId()).isEqualTo(CLUSTER_ID);
        assertThat(controller.activeControllerId()).contains(1);
    }

    @Test
    @Timeout(30)
    void shouldFenceAnExpiredBrokerMoveItsLeadershipAndBringItBackThroughIsrAndPreferredElection()
            throws Exception {
        RaftController controller = start(config());
        long epoch1 = registerUnfenced(controller, 1);
        long epoch2 = registerUnfenced(controller, 2);
        assertThat(await(controller.createTopics(List.of(new NewTopic("t", 2, (short) 2, Map.of())), false)))
                .containsExactly(Map.entry("t", ApiError.NONE));
        assertThat(partition(controller, 0).leader()).isEqualTo(1);

        time.advance(SESSION_MS - 1);
        await(controller.brokerHeartbeat(new BrokerHeartbeat(2, epoch2, controller.image().appliedIndex(), false,
                false)));
        time.advance(2);
        await(controller.runPeriodicChecks());

        // the periodic tick may have fenced broker 1 first: assert the image, not who fenced it
        assertThat(controller.image().unfencedBrokerIds()).containsExactly(2);
        PartitionImage moved = partition(controller, 0);
        assertThat(moved).isEqualTo(new PartitionImage(0, List.of(1, 2), List.of(2), 2, 1, 1));

        assertThat(await(controller.brokerHeartbeat(new BrokerHeartbeat(1, epoch1,
                controller.image().appliedIndex(), false, false))).fenced()).isFalse();
        Map<?, AlterPartitionResult> expanded = await(controller.alterPartition(2, epoch2,
                List.of(new IsrChange(topicId(controller), 0, 1, List.of(2, 1), 1))));
        assertThat(expanded.values()).extracting(AlterPartitionResult::error).containsExactly(Errors.NONE);
        Map<TopicPartition, ApiError> elected = await(controller.electLeaders(true,
                Set.of(new TopicPartition("t", 0))));

        assertThat(elected).containsExactly(Map.entry(new TopicPartition("t", 0), ApiError.NONE));
        assertThat(partition(controller, 0)).isEqualTo(new PartitionImage(0, List.of(1, 2), List.of(2, 1), 1, 2, 3));
    }

    @Test
    @Timeout(30)
    void shouldFenceABrokerWhoseConnectionClosedWithinTheGraceUnlessItHeartbeats() throws Exception {
        long graceMs = ControllerConfig.DEFAULT_BROKER_UNREACHABLE_GRACE.toMillis();
        RaftController controller = start(config());
        long epoch1 = registerUnfenced(controller, 1);
        long epoch2 = registerUnfenced(controller, 2);
        registerUnfenced(controller, 3);

        controller.brokerUnreachable(2);
        controller.brokerUnreachable(3);
        await(controller.runPeriodicChecks()); // runs after the hints on the event thread
        time.advance(graceMs / 2);
        // broker 2 was alive: its connection dropped and it reconnected and heartbeat
        await(controller.brokerHeartbeat(new BrokerHeartbeat(2, epoch2, controller.image().appliedIndex(), false,
                false)));
        await(controller.brokerHeartbeat(new BrokerHeartbeat(1, epoch1, controller.image().appliedIndex(), false,
                false)));
        time.advance(graceMs / 2 + 1);
        await(controller.runPeriodicChecks());

        // broker 3, silent since its connection closed, is fenced a grace later, long before its session timeout
        assertThat(graceMs).isLessThan(SESSION_MS);
        assertThat(controller.image().unfencedBrokerIds()).containsExactlyInAnyOrder(1, 2);
    }

    private static Uuid topicId(RaftController controller) {
        return controller.image().topic("t").orElseThrow().topicId();
    }

    @Test
    @Timeout(30)
    void shouldFailRequestsWithTheKafkaExceptionNamingWhatWasWrong() throws Exception {
        RaftController controller = start(config());
        long epoch = registerUnfenced(controller, 1);

        assertThatThrownBy(() -> await(controller.brokerHeartbeat(new BrokerHeartbeat(1, epoch + 1, 0, false, false))))
                .isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(StaleBrokerEpochException.class)
                .hasMessageContaining("epoch " + (epoch + 1));
        assertThatThrownBy(() -> await(controller.registerBroker(new BrokerRegistration(2, "someone-else",
                Uuid.randomUuid(), LOOPBACK, 9092, null))))
                .isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(InconsistentClusterIdException.class)
                .hasMessageContaining("someone-else");
        assertThatThrownBy(() -> await(controller.alterPartition(1, epoch - 1, List.of())))
                .cause().isInstanceOf(StaleBrokerEpochException.class);
    }

    @Test
    @Timeout(30)
    void shouldRegisterAgainIdempotentlyAndKeepTheBrokerUnfencedAcrossARestart() throws Exception {
        RaftController first = start(config());
        long epoch = registerUnfenced(first, 1);
        MetadataImage before = first.image();
        first.close();

        RaftController second = start(config());

        assertThat(registerUnfenced(second, 1)).isEqualTo(epoch);
        assertThat(second.image()).isEqualTo(before);
        assertThat(await(second.runPeriodicChecks())).as("sessions start afresh on the new leader").isEmpty();
    }

    @Test
    @Timeout(30)
    void shouldFailAtStartNamingTheSettingWhenTheVotersDifferFromTheQuorumsConfiguration() throws Exception {
        RaftController first = start(config());
        first.close();
        int otherPort = ControllerTestSupport.freePort();
        Map<Integer, String> voters = new LinkedHashMap<>();
        voters.put(1, LOOPBACK + ":" + port);
        voters.put(2, LOOPBACK + ":" + otherPort);
        RaftController changed = new RaftController(config().withVoters(voters), time);
        started.add(changed);

        assertThatThrownBy(changed::start)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("controller.quorum.voters")
                .hasMessageContaining("1@" + LOOPBACK + ":" + port + ",2@" + LOOPBACK + ":" + otherPort)
                .hasMessageContaining("has voters [" + LOOPBACK + ":" + port + "]");
    }

    @Test
    @Timeout(30)
    void shouldReassignThroughTheControllerAndRefuseAnUnregisteredBroker() throws Exception {
        RaftController controller = start(config());
        long epoch1 = registerUnfenced(controller, 1);
        registerUnfenced(controller, 2);
        await(controller.createTopics(List.of(new NewTopic("t", 1, (short) 1, Map.of())), false));
        TopicPartition t0 = new TopicPartition("t", 0);

        Map<TopicPartition, ApiError> refused = await(controller.alterPartitionReassignments(
                Map.of(t0, Optional.of(List.of(1, 7)))));
        Map<TopicPartition, ApiError> started = await(controller.alterPartitionReassignments(
                Map.of(t0, Optional.of(List.of(2)))));

        assertThat(refused.get(t0).error()).isEqualTo(Errors.INVALID_REPLICA_ASSIGNMENT);
        assertThat(refused.get(t0).message()).contains("Broker 7");
        assertThat(started).containsExactly(Map.entry(t0, ApiError.NONE));
        assertThat(await(controller.listPartitionReassignments())).containsExactly(Map.entry(t0,
                new Controller.OngoingReassignment(List.of(2, 1), List.of(2), List.of(1))));

        PartitionImage moving = partition(controller, 0);
        await(controller.alterPartition(1, epoch1, List.of(new IsrChange(topicId(controller), 0,
                moving.leaderEpoch(), List.of(1, 2), moving.partitionEpoch()))));

        assertThat(partition(controller, 0)).isEqualTo(new PartitionImage(0, List.of(2), List.of(2), 2, 1, 3));
        assertThat(await(controller.listPartitionReassignments())).isEmpty();
    }
}
