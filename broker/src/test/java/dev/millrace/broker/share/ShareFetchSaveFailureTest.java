package dev.millrace.broker.share;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.CoordinatorNotAvailableException;
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
 * A ShareFetch whose state save fails for one of its share-partitions (the share-state coordinator unreachable, or a
 * newer leader took the share-partition over) answers that partition with the error, its records withheld and its
 * acknowledgements reported as failed, and every other partition as usual. Before, the failure escaped the handler
 * and the whole response became a top-level error: the records acquired (and saved) on the healthy partitions were
 * handed to no one and counted as a delivery, and a member with a fenced share-partition in its session got nothing
 * from that broker on any later fetch (the failover chaos suite's dead-letter consumer stalled on
 * FENCED_LEADER_EPOCH).
 */
@Timeout(10)
class ShareFetchSaveFailureTest {

    private static final Uuid QUEUE_ID = Uuid.randomUuid();
    private static final TopicPartition TP0 = new TopicPartition("queue", 0);
    private static final TopicPartition TP1 = new TopicPartition("queue", 1);
    private static final long NEVER_MS = 3_600_000;

    private final ManualClock clock = new ManualClock();
    private final SystemTimer timer = new SystemTimer(1, 20, clock, Runnable::run);
    private final Map<TopicPartition, InMemoryShareLog> logs = Map.of(TP0, new InMemoryShareLog(), TP1,
            new InMemoryShareLog());
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
            return topic.equals("queue") ? 2 : 0;
        }

        @Override
        public Optional<ShareLog> log(TopicPartition tp) {
            return Optional.ofNullable(logs.get(tp));
        }

        @Override
        public void append(TopicPartition tp, MemoryRecords records) {
            throw new AssertionError("no appends here");
        }
    };
    /** Saves of share-partitions of this topic-partition fail while set. */
    private volatile TopicPartition failing;
    private final List<TopicPartition> saved = new ArrayList<>();
    private final ShareStateStore store = new ShareStateStore() {
        @Override
        public Optional<SharePartitionSnapshot> load(SharePartitionKey key) {
            return Optional.empty();
        }

        @Override
        public void save(SharePartition partition) {
            if (partition.key().topicPartition().equals(failing)) {
                partition.saveFailed();
                throw new CoordinatorNotAvailableException("share-state coordinator unreachable (test)");
            }
            synchronized (saved) {
                saved.add(partition.key().topicPartition());
            }
        }
    };
    private final ShareGroupConfig config = ShareGroupConfig.defaults().withAutoOffsetResetEarliest(true);
    private final StateSaves saves = new StateSaves(store);
    private final ShareFetchPurgatory purgatory = new ShareFetchPurgatory(timer);
    private final ShareFetchHandler handler;
    private int epoch;

    ShareFetchSaveFailureTest() {
        ShareGroupCoordinator coordinator = new ShareGroupCoordinator(config, topics, timer, (g, m) -> { });
        coordinator.followLeadership(3); // no partition of __consumer_offsets led here: every group is remote
        MemberViews members = new MemberViews(coordinator);
        members.lookUpRemoteMembers(new RemoteMemberCache((g, m) -> CompletableFuture.completedFuture(
                ShareMember.Response.member(1, null)), clock, Runnable::run, NEVER_MS, 100, 100));
        SharePartitionListener listener = new SharePartitionListener() {
            @Override
            public void onRecordsAvailable(SharePartitionKey key) {
            }

            @Override
            public void onArchived(DeadLetter deadLetter) {
            }

            @Override
            public void onStateChanged(SharePartition partition) {
                saves.changed(partition); // as ShareBroker wires it
            }
        };
        SharePartitionManager partitions = new SharePartitionManager(config, topics, timer, clock, listener, store);
        handler = new ShareFetchHandler(config, topics, partitions, new ShareSessionCache(), purgatory, members,
                saves);
        fetch(0, Map.of()).join(); // opens the session; the member is looked up (and known from now on)
    }

    @AfterEach
    void closeTimer() {
        timer.close();
    }

    /** A fetch of both partitions with {@code accept}: per partition, offsets to accept. */
    private CompletableFuture<ShareFetchResponse> fetch(int maxWaitMs, Map<Integer, List<Long>> accept) {
        ShareFetchRequestData data = new ShareFetchRequestData().setGroupId("g").setMemberId("m")
                .setShareSessionEpoch(epoch++).setMaxWaitMs(maxWaitMs).setMinBytes(1).setMaxBytes(1 << 20)
                .setMaxRecords(100);
        ShareFetchRequestData.FetchTopic topic = new ShareFetchRequestData.FetchTopic().setTopicId(QUEUE_ID);
        for (int p = 0; p < 2; p++) {
            ShareFetchRequestData.FetchPartition partition = new ShareFetchRequestData.FetchPartition()
                    .setPartitionIndex(p);
            for (long offset : accept.getOrDefault(p, List.of())) {
                partition.acknowledgementBatches().add(new ShareFetchRequestData.AcknowledgementBatch()
                        .setFirstOffset(offset).setLastOffset(offset).setAcknowledgeTypes(List.of((byte) 1)));
            }
            topic.partitions().add(partition);
        }
        data.topics().add(topic);
        return handler.handle(new ShareFetchRequest.Builder(data).build((short) 1));
    }

    private static ShareFetchResponseData.PartitionData partition(ShareFetchResponse response, int index) {
        for (ShareFetchResponseData.ShareFetchableTopicResponse t : response.data().responses()) {
            for (ShareFetchResponseData.PartitionData p : t.partitions()) {
                if (p.partitionIndex() == index) {
                    return p;
                }
            }
        }
        return new ShareFetchResponseData.PartitionData().setPartitionIndex(index);
    }

    private static List<Long> acquired(ShareFetchResponse response, int index) {
        List<Long> offsets = new ArrayList<>();
        partition(response, index).acquiredRecords().forEach(r -> {
            for (long o = r.firstOffset(); o <= r.lastOffset(); o++) {
                offsets.add(o);
            }
        });
        return offsets;
    }

    @Test
    void shouldAnswerTheFailedPartitionWithItsErrorAndTheOthersAsUsual() {
        logs.get(TP0).append(2);
        logs.get(TP1).append(2);
        failing = TP1;

        ShareFetchResponse response = fetch(0, Map.of()).join();

        assertThat(Errors.forCode(response.data().errorCode())).isEqualTo(Errors.NONE);
        assertThat(acquired(response, 0)).containsExactly(0L, 1L);
        assertThat(Errors.forCode(partition(response, 1).errorCode())).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
        assertThat(acquired(response, 1)).as("not saved: not handed out").isEmpty();
        assertThat(saved).containsExactly(TP0);
    }

    @Test
    void shouldReportOnlyTheUnsavedAcknowledgementsAsFailed() {
        logs.get(TP0).append(2);
        logs.get(TP1).append(2);
        ShareFetchResponse first = fetch(0, Map.of()).join();
        assertThat(acquired(first, 0)).containsExactly(0L, 1L);
        assertThat(acquired(first, 1)).containsExactly(0L, 1L);
        failing = TP1;

        ShareFetchResponse second = fetch(0, Map.of(0, List.of(0L, 1L), 1, List.of(0L, 1L))).join();

        assertThat(Errors.forCode(second.data().errorCode())).isEqualTo(Errors.NONE);
        assertThat(Errors.forCode(partition(second, 0).acknowledgeErrorCode())).isEqualTo(Errors.NONE);
        assertThat(Errors.forCode(partition(second, 1).acknowledgeErrorCode()))
                .isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
    }

    @Test
    void shouldAnswerAParkedFetchWithThePartitionErrorWhenItsAcquisitionCannotBeSaved() {
        CompletableFuture<ShareFetchResponse> parked = fetch((int) NEVER_MS, Map.of());
        assertThat(parked).isNotDone();
        failing = TP1;

        logs.get(TP1).append(1);
        purgatory.onChange(TP1);

        assertThat(parked).isDone();
        assertThat(parked).isCompleted(); // not failed: a failed future is a top-level error on the wire
        ShareFetchResponse response = parked.join();
        assertThat(Errors.forCode(response.data().errorCode())).isEqualTo(Errors.NONE);
        assertThat(Errors.forCode(partition(response, 1).errorCode())).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
        assertThat(acquired(response, 1)).isEmpty();
    }
}
