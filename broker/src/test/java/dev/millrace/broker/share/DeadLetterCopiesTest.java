package dev.millrace.broker.share;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.log.LogConfig;
import dev.millrace.broker.log.PartitionLog;
import dev.millrace.broker.log.Scheduler;
import dev.millrace.delay.SystemTimer;

/**
 * Dead-letter copies across a crash of the share-partition's broker: the copy a saved state owes is made by the next
 * leader, once, whether the old one died before making it or after making it but before saving so. The dead-letter
 * partition is a real {@link PartitionLog}, whose producer state is what answers the second send as a duplicate.
 */
@Timeout(30)
class DeadLetterCopiesTest {

    private static final SharePartitionKey KEY = new SharePartitionKey("g", Uuid.randomUuid(),
            new TopicPartition("queue", 0));
    private static final TopicPartition DLQ = new TopicPartition("queue.DLQ", 0);

    @TempDir
    Path tmp;

    private final ManualClock clock = new ManualClock();
    private final SystemTimer timer = new SystemTimer(1, 20, clock, Runnable::run);
    private final InMemoryShareLog log = new InMemoryShareLog();
    private final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();
    private PartitionLog dlq;

    @BeforeEach
    void openDeadLetterLog() throws IOException {
        log.setDeadLetterTopic(DLQ.topic());
        log.append(3);
        dlq = PartitionLog.open(tmp.resolve("queue.DLQ-0").toFile(), LogConfig.defaults(), Time.SYSTEM,
                Scheduler.IMMEDIATE);
    }

    @AfterEach
    void close() throws IOException {
        executor.shutdownNow();
        timer.close();
        dlq.close();
    }

    /** A broker that saves every change and makes owed copies through {@code topics}; its saves are kept. */
    private final class Broker implements SharePartitionListener {
        final ConcurrentLinkedQueue<SharePartition.EncodedState> saved = new ConcurrentLinkedQueue<>();
        final DeadLetterPublisher publisher;
        final boolean makesCopies;
        /** The copies' next sequence at the last save. */
        private int lastSequence;
        /** A token per save that recorded a copy written and left nothing owed. */
        final BlockingQueue<Boolean> nothingOwed = new LinkedBlockingQueue<>();

        Broker(ShareTopics topics, boolean makesCopies) {
            this.publisher = new DeadLetterPublisher(topics, dev.millrace.delay.Time.SYSTEM, executor);
            this.makesCopies = makesCopies;
        }

        SharePartition partition() {
            return new SharePartition(KEY, log, ShareGroupConfig.defaults(), timer, clock, this, 0);
        }

        @Override
        public void onRecordsAvailable(SharePartitionKey key) {
        }

        @Override
        public void onArchived(DeadLetter deadLetter) {
        }

        /** Saves come from the test thread and the publisher's: one at a time, as the store serialises them. */
        @Override
        public synchronized void onStateChanged(SharePartition partition) {
            SharePartition.EncodedState state = partition.encodedState();
            saved.add(state);
            DeadLetterCopies.State copies = ShareStateSerde.decodeValue(ByteBuffer.wrap(state.value())).deadLetters();
            boolean copyRecorded = copies.pending().isEmpty() && copies.nextSequence() != lastSequence;
            lastSequence = copies.nextSequence();
            if (copyRecorded) {
                nothingOwed.add(true);
            }
        }

        @Override
        public void onDeadLetterCopiesOwed(SharePartition partition) {
            if (makesCopies) {
                publisher.drain(partition);
            }
        }

        SharePartitionSnapshot lastSave() {
            SharePartition.EncodedState last = null;
            for (SharePartition.EncodedState s : saved) {
                last = s;
            }
            assertThat(last).isNotNull();
            assertThat(last.full()).isTrue();
            return ShareStateSerde.decodeValue(ByteBuffer.wrap(last.value()));
        }
    }

    /** Appends to the dead-letter log as its leader; {@code after} decides what the caller is told. */
    private final class DeadLetterTopics implements ShareTopics {
        private final java.util.function.IntFunction<CompletableFuture<Void>> after;
        final AtomicInteger appends = new AtomicInteger();
        final CountDownLatch firstAppend = new CountDownLatch(1);

        DeadLetterTopics(java.util.function.IntFunction<CompletableFuture<Void>> after) {
            this.after = after;
        }

        @Override
        public Optional<Uuid> idOf(String topic) {
            return Optional.empty();
        }

        @Override
        public Optional<String> nameOf(Uuid topicId) {
            return Optional.empty();
        }

        @Override
        public int partitionCount(String topic) {
            return topic.equals(DLQ.topic()) || topic.equals(KEY.topicPartition().topic()) ? 1 : 0;
        }

        @Override
        public Optional<ShareLog> log(TopicPartition tp) {
            return tp.equals(KEY.topicPartition()) ? Optional.of(log) : Optional.empty();
        }

        @Override
        public void append(TopicPartition tp, MemoryRecords records) {
            throw new AssertionError("Unexpected local append to " + tp);
        }

