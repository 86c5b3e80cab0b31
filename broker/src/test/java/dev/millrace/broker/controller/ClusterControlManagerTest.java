package dev.millrace.broker.controller;

import static dev.millrace.broker.controller.ImageFixtures.CLUSTER_ID;
import static dev.millrace.broker.controller.ImageFixtures.partition;
import static dev.millrace.broker.controller.ImageFixtures.partitions;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.DuplicateBrokerRegistrationException;
import org.apache.kafka.common.errors.InconsistentClusterIdException;
import org.apache.kafka.common.errors.StaleBrokerEpochException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.broker.controller.Controller.BrokerHeartbeat;
import dev.millrace.broker.controller.Controller.BrokerHeartbeatReply;
import dev.millrace.broker.controller.Controller.BrokerRegistration;
import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.controller.MetadataRecord.ClusterIdRecord;

/** Registration, heartbeats, session expiry and controlled shutdown, on a clock the test moves. */
class ClusterControlManagerTest {

    private static final long SESSION_MS = 9000;
    private static final Uuid TOPIC = new Uuid(1, 1);

    private final BrokerSessions sessions = new BrokerSessions(SESSION_MS);
    private long nowMs = 1_000_000;
    private MetadataImage image = ImageFixtures.replay(MetadataImage.EMPTY, List.of(new ClusterIdRecord(CLUSTER_ID)));

    private ClusterControlManager manager(boolean unclean) {
        return new ClusterControlManager(new ReplicationControlManager(unclean));
    }

    private final ClusterControlManager manager = manager(false);

    private <T> T commit(ControllerResult<T> result) {
        image = ImageFixtures.replay(image, result.records());
        if (result.onApplied() != null) {
            result.onApplied().accept(image.appliedIndex());
        }
        return result.response();
    }

    private long register(int id, Uuid incarnation) {
        return commit(manager.handleRegisterBroker(image, new BrokerRegistration(id, CLUSTER_ID, incarnation,
                "127.0.0.1", 9000 + id, null), sessions, nowMs));
    }

    private BrokerHeartbeatReply heartbeat(ClusterControlManager with, int id, boolean wantFence, boolean wantShutdown) {
        long epoch = image.brokers().get(id).epoch();
        return commit(with.handleBrokerHeartbeat(image, new BrokerHeartbeat(id, epoch, image.appliedIndex(),
                wantFence, wantShutdown), sessions, nowMs));
    }

    private BrokerHeartbeatReply heartbeat(int id) {
        return heartbeat(manager, id, false, false);
    }

    /** Brokers 1, 2, 3 registered and unfenced, and topic t with the given partitions. */
    private void threeBrokersWith(PartitionImage... partitionList) {
        for (int id = 1; id <= 3; id++) {
            register(id, new Uuid(5, id));
            heartbeat(id);
        }
        image = ImageFixtures.withTopic(image, "t", TOPIC, List.of(partitionList));
    }

    private PartitionImage p(int partition) {
        return partitions(image, "t").get(partition);
    }

    @Test
    @Timeout(10)
    void shouldGiveEveryRegistrationALargerEpochAndStartItFenced() {
        image = new MetadataImage(41, image.topics(), 0, CLUSTER_ID, image.brokers());

        long first = register(1, new Uuid(5, 1));
        long second = register(2, new Uuid(5, 2));
        nowMs += SESSION_MS + 1;
        long again = register(1, new Uuid(6, 1));

        assertThat(first).isEqualTo(42);
        assertThat(second).isGreaterThan(first);
        assertThat(again).isGreaterThan(second);
        assertThat(image.brokers().get(1).epoch()).isEqualTo(again);
        assertThat(image.brokers().get(1).incarnationId()).isEqualTo(new Uuid(6, 1));
        assertThat(image.brokers().get(1).state()).isEqualTo(BrokerState.FENCED);
        assertThat(image.unfencedBrokerIds()).isEmpty();
    }

    @Test
    @Timeout(10)
    void shouldReturnTheSameEpochWhenTheSameIncarnationRegistersAgain() {
        long epoch = register(1, new Uuid(5, 1));
        MetadataImage before = image;

        ControllerResult<Long> again = manager.handleRegisterBroker(image, new BrokerRegistration(1, CLUSTER_ID,
                new Uuid(5, 1), "127.0.0.1", 9001, null), sessions, nowMs);

        assertThat(again.response()).isEqualTo(epoch);
        assertThat(again.records()).isEmpty();
        assertThat(image).isSameAs(before);
    }

