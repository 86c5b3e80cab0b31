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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.delay.SystemTimer;

/** ShareGroupHeartbeat membership, epochs, assignment and session expiry on a manual clock. */
@Timeout(10)
class ShareGroupCoordinatorTest {

    private static final Uuid QUEUE_ID = Uuid.randomUuid();

    private final ManualClock clock = new ManualClock();
    private final SystemTimer timer = new SystemTimer(1, 20, clock, Runnable::run);
    private final List<String> removed = new ArrayList<>();
    private int queuePartitions = 2;
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
            return topic.equals("queue") ? queuePartitions : 0;
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

    @AfterEach
    void closeTimer() {
        timer.close();
    }

    private void advanceMs(long ms) throws InterruptedException {
        clock.advanceMs(ms);
        while (timer.advanceClock(0)) {
            // run everything due
        }
    }

    private ShareGroupHeartbeatResponseData heartbeat(String member, int epoch, List<String> topicNames) {
        return coordinator.heartbeat(new ShareGroupHeartbeatRequestData().setGroupId("g").setMemberId(member)
                .setMemberEpoch(epoch).setSubscribedTopicNames(topicNames), "client", "/127.0.0.1");
    }

    @Test
    void shouldAssignEveryPartitionToEveryMemberEvenWhenMembersOutnumberPartitions() {
        queuePartitions = 1;
        ShareGroupHeartbeatResponseData a = heartbeat("a", 0, List.of("queue"));
        ShareGroupHeartbeatResponseData b = heartbeat("b", 0, List.of("queue"));

        for (ShareGroupHeartbeatResponseData response : List.of(a, b)) {
            assertThat(response.errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(response.assignment().topicPartitions()).hasSize(1);
            assertThat(response.assignment().topicPartitions().get(0).topicId()).isEqualTo(QUEUE_ID);
            assertThat(response.assignment().topicPartitions().get(0).partitions()).containsExactly(0);
        }
        assertThat(b.memberEpoch()).isGreaterThan(a.memberEpoch());
    }

    @Test
    void shouldSendTheAssignmentOnlyWhenItChangesAndBumpTheEpochThen() {
        ShareGroupHeartbeatResponseData joined = heartbeat("a", 0, List.of("queue"));
        ShareGroupHeartbeatResponseData same = heartbeat("a", joined.memberEpoch(), null);
        assertThat(same.assignment()).isNull();
        assertThat(same.memberEpoch()).isEqualTo(joined.memberEpoch());

        queuePartitions = 3;
        ShareGroupHeartbeatResponseData grown = heartbeat("a", joined.memberEpoch(), null);

        assertThat(grown.memberEpoch()).isGreaterThan(joined.memberEpoch());
        assertThat(grown.assignment().topicPartitions().get(0).partitions()).containsExactly(0, 1, 2);
    }

    @Test
    void shouldFenceAStaleEpochAndRejectAnUnknownMember() {
        ShareGroupHeartbeatResponseData joined = heartbeat("a", 0, List.of("queue"));

        assertThat(heartbeat("a", joined.memberEpoch() + 5, null).errorCode())
                .isEqualTo(Errors.FENCED_MEMBER_EPOCH.code());
        assertThat(heartbeat("nobody", 3, null).errorCode()).isEqualTo(Errors.UNKNOWN_MEMBER_ID.code());
        assertThat(heartbeat("b", 0, null).errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
    }

    @Test
    void shouldRemoveAMemberWhoseSessionTimesOut() throws Exception {
        ShareGroupHeartbeatResponseData a = heartbeat("a", 0, List.of("queue"));
        ShareGroupHeartbeatResponseData b = heartbeat("b", 0, List.of("queue"));
        advanceMs(600);
        heartbeat("a", a.memberEpoch(), null);
        advanceMs(600);

        assertThat(removed).containsExactly("g/b");
        assertThat(heartbeat("b", b.memberEpoch(), null).errorCode()).isEqualTo(Errors.UNKNOWN_MEMBER_ID.code());
        assertThat(coordinator.describe(List.of("g")).get(0).members()).extracting(m -> m.memberId())
                .containsExactly("a");
    }

    @Test
    void shouldRemoveALeavingMemberAndListTheGroupAsEmpty() {
        heartbeat("a", 0, List.of("queue"));

        ShareGroupHeartbeatResponseData left = heartbeat("a", -1, null);

        assertThat(left.memberEpoch()).isEqualTo(-1);
        assertThat(removed).containsExactly("g/a");
        assertThat(coordinator.list(List.of())).extracting(g -> g.groupId() + ":" + g.groupState() + ":"
                + g.groupType()).containsExactly("g:Empty:share");
        assertThat(coordinator.list(List.of("Stable"))).isEmpty();
        assertThat(coordinator.describe(List.of("nope")).get(0).errorCode())
                .isEqualTo(Errors.GROUP_ID_NOT_FOUND.code());
    }

    @Test
    void shouldKeepTheSelectorCarriedByTheRackIdOnTheMember() {
        ShareGroupHeartbeatResponseData joined = coordinator.heartbeat(new ShareGroupHeartbeatRequestData()
                .setGroupId("g").setMemberId("a").setMemberEpoch(0).setSubscribedTopicNames(List.of("queue"))
                .setRackId("millrace.selector:color = 'red'"), "client", "/127.0.0.1");

        assertThat(joined.errorCode()).isZero();
        assertThat(coordinator.filterOf("g", "a").selector().text()).isEqualTo("color = 'red'");
        assertThat(coordinator.filterOf("g", "a").archiveUnmatched()).isFalse();
        heartbeat("b", 0, List.of("queue"));
        assertThat(coordinator.filterOf("g", "b")).as("no rack id, no selector").isNull();
        assertThat(coordinator.filterOf("g", "nobody")).isNull();
    }

    @Test
    void shouldRefuseAnInvalidSelectorNamingPositionAndTokenWithoutCreatingTheMember() {
        ShareGroupHeartbeatResponseData refused = coordinator.heartbeat(new ShareGroupHeartbeatRequestData()
                .setGroupId("g").setMemberId("a").setMemberEpoch(0).setSubscribedTopicNames(List.of("queue"))
                .setRackId("millrace.selector:color = = 'red'"), "client", "/127.0.0.1");

        assertThat(Errors.forCode(refused.errorCode())).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(refused.errorMessage()).contains("position 8").contains("token =");
        assertThat(coordinator.isMember("g", "a")).isFalse();
        assertThat(heartbeat("a", 0, List.of("queue")).errorCode()).as("the coordinator keeps serving").isZero();
    }
}
