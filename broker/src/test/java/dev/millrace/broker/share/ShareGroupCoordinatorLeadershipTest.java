package dev.millrace.broker.share;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ShareGroupHeartbeatRequestData;
import org.apache.kafka.common.message.ShareGroupHeartbeatResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.delay.SystemTimer;

/**
 * The share-group coordinator following the leadership of {@code __consumer_offsets} (three partitions here): it
 * serves only the groups of partitions it is told it leads, starts them empty, forgets them at once on resignation
 * without releasing what members hold, and trusts the member ids of groups coordinated elsewhere.
 */
@Timeout(10)
class ShareGroupCoordinatorLeadershipTest {

    private static final int OFFSETS_PARTITIONS = 3;
    private static final Uuid QUEUE_ID = Uuid.randomUuid();
    private static final String GROUP = "g";

    private final ManualClock clock = new ManualClock();
    private final SystemTimer timer = new SystemTimer(1, 20, clock, Runnable::run);
    private final List<String> removed = new ArrayList<>();
    private final ShareTopics topics = new ShareTopics() {
        @Override
        public Optional<Uuid> idOf(String topic) {
            return topic.equals("queue") ? Optional.of(QUEUE_ID) : Optional.empty();
        }

        @Override
        public Optional<String> nameOf(Uuid topicId) {
            return topicId.equals(QUEUE_ID) ? Optional.of("queue") : Optional.empty();
        }

        @Override
        public int partitionCount(String topic) {
            return topic.equals("queue") ? 1 : 0;
        }

        @Override
        public Optional<ShareLog> log(TopicPartition tp) {
            return Optional.empty();
        }

        @Override
        public void append(TopicPartition tp, MemoryRecords records) {
        }
    };
    private final ShareGroupCoordinator coordinator = new ShareGroupCoordinator(
            ShareGroupConfig.defaults().withSessionTimeoutMs(1000), topics, timer,
            (group, member) -> removed.add(group + "/" + member));
    private final int partition = Utils.abs(GROUP.hashCode()) % OFFSETS_PARTITIONS;

    @AfterEach
    void closeTimer() {
        timer.close();
    }

    private ShareGroupHeartbeatResponseData heartbeat(String member, int epoch) {
        return coordinator.heartbeat(new ShareGroupHeartbeatRequestData().setGroupId(GROUP).setMemberId(member)
                .setMemberEpoch(epoch).setSubscribedTopicNames(epoch == 0 ? List.of("queue") : null), "client",
                "/127.0.0.1");
    }

    private void advanceMs(long ms) throws InterruptedException {
        clock.advanceMs(ms);
        while (timer.advanceClock(0)) {
            // run everything due
        }
    }

    @Test
    void shouldAnswerNotCoordinatorForAGroupWhosePartitionIsLedElsewhere() {
        coordinator.followLeadership(OFFSETS_PARTITIONS).onElected((partition + 1) % OFFSETS_PARTITIONS, 0);

        ShareGroupHeartbeatResponseData join = heartbeat("a", 0);

        assertThat(join.errorCode()).isEqualTo(Errors.NOT_COORDINATOR.code());
        assertThat(join.errorMessage()).contains("__consumer_offsets-" + partition);
        assertThat(heartbeat("a", -1).errorCode()).as("leaving too").isEqualTo(Errors.NOT_COORDINATOR.code());
        assertThat(coordinator.describe(List.of(GROUP)).get(0).errorCode()).isEqualTo(Errors.NOT_COORDINATOR.code());
        assertThat(coordinator.list(List.of())).isEmpty();
        assertThat(coordinator.exists(GROUP)).isFalse();
    }

    @Test
    void shouldServeTheGroupsOfAnElectedPartition() {
        coordinator.followLeadership(OFFSETS_PARTITIONS).onElected(partition, 0);

        ShareGroupHeartbeatResponseData join = heartbeat("a", 0);

        assertThat(join.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(heartbeat("a", join.memberEpoch()).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(coordinator.describe(List.of(GROUP)).get(0).members()).hasSize(1);
    }

    @Test
    void shouldForgetTheGroupsAtOnceOnResignationWithoutReleasingTheirMembers() throws Exception {
        coordinator.followLeadership(OFFSETS_PARTITIONS).onElected(partition, 0);
        int epoch = heartbeat("a", 0).memberEpoch();

        coordinator.onResigned(partition, 0);

        assertThat(heartbeat("a", epoch).errorCode()).isEqualTo(Errors.NOT_COORDINATOR.code());
        assertThat(coordinator.list(List.of())).isEmpty();
        advanceMs(5_000);
        assertThat(removed).as("no session expiry releases the member's records: it lives on elsewhere").isEmpty();
    }

    @Test
    void shouldStartEmptyWhenElectedAgainSoMembersRejoin() {
        coordinator.followLeadership(OFFSETS_PARTITIONS).onElected(partition, 0);
        int epoch = heartbeat("a", 0).memberEpoch();
        coordinator.onResigned(partition, 0);

        coordinator.onElected(partition, 2);

        assertThat(heartbeat("a", epoch).errorCode()).as("unknown here: the client rejoins with epoch 0")
                .isEqualTo(Errors.UNKNOWN_MEMBER_ID.code());
        ShareGroupHeartbeatResponseData rejoined = heartbeat("a", 0);
        assertThat(rejoined.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(rejoined.assignment().topicPartitions()).hasSize(1);
    }

    @Test
    void shouldTrustMembersOfGroupsCoordinatedElsewhere() {
        coordinator.followLeadership(OFFSETS_PARTITIONS).onElected(partition, 0);
        assertThat(coordinator.isMember(GROUP, "a")).as("not rejoined here yet since the election").isFalse();
        heartbeat("a", 0);
        assertThat(coordinator.isMember(GROUP, "a")).isTrue();
        assertThat(coordinator.isMember(GROUP, "stranger")).as("coordinated here: known members only").isFalse();

        coordinator.onResigned(partition, 0);

        assertThat(coordinator.isMember(GROUP, "stranger")).isTrue();
        assertThat(coordinator.filterOf(GROUP, "stranger")).isNull();
    }

    @Test
    void shouldServeEveryGroupUntilItFollowsLeadership() {
        assertThat(heartbeat("a", 0).errorCode()).isEqualTo(Errors.NONE.code());

        coordinator.followLeadership(OFFSETS_PARTITIONS);

        assertThat(heartbeat("a", 0).errorCode()).as("no partition led yet").isEqualTo(Errors.NOT_COORDINATOR.code());
    }
}
