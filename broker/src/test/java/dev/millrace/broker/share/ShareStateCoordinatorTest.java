package dev.millrace.broker.share;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.FencedLeaderEpochException;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.broker.coordinator.ReplicationAwaiter;
import dev.millrace.delay.SystemTimer;

/**
 * Hand-over of share-partition state: what the share-state coordinator of one broker saved, the coordinator of the
 * next leader of the state partition loads from the same (replicated) log, equal in acquired, acknowledged and
 * delivery counts; the old coordinator refuses at once after resigning; a share-partition leader whose topic-partition
 * has a newer leader is fenced; a share-partition is dropped at once when its topic-partition's leadership ends here.
 */
@Timeout(30)
class ShareStateCoordinatorTest {

    private static final Uuid TOPIC_ID = Uuid.randomUuid();
    private static final SharePartitionKey KEY = new SharePartitionKey("workers", TOPIC_ID,
            new TopicPartition("queue", 0));
    private static final TopicPartition STATE = new TopicPartition(LogShareStateStore.TOPIC, 0);

    private final ManualClock clock = new ManualClock();
    private final SystemTimer timer = new SystemTimer(1, 20, clock, Runnable::run);
    private final InMemoryShareLog queue = new InMemoryShareLog();
    /** The state partition's log, as every replica holds it. */
    private final InMemoryShareLog stateLog = new InMemoryShareLog();

    @AfterEach
    void closeTimer() {
        timer.close();
    }

    @Test
    void shouldLoadOnTheNewLeaderWhatTheOldOneSavedAndRefuseAtOnceOnTheOldOne() throws Exception {
        Broker first = new Broker(1);
        ShareStateCoordinator old = first.coordinator;
        old.onElected(0, 1);
        old.awaitLoads(5_000);
        ClusterShareStateStore store = new ClusterShareStateStore(old, p -> Optional.empty(), 1, 1_000, 10);
        queue.append(10);
        SharePartition partition = new SharePartition(KEY, queue, ShareGroupConfig.defaults(), timer, clock,
                QuietListener.INSTANCE, 0);
        partition.leaderEpoch(3);
        partition.acquire("a", 6, 1 << 20); // 0..5 acquired, delivery count 1
        partition.acknowledge("a", List.of(batch(0, 1, AcknowledgeType.ACCEPT), batch(2, 2, AcknowledgeType.RELEASE),
                batch(3, 3, AcknowledgeType.REJECT)));
        partition.acquire("b", 1, 1 << 20); // 2 again: delivery count 2
        store.save(partition);
        SharePartitionSnapshot before = partition.snapshot();

        first.leading = false;
        old.onResigned(0, 1);
        assertThatThrownBy(() -> old.read(KEY.groupId(), TOPIC_ID, 0, 3)).isInstanceOf(NotCoordinatorException.class);
        assertThatThrownBy(() -> old.write(KEY.groupId(), TOPIC_ID, 0, 3, partition.encodedState()).get())
                .hasCauseInstanceOf(NotCoordinatorException.class);

        Broker second = new Broker(2);
        second.coordinator.onElected(0, 2);
        second.coordinator.awaitLoads(5_000);
        SharePartitionSnapshot loaded = second.coordinator.read(KEY.groupId(), TOPIC_ID, 0, 4).orElseThrow()
                .snapshot();
        assertThat(loaded.startOffset()).isEqualTo(before.startOffset()).isEqualTo(2);
        assertThat(loaded.endOffset()).isEqualTo(before.endOffset()).isEqualTo(6);
        assertThat(entries(loaded)).isEqualTo(entries(before)).isEqualTo(Map.of(
                2L, "ACQUIRED/2", 3L, "ARCHIVED/1", 4L, "ACQUIRED/1", 5L, "ACQUIRED/1"));

        // a new share-partition leader restores it: what was acquired on the old one is available, counted once
        SharePartition moved = new SharePartition(KEY, queue, ShareGroupConfig.defaults(), timer, clock,
                QuietListener.INSTANCE, loaded.startOffset());
        moved.restore(loaded);
        AcquireResult again = moved.acquire("c", 10, 1 << 20);
        assertThat(again.acquired()).extracting(AcquiredBatch::firstOffset, AcquiredBatch::deliveryCount)
                .startsWith(org.assertj.core.groups.Tuple.tuple(2L, 3));
        assertThat(again.acquired()).allMatch(b -> b.firstOffset() >= 2, "accepted: never delivered again");
        assertThat(moved.deliveryCount(4)).isEqualTo(2);
    }