    @Test
    @Timeout(10)
    void shouldRefuseAnotherIncarnationWhileTheSessionIsAliveAndAcceptItAfterExpiry() {
        register(1, new Uuid(5, 1));
        nowMs += SESSION_MS;

        assertThatThrownBy(() -> register(1, new Uuid(6, 1)))
                .isInstanceOf(DuplicateBrokerRegistrationException.class)
                .hasMessageContaining("Broker 1").hasMessageContaining(new Uuid(5, 1).toString());

        nowMs += 1;
        register(1, new Uuid(6, 1));
        assertThat(image.brokers().get(1).incarnationId()).isEqualTo(new Uuid(6, 1));
    }

    @Test
    @Timeout(10)
    void shouldRefuseARegistrationWithAnotherClusterIdOrBeforeTheClusterHasOne() {
        assertThatThrownBy(() -> manager.handleRegisterBroker(image, new BrokerRegistration(1, "other",
                new Uuid(5, 1), "h", 1, null), sessions, nowMs))
                .isInstanceOf(InconsistentClusterIdException.class)
                .hasMessageContaining("other").hasMessageContaining(CLUSTER_ID);
        assertThatThrownBy(() -> manager.handleRegisterBroker(MetadataImage.EMPTY, new BrokerRegistration(1,
                CLUSTER_ID, new Uuid(5, 1), "h", 1, null), sessions, nowMs))
                .isInstanceOf(InconsistentClusterIdException.class)
                .hasMessageContaining("no id yet");
    }

    @Test
    @Timeout(10)
    void shouldUnfenceOnlyOnceTheBrokerHasAppliedItsRegistration() {
        long epoch = register(1, new Uuid(5, 1));
        long registeredAt = image.appliedIndex();

        BrokerHeartbeatReply behind = commit(manager.handleBrokerHeartbeat(image,
                new BrokerHeartbeat(1, epoch, registeredAt - 1, false, false), sessions, nowMs));
        BrokerHeartbeatReply caughtUp = commit(manager.handleBrokerHeartbeat(image,
                new BrokerHeartbeat(1, epoch, registeredAt, false, false), sessions, nowMs));

        assertThat(behind).isEqualTo(new BrokerHeartbeatReply(false, true, false));
        assertThat(caughtUp).isEqualTo(new BrokerHeartbeatReply(true, false, false));
        assertThat(image.isUnfenced(1)).isTrue();
        assertThat(image.unfencedBrokerIds()).containsExactly(1);
    }

    @Test
    @Timeout(10)
    void shouldRefuseAHeartbeatWithAStaleOrUnknownEpoch() {
        long epoch = register(1, new Uuid(5, 1));

        assertThatThrownBy(() -> manager.handleBrokerHeartbeat(image, new BrokerHeartbeat(1, epoch - 1, 0, false,
                false), sessions, nowMs))
                .isInstanceOf(StaleBrokerEpochException.class)
                .hasMessageContaining("epoch " + (epoch - 1)).hasMessageContaining("epoch " + epoch);
        assertThatThrownBy(() -> manager.handleBrokerHeartbeat(image, new BrokerHeartbeat(9, 1, 0, false, false),
                sessions, nowMs))
                .isInstanceOf(StaleBrokerEpochException.class)
                .hasMessageContaining("broker 9").hasMessageContaining("not registered");
    }

    @Test
    @Timeout(10)
    void shouldFenceAnExpiredBrokerAndElectTheNextIsrMemberWithNewEpochs() {
        threeBrokersWith(partition(0, List.of(1, 2, 3), List.of(1, 2, 3), 1),
                partition(1, List.of(2, 3, 1), List.of(2, 3, 1), 2),
                partition(2, List.of(3, 1, 2), List.of(3, 2), 3));
        nowMs += SESSION_MS - 1;
        heartbeat(2);
        heartbeat(3);
        nowMs += 2;

        List<Integer> fenced = commit(manager.handleSessionExpiry(image, sessions, nowMs));

        assertThat(fenced).containsExactly(1);
        assertThat(image.brokers().get(1).state()).isEqualTo(BrokerState.FENCED);
        assertThat(p(0)).isEqualTo(new PartitionImage(0, List.of(1, 2, 3), List.of(2, 3), 2, 1, 1));
        assertThat(p(1)).as("follower leaves the ISR, leader epoch unchanged")
                .isEqualTo(new PartitionImage(1, List.of(2, 3, 1), List.of(2, 3), 2, 0, 1));
        assertThat(p(2)).as("not in the ISR: unchanged").isEqualTo(partition(2, List.of(3, 1, 2), List.of(3, 2), 3));
        assertThat(commit(manager.handleSessionExpiry(image, sessions, nowMs))).as("nothing more to fence").isEmpty();
    }

