package dev.millrace.broker.share;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ShareFetchRequestData;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.apache.kafka.common.requests.ShareFetchResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.delay.SystemTimer;
import dev.millrace.protocol.ext.ShareMember;

/**
 * ShareFetch on a share-partition leader that does not coordinate the group: the member's first fetch acquires
 * nothing while its coordinator is asked, waits, and is answered as soon as the coordinator's answer is in (not at
 * its MaxWaitMs) with only the records the member's selector matches; a member the coordinator does not know gets
 * UNKNOWN_MEMBER_ID; a fetch that may not wait comes back empty, leaving every record to others.
 */
@Timeout(10)
class ShareFetchRemoteMemberTest {

    private static final Uuid QUEUE_ID = Uuid.randomUuid();
    private static final TopicPartition TP = new TopicPartition("queue", 0);
    private static final long NEVER_MS = 3_600_000;

    private final ManualClock clock = new ManualClock();
    private final SystemTimer timer = new SystemTimer(1, 20, clock, Runnable::run);
    private final InMemoryShareLog log = new InMemoryShareLog();
    private final ShareTopics topics = new ShareTopics() {
        @Override
        public Optional<Uuid> idOf(String topic) {
            return topic.equals(TP.topic()) ? Optional.of(QUEUE_ID) : Optional.empty();
        }

        @Override
        public Optional<String> nameOf(Uuid topicId) {
            return topicId.equals(QUEUE_ID) ? Optional.of(TP.topic()) : Optional.empty();
        }

        @Override
        public int partitionCount(String topic) {
            return topic.equals(TP.topic()) ? 1 : 0;
        }

        @Override
        public Optional<ShareLog> log(TopicPartition tp) {
            return tp.equals(TP) ? Optional.of(log) : Optional.empty();
        }

        @Override
        public void append(TopicPartition tp, MemoryRecords records) {
            throw new AssertionError("no appends here");
        }
    };
    private final ShareGroupConfig config = ShareGroupConfig.defaults().withAutoOffsetResetEarliest(true);
    private final List<CompletableFuture<ShareMember.Response>> asked = new ArrayList<>();
    private final ShareFetchHandler handler;

    ShareFetchRemoteMemberTest() {
        ShareGroupCoordinator coordinator = new ShareGroupCoordinator(config, topics, timer, (g, m) -> { });
        coordinator.followLeadership(3); // no partition of __consumer_offsets led here: every group is remote
        MemberViews members = new MemberViews(coordinator);
        members.lookUpRemoteMembers(new RemoteMemberCache((g, m) -> {
            CompletableFuture<ShareMember.Response> answer = new CompletableFuture<>();
            asked.add(answer);
            return answer;
        }, clock, Runnable::run, NEVER_MS, 100, 100));
        SharePartitionManager partitions = new SharePartitionManager(config, topics, timer, clock,
                QuietListener.INSTANCE, ShareStateStore.NONE);
        handler = new ShareFetchHandler(config, topics, partitions, new ShareSessionCache(),
                new ShareFetchPurgatory(timer), members, new StateSaves(ShareStateStore.NONE));
        log.appendColors("red", "blue", "red");
    }

    @AfterEach
    void closeTimer() {
        timer.close();
    }

    private CompletableFuture<ShareFetchResponse> fetch(String memberId, int maxWaitMs) {
        ShareFetchRequestData data = new ShareFetchRequestData().setGroupId("g").setMemberId(memberId)
                .setShareSessionEpoch(0).setMaxWaitMs(maxWaitMs).setMinBytes(1).setMaxBytes(1 << 20)
                .setMaxRecords(10);
        ShareFetchRequestData.FetchTopic topic = new ShareFetchRequestData.FetchTopic().setTopicId(QUEUE_ID);
        topic.partitions().add(new ShareFetchRequestData.FetchPartition().setPartitionIndex(0));
        data.topics().add(topic);
        return handler.handle(new ShareFetchRequest.Builder(data).build((short) 1));
    }

    private static List<Long> acquiredOffsets(ShareFetchResponse response) {
        List<Long> offsets = new ArrayList<>();
        for (ShareFetchResponseData.ShareFetchableTopicResponse t : response.data().responses()) {
            for (ShareFetchResponseData.PartitionData p : t.partitions()) {
                p.acquiredRecords().forEach(r -> {
                    for (long o = r.firstOffset(); o <= r.lastOffset(); o++) {
                        offsets.add(o);
                    }
                });
            }
        }
        return offsets;
    }

    @Test
    void shouldWaitForTheCoordinatorsAnswerThenAcquireOnlyWhatTheSelectorMatches() {
        CompletableFuture<ShareFetchResponse> red = fetch("red", (int) NEVER_MS);

        assertThat(red).as("nothing acquired before the coordinator answered").isNotDone();
        assertThat(asked).hasSize(1);
        asked.get(0).complete(ShareMember.Response.member(1, "millrace.selector:color = 'red'"));

        assertThat(red).as("answered when the lookup ended, not at MaxWaitMs").isDone();
        assertThat(red.join().data().errorCode()).isZero();
        assertThat(acquiredOffsets(red.join())).containsExactly(0L, 2L);

        CompletableFuture<ShareFetchResponse> any = fetch("any", 0);
        assertThat(acquiredOffsets(any.join())).as("not known yet").isEmpty();
        asked.get(1).complete(ShareMember.Response.member(1, null));
        assertThat(acquiredOffsets(fetch("any", 0).join())).as("the blue record stayed available")
                .containsExactly(1L);
    }

    @Test
    void shouldAnswerUnknownMemberWhenTheCoordinatorDoesNotKnowIt() {
        CompletableFuture<ShareFetchResponse> stranger = fetch("stranger", (int) NEVER_MS);
        asked.get(0).complete(ShareMember.Response.error(Errors.UNKNOWN_MEMBER_ID.code(), "not a member"));

        assertThat(stranger).isDone();
        assertThat(Errors.forCode(stranger.join().data().errorCode())).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    }

    @Test
    void shouldComeBackEmptyWhileUnknownAndLeaveTheRecordsToOthers() {
        ShareFetchResponse pending = fetch("red", 0).join();
        assertThat(pending.data().errorCode()).isZero();
        assertThat(acquiredOffsets(pending)).as("never unfiltered").isEmpty();

        fetch("any", 0);
        asked.get(1).complete(ShareMember.Response.member(1, null));
        assertThat(acquiredOffsets(fetch("any", 0).join())).containsExactly(0L, 1L, 2L);
    }
}