    @Test
    void shouldFenceTheWritesOfAnOlderLeaderOfTheTopicPartitionOnceANewerOneRead() throws Exception {
        Broker broker = new Broker(1);
        broker.coordinator.onElected(0, 1);
        broker.coordinator.awaitLoads(5_000);
        queue.append(4);
        SharePartition old = new SharePartition(KEY, queue, ShareGroupConfig.defaults(), timer, clock,
                QuietListener.INSTANCE, 0);
        old.acquire("a", 4, 1 << 20);
        broker.coordinator.write(KEY.groupId(), TOPIC_ID, 0, 7, old.encodedState()).get();

        broker.coordinator.read(KEY.groupId(), TOPIC_ID, 0, 8); // the new leader, epoch 8, loads
        old.acknowledge("a", List.of(batch(0, 3, AcknowledgeType.ACCEPT)));
        assertThatThrownBy(() -> broker.coordinator.write(KEY.groupId(), TOPIC_ID, 0, 7, old.encodedState()).get())
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(FencedLeaderEpochException.class);
        assertThat(entries(broker.coordinator.read(KEY.groupId(), TOPIC_ID, 0, 8).orElseThrow().snapshot()))
                .as("the old leader's acceptance did not land").containsEntry(0L, "ACQUIRED/1");

        // the metadata alone fences too (the coordinator moved, or the new leader has not read yet)
        broker.topicEpochs.put(TOPIC_ID, 9);
        assertThatThrownBy(() -> broker.coordinator.write(KEY.groupId(), TOPIC_ID, 0, 8, old.encodedState()).get())
                .hasCauseInstanceOf(FencedLeaderEpochException.class);
    }

    @Test
    void shouldRefuseWhenTheStatePartitionHasANewerLeaderEpochThanItWasLoadedIn() throws Exception {
        Broker broker = new Broker(1);
        broker.coordinator.onElected(0, 1);
        broker.coordinator.awaitLoads(5_000);
        broker.epoch = 2; // elected elsewhere and back, the events not applied here yet
        queue.append(1);
        SharePartition partition = new SharePartition(KEY, queue, ShareGroupConfig.defaults(), timer, clock,
                QuietListener.INSTANCE, 0);
        assertThatThrownBy(() -> broker.coordinator.write(KEY.groupId(), TOPIC_ID, 0, -1, partition.encodedState())
                .get()).hasCauseInstanceOf(NotCoordinatorException.class);
        assertThat(stateLog.highWatermark()).isZero();
    }