    @Test
    @Timeout(10)
    void shouldLeaveTheLastIsrMemberLeaderlessAndReelectItWhenItReturns() {
        threeBrokersWith(partition(0, List.of(1, 2), List.of(1), 1),
                partition(1, List.of(2, 1), List.of(2), 2));
        nowMs += SESSION_MS + 1;

        assertThat(commit(manager.handleSessionExpiry(image, sessions, nowMs))).containsExactly(1, 2, 3);
        assertThat(p(0)).isEqualTo(new PartitionImage(0, List.of(1, 2), List.of(1), -1, 1, 1));
        assertThat(p(1)).isEqualTo(new PartitionImage(1, List.of(2, 1), List.of(2), -1, 1, 1));

        BrokerHeartbeatReply back = heartbeat(1);

        assertThat(back.fenced()).isFalse();
        assertThat(p(0)).as("returning last ISR member leads again")
                .isEqualTo(new PartitionImage(0, List.of(1, 2), List.of(1), 1, 2, 2));
        assertThat(p(1).leader()).as("broker 1 is not in partition 1's ISR").isEqualTo(-1);
    }

    @Test
    @Timeout(10)
    void shouldElectAnyLiveReplicaWhenUncleanElectionIsEnabled() {
        ClusterControlManager unclean = manager(true);
        threeBrokersWith(partition(0, List.of(1, 2), List.of(1), 1));
        nowMs += SESSION_MS - 1;
        heartbeat(unclean, 2, false, false);
        heartbeat(unclean, 3, false, false);
        nowMs += 2;

        commit(unclean.handleSessionExpiry(image, sessions, nowMs));

        assertThat(p(0)).isEqualTo(new PartitionImage(0, List.of(1, 2), List.of(2), 2, 1, 1));
    }

    @Test
    @Timeout(10)
    void shouldMoveLeadershipsAwayInControlledShutdownAndReplyShutdownWhenDone() {
        threeBrokersWith(partition(0, List.of(1, 2, 3), List.of(1, 2, 3), 1),
                partition(1, List.of(2, 1), List.of(2, 1), 2),
                partition(2, List.of(1, 3), List.of(1), 1));

        BrokerHeartbeatReply reply = heartbeat(manager, 1, false, true);

        assertThat(image.brokers().get(1).state()).isEqualTo(BrokerState.CONTROLLED_SHUTDOWN);
        assertThat(p(0)).isEqualTo(new PartitionImage(0, List.of(1, 2, 3), List.of(2, 3), 2, 1, 1));
        assertThat(p(1)).isEqualTo(new PartitionImage(1, List.of(2, 1), List.of(2), 2, 0, 1));
        assertThat(p(2)).as("no other ISR member: it keeps leading")
                .isEqualTo(partition(2, List.of(1, 3), List.of(1), 1));
        assertThat(reply).isEqualTo(new BrokerHeartbeatReply(true, true, true));
    }

    @Test
    @Timeout(10)
    void shouldFenceABrokerThatAsksToBeFenced() {
        threeBrokersWith(partition(0, List.of(1, 2), List.of(1, 2), 1));

        BrokerHeartbeatReply reply = heartbeat(manager, 1, true, false);

        assertThat(reply.fenced()).isTrue();
        assertThat(image.isUnfenced(1)).isFalse();
        assertThat(p(0)).isEqualTo(new PartitionImage(0, List.of(1, 2), List.of(2), 2, 1, 1));
    }

    @Test
    @Timeout(10)
    void shouldStartEverySessionAfreshInANewTerm() {
        register(1, new Uuid(5, 1));
        heartbeat(1);
        nowMs += SESSION_MS + 1;

        sessions.resetIfNewTerm(7, image, nowMs);

        assertThat(commit(manager.handleSessionExpiry(image, sessions, nowMs))).isEmpty();
        List<Integer> later = new ArrayList<>(commit(manager.handleSessionExpiry(image, sessions,
                nowMs + SESSION_MS + 1)));
        assertThat(later).containsExactly(1);
    }

    @Test
    @Timeout(10)
    void shouldLetANewIncarnationRegisterInANewTermBeforeTheOldOneWasHeardFrom() {
        register(1, new Uuid(5, 1));
        heartbeat(1);

        sessions.resetIfNewTerm(8, image, nowMs);
        long epoch = register(1, new Uuid(6, 1));

        assertThat(image.brokers().get(1).incarnationId()).isEqualTo(new Uuid(6, 1));
        assertThat(image.brokers().get(1).epoch()).isEqualTo(epoch);
        assertThatThrownBy(() -> register(1, new Uuid(7, 1))).as("the new incarnation was heard from")
                .isInstanceOf(DuplicateBrokerRegistrationException.class);
    }
}