        @Override
        public CompletableFuture<Void> appendToLeader(TopicPartition tp, MemoryRecords records) {
            assertThat(tp).isEqualTo(DLQ);
            int attempt = appends.incrementAndGet();
            CompletableFuture<Void> answer = after.apply(attempt);
            if (!answer.isCompletedExceptionally()) {
                dlq.appendAsLeader(records, 0);
            }
            firstAppend.countDown();
            return answer;
        }
    }

    private List<String> deadLetteredOffsets() {
        List<String> offsets = new ArrayList<>();
        for (RecordBatch batch : dlq.read(0, 1 << 20, true).records().batches()) {
            for (Record record : batch) {
                for (Header h : record.headers()) {
                    if (h.key().equals(ShareDeadLetterHeaders.ORIGINAL_OFFSET)) {
                        offsets.add(new String(h.value(), StandardCharsets.UTF_8));
                    }
                }
            }
        }
        return offsets;
    }

    private static AcknowledgementBatch reject(long offset) {
        return new AcknowledgementBatch(offset, offset, new byte[] {AcknowledgeType.REJECT.id()});
    }

    @Test
    void shouldMakeTheCopyASavedStateOwesWhenTheBrokerDiedBeforeMakingIt() throws Exception {
        Broker dead = new Broker(new DeadLetterTopics(a -> CompletableFuture.completedFuture(null)), false);
        SharePartition old = dead.partition();
        old.acquire("a", 10, 1 << 20);
        old.acknowledge("a", List.of(reject(1)));
        SharePartitionSnapshot saved = dead.lastSave();
        assertThat(saved.deadLetters().pending()).as("the archive's save owes the copy")
                .containsExactly(new DeadLetterCopies.Pending(1, 1, DeadLetter.REASON_REJECTED));
        assertThat(deadLetteredOffsets()).isEmpty();

        Broker next = new Broker(new DeadLetterTopics(a -> CompletableFuture.completedFuture(null)), true);
        SharePartition restored = next.partition();
        restored.restore(saved);
        restored.settleRestore();

        assertThat(next.nothingOwed.poll(20, TimeUnit.SECONDS)).as("the copy was made and saved as made").isNotNull();
        assertThat(deadLetteredOffsets()).containsExactly("1");
        assertThat(next.lastSave().deadLetters().pending()).isEmpty();
        assertThat(next.lastSave().deadLetters().nextSequence()).isEqualTo(1);
    }

    @Test
    void shouldNotCopyTwiceWhenTheBrokerDiedAfterTheCopyBeforeSavingIt() throws Exception {
        // the old broker's copy is written, and it dies before it learns so (and before it saves that it did)
        DeadLetterTopics dying = new DeadLetterTopics(a -> new CompletableFuture<>());
        Broker dead = new Broker(dying, true);
        SharePartition old = dead.partition();
        old.acquire("a", 10, 1 << 20);
        old.acknowledge("a", List.of(reject(1)));
        assertThat(dying.firstAppend.await(20, TimeUnit.SECONDS)).as("the copy was sent").isTrue();
        assertThat(deadLetteredOffsets()).containsExactly("1");
        SharePartitionSnapshot saved = dead.lastSave();
        assertThat(saved.deadLetters().pending()).as("still owed in the last save").hasSize(1);

        Broker next = new Broker(new DeadLetterTopics(a -> CompletableFuture.completedFuture(null)), true);
        SharePartition restored = next.partition();
        restored.restore(saved);
        restored.settleRestore();
        assertThat(next.nothingOwed.poll(20, TimeUnit.SECONDS)).isNotNull();
        assertThat(deadLetteredOffsets()).as("sent again with the same sequence: a duplicate, not written")
                .containsExactly("1");

        // the sequence goes on from there: the next copy is written, not refused
        next.nothingOwed.clear();
        restored.acquire("b", 10, 1 << 20);
        restored.acknowledge("b", List.of(reject(2)));
        assertThat(next.nothingOwed.poll(20, TimeUnit.SECONDS)).as("the second copy was made").isNotNull();
        assertThat(deadLetteredOffsets()).containsExactly("1", "2");
        assertThat(next.lastSave().deadLetters().nextSequence()).isEqualTo(2);
    }

    @Test
    void shouldKeepTryingACopyWhileTheDeadLetterPartitionHasNoLeader() throws Exception {
        DeadLetterTopics leaderless = new DeadLetterTopics(attempt -> attempt <= 3
                ? CompletableFuture.failedFuture(new NotLeaderOrFollowerException("no leader of " + DLQ))
                : CompletableFuture.completedFuture(null));
        Broker broker = new Broker(leaderless, true);
        SharePartition partition = broker.partition();
        partition.acquire("a", 10, 1 << 20);

        partition.acknowledge("a", List.of(reject(0), reject(2)));

        assertThat(broker.nothingOwed.poll(20, TimeUnit.SECONDS)).isNotNull();
        assertThat(leaderless.appends.get()).isEqualTo(5);
        assertThat(deadLetteredOffsets()).as("in archive order, each once").containsExactly("0", "2");
    }
}