    @Test
    void shouldDropSharePartitionsAtOnceWhenThisBrokerStopsLeadingTheirTopicPartition() throws Exception {
        Broker broker = new Broker(1);
        broker.coordinator.onElected(0, 1);
        broker.coordinator.awaitLoads(5_000);
        ClusterShareStateStore store = new ClusterShareStateStore(broker.coordinator, p -> Optional.empty(), 1, 1_000,
                10);
        StateSaves saves = new StateSaves(store);
        SharePartitionListener listener = new SharePartitionListener() {
            @Override
            public void onRecordsAvailable(SharePartitionKey key) {
            }

            @Override
            public void onArchived(DeadLetter deadLetter) {
            }

            @Override
            public void onStateChanged(SharePartition partition) {
                saves.changed(partition);
            }
        };
        SharePartitionManager manager = new SharePartitionManager(ShareGroupConfig.defaults(), broker.topics, timer,
                clock, listener, store);
        SharePartition partition = manager.getOrCreate(KEY.groupId(), TOPIC_ID, KEY.topicPartition()).orElseThrow();
        queue.append(5);
        assertThat(partition.leaderEpoch()).isEqualTo(5);
        partition.acquire("a", 5, 1 << 20);

        broker.queueLeading = false;
        manager.onResigned(KEY.topicPartition(), 5);
        assertThat(partition.isClosed()).isTrue();
        assertThat(manager.get(KEY.groupId(), KEY.topicPartition())).isEmpty();
        assertThat(partition.acknowledge("a", List.of(batch(0, 4, AcknowledgeType.ACCEPT))))
                .isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
        assertThat(partition.acquire("a", 5, 1 << 20).isEmpty()).isTrue();
        assertThatThrownBy(() -> manager.getOrCreate(KEY.groupId(), TOPIC_ID, KEY.topicPartition()))
                .isInstanceOf(NotLeaderOrFollowerException.class);
        assertThat(entries(broker.coordinator.read(KEY.groupId(), TOPIC_ID, 0, 5).orElseThrow().snapshot()))
                .as("the acquisition was saved, nothing after it").containsEntry(0L, "ACQUIRED/1").hasSize(5);
    }

    @Test
    void shouldCloseASharePartitionWhoseSaveANewerLeaderFencedSoTheNextFetchLoadsItAgain() throws Exception {
        Broker broker = new Broker(1);
        broker.coordinator.onElected(0, 1);
        broker.coordinator.awaitLoads(5_000);
        ClusterShareStateStore store = new ClusterShareStateStore(broker.coordinator, p -> Optional.empty(), 1, 1_000,
                10);
        SharePartitionManager manager = new SharePartitionManager(ShareGroupConfig.defaults(), broker.topics, timer,
                clock, QuietListener.INSTANCE, store);
        SharePartition stale = manager.getOrCreate(KEY.groupId(), TOPIC_ID, KEY.topicPartition()).orElseThrow();
        queue.append(2);
        stale.acquire("a", 2, 1 << 20);
        store.save(stale);

        broker.coordinator.read(KEY.groupId(), TOPIC_ID, 0, 6); // a newer leader of the queue partition loaded it
        assertThatThrownBy(() -> store.save(stale)).isInstanceOf(FencedLeaderEpochException.class);

        assertThat(stale.isClosed()).as("fenced: this copy is done, as after a resignation").isTrue();
        assertThat(manager.get(KEY.groupId(), KEY.topicPartition())).isEmpty();
        assertThat(stale.acknowledge("a", List.of(batch(0, 1, AcknowledgeType.ACCEPT))))
                .isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
        // this broker leads the queue partition again, in a newer epoch: the next fetch loads the saved state afresh
        broker.queueEpoch = 7;
        SharePartition reloaded = manager.getOrCreate(KEY.groupId(), TOPIC_ID, KEY.topicPartition()).orElseThrow();
        assertThat(reloaded).isNotSameAs(stale);
        assertThat(reloaded.leaderEpoch()).isEqualTo(7);
        assertThat(reloaded.deliveryCount(0)).as("the saved acquisition counts").isEqualTo(1);
    }

