package dev.millrace.broker.share;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ShareGroupHeartbeatRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.delay.SystemTimer;
import dev.millrace.protocol.ext.ShareMember;

/**
 * The ShareMember extension at a share group's coordinator: a member's epoch and rack id (its selector), and a clear
 * error for everything else: unknown members and groups, groups coordinated elsewhere, malformed or empty requests.
 * Also the coordinator's own view for share-partition leaders on its node.
 */
@Timeout(10)
class ShareMemberHandlerTest {

    private static final Uuid QUEUE_ID = Uuid.randomUuid();
    private static final String RED = "millrace.selector:color = 'red'";

    private final ManualClock clock = new ManualClock();
    private final SystemTimer timer = new SystemTimer(1, 20, clock, Runnable::run);
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
    private final ShareGroupCoordinator coordinator = new ShareGroupCoordinator(ShareGroupConfig.defaults(), topics,
            timer, (group, member) -> { });
    private final ShareMemberHandler handler = new ShareMemberHandler(coordinator);

    @AfterEach
    void closeTimer() {
        timer.close();
    }

    private int join(String group, String member, String rack) {
        var response = coordinator.heartbeat(new ShareGroupHeartbeatRequestData().setGroupId(group)
                .setMemberId(member).setMemberEpoch(0).setRackId(rack).setSubscribedTopicNames(List.of("queue")),
                "client", "/127.0.0.1");
        assertThat(response.errorCode()).isZero();
        return response.memberEpoch();
    }

    private ShareMember.Response ask(String group, String member) {
        Struct body = new ShareMember.Request(group, member).toStruct();
        ByteBuffer buffer = ByteBuffer.allocate(body.sizeOf());
        body.writeTo(buffer);
        Struct answer = handler.handle(buffer.flip());
        ByteBuffer out = ByteBuffer.allocate(answer.sizeOf());
        answer.writeTo(out);
        return ShareMember.Response.read(out.flip());
    }

    @Test
    void shouldAnswerAMembersEpochAndRackIdWhichCarriesItsSelector() {
        int epoch = join("g", "a", RED);
        join("g", "b", null);

        assertThat(ask("g", "a")).isEqualTo(ShareMember.Response.member(epoch, RED));
        assertThat(ask("g", "b").rackId()).isNull();
        assertThat(ask("g", "b").errorCode()).isZero();
        assertThat(coordinator.localView("g", "a").orElseThrow().filter().selector().text())
                .isEqualTo("color = 'red'");
        assertThat(coordinator.localView("g", "b")).contains(MemberView.UNFILTERED);
    }

    @Test
    void shouldNameUnknownMembersAndGroups() {
        join("g", "a", RED);

        ShareMember.Response stranger = ask("g", "stranger");
        assertThat(Errors.forCode(stranger.errorCode())).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(stranger.errorMessage()).contains("stranger", "g");
        assertThat(stranger.memberEpoch()).isEqualTo(-1);
        ShareMember.Response noGroup = ask("nowhere", "a");
        assertThat(Errors.forCode(noGroup.errorCode())).isEqualTo(Errors.GROUP_ID_NOT_FOUND);
        assertThat(noGroup.errorMessage()).contains("nowhere");
        assertThat(coordinator.localView("g", "stranger")).contains(MemberView.NOT_MEMBER);
    }

    @Test
    void shouldAnswerNotCoordinatorForAGroupCoordinatedElsewhere() {
        int partition = Utils.abs("g".hashCode()) % 3;
        coordinator.followLeadership(3).onElected((partition + 1) % 3, 0);

        ShareMember.Response answer = ask("g", "a");

        assertThat(Errors.forCode(answer.errorCode())).isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(answer.errorMessage()).contains("__consumer_offsets-" + partition);
        assertThat(coordinator.localView("g", "a")).as("ask the coordinator").isEmpty();
    }

    @Test
    void shouldAnswerInvalidRequestForMalformedOrEmptyRequests() {
        ShareMember.Response truncated = handler.answer(ByteBuffer.wrap(new byte[] {0, 5, 'g'}));
        assertThat(Errors.forCode(truncated.errorCode())).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(truncated.errorMessage()).startsWith("malformed ShareMember request");

        ShareMember.Response noGroup = ask("", "a");
        assertThat(Errors.forCode(noGroup.errorCode())).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(noGroup.errorMessage()).contains("group id");
        ShareMember.Response noMember = ask("g", "");
        assertThat(Errors.forCode(noMember.errorCode())).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(noMember.errorMessage()).contains("member id");
    }
}