    @Test
    void shouldRefuseAWriteWhoseStatePartitionChangedLeadershipBeforeItsWaitForTheReplicasBegan() throws Exception {
        Broker[] broker = new Broker[1];
        // leadership lost and won back (epoch 1 to 3) between the append and the wait: the append may be truncated
        // away, and a wait begun in epoch 3 passes the new log end at once
        broker[0] = new Broker(1, p -> {
            broker[0].epoch = 3;
            return CompletableFuture.completedFuture(null);
        });
        broker[0].coordinator.onElected(0, 1);
        broker[0].coordinator.awaitLoads(5_000);
        queue.append(1);
        SharePartition partition = new SharePartition(KEY, queue, ShareGroupConfig.defaults(), timer, clock,
                QuietListener.INSTANCE, 0);
        partition.acquire("a", 1, 1 << 20);

        assertThatThrownBy(() -> broker[0].coordinator.write(KEY.groupId(), TOPIC_ID, 0, 5, partition.encodedState())
                .get()).hasCauseInstanceOf(NotCoordinatorException.class);
    }

    private static AcknowledgementBatch batch(long first, long last, AcknowledgeType type) {
        return new AcknowledgementBatch(first, last, new byte[] {type.id()});
    }

    private static Map<Long, String> entries(SharePartitionSnapshot snapshot) {
        Map<Long, String> out = new java.util.TreeMap<>();
        snapshot.entries().forEach(e -> out.put(e.offset(), e.state() + "/" + e.deliveryCount()));
        return out;
    }

    /** One broker's view: the state partition's log (shared), whether it leads it and the queue, in which epochs. */
    private final class Broker implements ShareTopics {
        volatile boolean leading = true;
        volatile int epoch;
        volatile boolean queueLeading = true;
        volatile int queueEpoch = 5;
        final Map<Uuid, Integer> topicEpochs = new ConcurrentHashMap<>();
        final ShareTopics topics = this;
        final ShareStateCoordinator coordinator;

        Broker(int epoch) {
            this(epoch, ReplicationAwaiter.IMMEDIATE);
        }

        Broker(int epoch, ReplicationAwaiter awaiter) {
            this.epoch = epoch;
            this.coordinator = new ShareStateCoordinator(this, new LogShareStateStore(this, 1, clock), awaiter);
        }

        @Override
        public Optional<Uuid> idOf(String topic) {
            return topic.equals("queue") ? Optional.of(TOPIC_ID) : Optional.empty();
        }

        @Override
        public Optional<String> nameOf(Uuid topicId) {
            return topicId.equals(TOPIC_ID) ? Optional.of("queue") : Optional.empty();
        }

        @Override
        public int leaderEpoch(Uuid topicId, int partition) {
            return topicEpochs.getOrDefault(topicId, -1);
        }

        @Override
        public int partitionCount(String topic) {
            return topic.equals("queue") || topic.equals(STATE.topic()) ? 1 : 0;
        }

        @Override
        public Optional<ShareLog> log(TopicPartition tp) {
            if (tp.equals(STATE)) {
                return Optional.of(new Led(stateLog, () -> leading, () -> epoch));
            }
            if (tp.equals(KEY.topicPartition())) {
                return Optional.of(new Led(queue, () -> queueLeading, () -> queueEpoch));
            }
            return Optional.empty();
        }

        @Override
        public void append(TopicPartition tp, MemoryRecords records) {
            assertThat(tp).isEqualTo(STATE);
            stateLog.appendRecords(records);
        }
    }

    /** A log as a broker sees it: led or not, in an epoch. */
    private record Led(InMemoryShareLog log, java.util.function.BooleanSupplier leader,
                       java.util.function.IntSupplier epoch) implements ShareLog {

        @Override
        public long logStartOffset() {
            return log.logStartOffset();
        }

        @Override
        public long highWatermark() {
            return log.highWatermark();
        }

        @Override
        public boolean isLeader() {
            return leader.getAsBoolean();
        }

        @Override
        public int leaderEpoch() {
            return epoch.getAsInt();
        }

        @Override
        public Records read(long offset, int maxBytes) {
            return log.read(offset, maxBytes);
        }

        @Override
        public boolean skip(RecordBatch batch) {
            return log.skip(batch);
        }

        @Override
        public Optional<String> deadLetterTopic() {
            return Optional.empty();
        }
    }
}
