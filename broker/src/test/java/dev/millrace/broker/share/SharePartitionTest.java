package dev.millrace.broker.share;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.delay.SystemTimer;

/** The share-partition record state machine on a manual clock; due timers run on the test thread. */
@Timeout(10)
class SharePartitionTest {

    private static final SharePartitionKey KEY = new SharePartitionKey("g", Uuid.randomUuid(),
            new TopicPartition("queue", 0));

    private final ManualClock clock = new ManualClock();
    private final SystemTimer timer = new SystemTimer(1, 20, clock, Runnable::run);
    private final InMemoryShareLog log = new InMemoryShareLog();
    private final List<DeadLetter> deadLetters = new ArrayList<>();
    private final AtomicInteger availableSignals = new AtomicInteger();
    private final SharePartitionListener listener = new SharePartitionListener() {
        @Override
        public void onRecordsAvailable(SharePartitionKey key) {
            availableSignals.incrementAndGet();
        }

        @Override
        public void onArchived(DeadLetter deadLetter) {
            deadLetters.add(deadLetter);
        }
    };

    @AfterEach
    void closeTimer() {
        timer.close();
    }

    private SharePartition partition(ShareGroupConfig config) {
        return new SharePartition(KEY, log, config, timer, clock, listener, 0);
    }

    private void advanceMs(long ms) throws InterruptedException {
        clock.advanceMs(ms);
        while (timer.advanceClock(0)) {
            // run everything due, including tasks that due tasks added
        }
    }

    private static AcknowledgementBatch ack(long first, long last, AcknowledgeType type) {
        return new AcknowledgementBatch(first, last, new byte[] {type.id()});
    }

    private static List<String> values(AcquireResult result) {
        List<String> values = new ArrayList<>();
        for (Record record : result.records().records()) {
            boolean acquired = result.acquired().stream().anyMatch(b -> record.offset() >= b.firstOffset()
                    && record.offset() <= b.lastOffset());
            if (acquired) {
                values.add(new String(Utils.toArray(record.value()), StandardCharsets.UTF_8));
            }
        }
        return values;
    }

    @Test
    void shouldHandEachRecordToOneMemberAtATime() {
        log.append(6);
        log.append(4);
        SharePartition partition = partition(ShareGroupConfig.defaults());

        AcquireResult a = partition.acquire("a", 5, 1 << 20);
        AcquireResult b = partition.acquire("b", 5, 1 << 20);
        AcquireResult c = partition.acquire("c", 5, 1 << 20);

        assertThat(a.acquired()).containsExactly(new AcquiredBatch(0, 4, 1));
        assertThat(values(a)).containsExactly("v0", "v1", "v2", "v3", "v4");
        assertThat(b.acquired()).containsExactly(new AcquiredBatch(5, 9, 1));
        assertThat(values(b)).containsExactly("v5", "v6", "v7", "v8", "v9");
        assertThat(c.isEmpty()).isTrue();
        assertThat(partition.state(3)).contains(RecordState.ACQUIRED);
    }

    @Test
    void shouldMoveStartOffsetWhenRecordsAreAcceptedAndRefuseAcknowledgementsFromOthers() {
        log.append(4);
        SharePartition partition = partition(ShareGroupConfig.defaults());
        partition.acquire("a", 10, 1 << 20);

        assertThat(partition.acknowledge("b", List.of(ack(0, 1, AcknowledgeType.ACCEPT))))
                .isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(partition.startOffset()).isZero();
        assertThat(partition.acknowledge("a", List.of(ack(0, 1, AcknowledgeType.ACCEPT)))).isEqualTo(Errors.NONE);

        assertThat(partition.startOffset()).isEqualTo(2);
        assertThat(partition.state(2)).contains(RecordState.ACQUIRED);
        assertThat(partition.acknowledge("a", List.of(ack(0, 0, AcknowledgeType.ACCEPT))))
                .isEqualTo(Errors.INVALID_RECORD_STATE);
    }

    @Test
    void shouldMakeRecordsAvailableAgainWhenTheirLockExpires() throws Exception {
        log.append(3);
        SharePartition partition = partition(ShareGroupConfig.defaults().withRecordLockDurationMs(1000));
        partition.acquire("a", 10, 1 << 20);

        advanceMs(999);
        assertThat(partition.acquire("b", 10, 1 << 20).isEmpty()).isTrue();
        advanceMs(1);

        assertThat(partition.state(0)).contains(RecordState.AVAILABLE);
        AcquireResult b = partition.acquire("b", 10, 1 << 20);
        assertThat(b.acquired()).containsExactly(new AcquiredBatch(0, 2, 2));
        assertThat(partition.acknowledge("a", List.of(ack(0, 2, AcknowledgeType.ACCEPT))))
                .isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(partition.acknowledge("b", List.of(ack(0, 2, AcknowledgeType.ACCEPT)))).isEqualTo(Errors.NONE);
        assertThat(partition.startOffset()).isEqualTo(3);
    }

    @Test
    void shouldExtendTheLockWhenRenewed() throws Exception {
        log.append(1);
        SharePartition partition = partition(ShareGroupConfig.defaults().withRecordLockDurationMs(1000));
        partition.acquire("a", 10, 1 << 20);
        advanceMs(800);

        assertThat(partition.acknowledge("a", List.of(ack(0, 0, AcknowledgeType.RENEW)))).isEqualTo(Errors.NONE);
        advanceMs(900);
        assertThat(partition.state(0)).contains(RecordState.ACQUIRED);
        advanceMs(100);

        assertThat(partition.state(0)).contains(RecordState.AVAILABLE);
    }

    @Test
    void shouldCancelAnAcquisitionsLockTimerOnceEveryRecordOfItIsSettled() {
        log.append(10);
        SharePartition partition = partition(ShareGroupConfig.defaults());
        partition.acquire("a", 10, 1 << 20);
        assertThat(timer.size()).isEqualTo(1);

        partition.acknowledge("a", List.of(ack(0, 6, AcknowledgeType.ACCEPT), ack(8, 8, AcknowledgeType.RELEASE)));
        assertThat(timer.size()).as("records 7 and 9 are still locked").isEqualTo(1);
        partition.acknowledge("a", List.of(ack(7, 7, AcknowledgeType.REJECT), ack(9, 9, AcknowledgeType.ACCEPT)));

        // without the cancellation the timer would wait out the 30 s lock holding every offset
        assertThat(timer.size()).isZero();
        assertThat(partition.pendingLockTimeouts()).isZero();
        AcquireResult again = partition.acquire("b", 10, 1 << 20);
        assertThat(again.acquired()).containsExactly(new AcquiredBatch(8, 8, 2));
        assertThat(timer.size()).isEqualTo(1);
        partition.releaseMember("b");
        assertThat(timer.size()).isZero();
    }

    @Test
    void shouldCancelAReArmedLockTimerWhenItsRenewedRecordIsSettled() throws Exception {
        log.append(3);
        SharePartition partition = partition(ShareGroupConfig.defaults().withRecordLockDurationMs(1000));
        partition.acquire("a", 10, 1 << 20);
        advanceMs(800);
        partition.acknowledge("a", List.of(ack(0, 0, AcknowledgeType.RENEW)));
        advanceMs(200);
        assertThat(partition.state(1)).contains(RecordState.AVAILABLE);
        assertThat(partition.state(0)).contains(RecordState.ACQUIRED);
        assertThat(partition.pendingLockTimeouts()).isEqualTo(1);

        partition.acknowledge("a", List.of(ack(0, 0, AcknowledgeType.ACCEPT)));

        assertThat(partition.pendingLockTimeouts()).isZero();
        assertThat(timer.size()).isZero();
    }

    /**
     * A range up to Long.MAX_VALUE (ShareSettle and ShareAcknowledge take any) must not be walked offset by offset
     * under the monitor; in a thread of its own, so that such a loop fails the test instead of hanging it.
     */
    @Test
    @Timeout(value = 10, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void shouldAnswerAtOnceWhenAnAcknowledgedRangeReachesFarBeyondTheEndOffset() {
        log.append(3);
        SharePartition partition = partition(ShareGroupConfig.defaults());
        partition.acquire("a", 10, 1 << 20);

        assertThat(partition.acknowledge("a", List.of(ack(1, Long.MAX_VALUE, AcknowledgeType.ACCEPT))))
                .isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(partition.state(1)).contains(RecordState.ACKNOWLEDGED);
        assertThat(partition.state(2)).contains(RecordState.ACKNOWLEDGED);
        assertThat(partition.acknowledge("a", List.of(ack(0, 0, AcknowledgeType.ACCEPT)))).isEqualTo(Errors.NONE);
        assertThat(partition.startOffset()).isEqualTo(3);
        log.append(1);
        partition.acquire("a", 10, 1 << 20); // 3
        // from far below the start offset to far beyond the end offset
        assertThat(partition.acknowledge("a", List.of(ack(0, 1L << 50, AcknowledgeType.RELEASE))))
                .isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(partition.state(3)).contains(RecordState.AVAILABLE);
    }

    @Test
    void shouldRedeliverReleasedRecordsWithAHigherDeliveryCount() {
        log.append(2);
        SharePartition partition = partition(ShareGroupConfig.defaults());
        partition.acquire("a", 10, 1 << 20);

        partition.acknowledge("a", List.of(new AcknowledgementBatch(0, 1,
                new byte[] {AcknowledgeType.RELEASE.id(), AcknowledgeType.ACCEPT.id()})));

        assertThat(partition.state(1)).contains(RecordState.ACKNOWLEDGED);
        AcquireResult again = partition.acquire("b", 10, 1 << 20);
        assertThat(again.acquired()).containsExactly(new AcquiredBatch(0, 0, 2));
        assertThat(values(again)).containsExactly("v0");
        assertThat(availableSignals.get()).isPositive();
    }

    @Test
    void shouldArchiveAndDeadLetterAReleasedRecordAtTheDeliveryLimit() {
        log.append(1);
        SharePartition partition = partition(ShareGroupConfig.defaults().withDeliveryCountLimit(2));

        partition.acquire("a", 10, 1 << 20);
        partition.acknowledge("a", List.of(ack(0, 0, AcknowledgeType.RELEASE)));
        assertThat(deadLetters).isEmpty();
        partition.acquire("a", 10, 1 << 20);
        partition.acknowledge("a", List.of(ack(0, 0, AcknowledgeType.RELEASE)));

        assertThat(deadLetters).containsExactly(new DeadLetter(KEY, 0, 2, DeadLetter.REASON_DELIVERY_LIMIT));
        assertThat(partition.startOffset()).isEqualTo(1);
        assertThat(partition.acquire("b", 10, 1 << 20).isEmpty()).isTrue();
    }

    @Test
    void shouldArchiveAndDeadLetterAnExpiredRecordAtTheDeliveryLimit() throws Exception {
        log.append(1);
        SharePartition partition = partition(ShareGroupConfig.defaults().withDeliveryCountLimit(1)
                .withRecordLockDurationMs(50));
        partition.acquire("a", 10, 1 << 20);

        advanceMs(50);

        assertThat(partition.state(0)).contains(RecordState.ACKNOWLEDGED); // below the start offset: done
        assertThat(deadLetters).containsExactly(new DeadLetter(KEY, 0, 1, DeadLetter.REASON_DELIVERY_LIMIT));
    }

    @Test
    void shouldArchiveAndDeadLetterARejectedRecord() {
        log.append(2);
        SharePartition partition = partition(ShareGroupConfig.defaults());
        partition.acquire("a", 10, 1 << 20);

        partition.acknowledge("a", List.of(ack(1, 1, AcknowledgeType.REJECT)));

        assertThat(partition.state(1)).contains(RecordState.ARCHIVED);
        assertThat(deadLetters).containsExactly(new DeadLetter(KEY, 1, 1, DeadLetter.REASON_REJECTED));
        assertThat(partition.startOffset()).isZero();
    }

    @Test
    void shouldAcquireNoNewRecordsBeyondTheInFlightWindow() {
        log.append(10);
        SharePartition partition = partition(ShareGroupConfig.defaults().withMaxRecordLocks(3));

        assertThat(partition.acquire("a", 10, 1 << 20).acquired()).containsExactly(new AcquiredBatch(0, 2, 1));
        assertThat(partition.acquire("b", 10, 1 << 20).isEmpty()).isTrue();
        partition.acknowledge("a", List.of(ack(0, 0, AcknowledgeType.ACCEPT)));

        assertThat(partition.acquire("b", 10, 1 << 20).acquired()).containsExactly(new AcquiredBatch(3, 3, 1));
    }

    @Test
    void shouldHoldReleasedRecordsBackWithExponentialBackoff() throws Exception {
        log.append(1);
        SharePartition partition = partition(ShareGroupConfig.defaults().withRedeliveryBackoff(100, 150));
        partition.acquire("a", 10, 1 << 20);
        partition.acknowledge("a", List.of(ack(0, 0, AcknowledgeType.RELEASE)));
        int signals = availableSignals.get();

        advanceMs(99);
        assertThat(partition.acquire("a", 10, 1 << 20).isEmpty()).isTrue();
        advanceMs(1);
        assertThat(availableSignals.get()).isGreaterThan(signals);
        assertThat(partition.acquire("a", 10, 1 << 20).acquired()).containsExactly(new AcquiredBatch(0, 0, 2));
        partition.acknowledge("a", List.of(ack(0, 0, AcknowledgeType.RELEASE)));

        advanceMs(149);
        assertThat(partition.acquire("a", 10, 1 << 20).isEmpty()).isTrue();
        advanceMs(1);
        assertThat(partition.acquire("a", 10, 1 << 20).acquired()).containsExactly(new AcquiredBatch(0, 0, 3));
    }

    @Test
    void shouldReleaseEverythingAMemberHoldsWhenItGoes() {
        log.append(4);
        SharePartition partition = partition(ShareGroupConfig.defaults());
        partition.acquire("a", 2, 1 << 20);
        partition.acquire("b", 2, 1 << 20);

        partition.releaseMember("a");

        assertThat(partition.state(0)).contains(RecordState.AVAILABLE);
        assertThat(partition.state(2)).contains(RecordState.ACQUIRED);
        assertThat(partition.acquire("c", 10, 1 << 20).acquired()).containsExactly(new AcquiredBatch(0, 1, 2));
    }

    @Test
    void shouldRestoreFromASnapshotWithoutRedeliveringAcceptedRecords() {
        log.append(5);
        SharePartition partition = partition(ShareGroupConfig.defaults());
        partition.acquire("a", 4, 1 << 20);
        partition.acknowledge("a", List.of(new AcknowledgementBatch(0, 2, new byte[] {AcknowledgeType.ACCEPT.id(),
                AcknowledgeType.RELEASE.id(), AcknowledgeType.ACCEPT.id()})));

        SharePartition restored = partition(ShareGroupConfig.defaults());
        restored.restore(partition.snapshot());

        assertThat(restored.startOffset()).isEqualTo(1);
        AcquireResult result = restored.acquire("b", 10, 1 << 20);
        assertThat(result.acquired()).containsExactly(new AcquiredBatch(1, 1, 2), new AcquiredBatch(3, 3, 2),
                new AcquiredBatch(4, 4, 1));
        assertThat(values(result)).containsExactly("v1", "v3", "v4");
    }

    /**
     * A new leader restores records acquired under locks lost with the old one: the lost lock counts as a delivery, so
     * one acquired for the last delivery allowed is archived and dead-lettered when it would be acquired again, never
     * delivered once more.
     */
    @Test
    void shouldArchiveAndDeadLetterARestoredAcquisitionThatWasTheLastDeliveryAllowed() {
        ShareGroupConfig limitThree = ShareGroupConfig.defaults().withDeliveryCountLimit(3);
        SharePartitionSnapshot saved = lostAtTheLastDelivery(limitThree);
        List<String> events = new ArrayList<>();
        SharePartition restored = recording(limitThree, events);

        restored.restore(saved);
        restored.settleRestore();
        assertThat(events).as("nothing archived before anyone could return it").isEmpty();

        assertThat(restored.acquire("b", 10, 1 << 20).acquired()).as("only the record with deliveries left")
                .containsExactly(new AcquiredBatch(2, 2, 2));
        assertThat(events).as("archived and saved with the acquisition, then dead-lettered").containsExactly(
                "save start 2, 2 ACQUIRED",
                "dead-letter 0/3 " + DeadLetter.REASON_DELIVERY_LIMIT,
                "dead-letter 1/3 " + DeadLetter.REASON_DELIVERY_LIMIT);
    }

    /**
     * Records read ahead and never handed out, whose locks were lost with the old leader, are returned to the new one
     * by the member that held them: that acquisition's count is undone (once), so the failover neither raises the
     * count the application sees nor brings the records nearer the dead-letter limit. A record delivered again in the
     * meantime keeps its count.
     */
    @Test
    void shouldUndoTheCountOfALostAcquisitionOnceWhenItsHolderReturnsIt() {
        ShareGroupConfig limitThree = ShareGroupConfig.defaults().withDeliveryCountLimit(3);
        SharePartitionSnapshot saved = lostAtTheLastDelivery(limitThree); // 0 and 1 at 3 deliveries, 2 at 1
        List<String> events = new ArrayList<>();
        SharePartition restored = recording(limitThree, events);
        restored.restore(saved);
        restored.settleRestore();

        assertThat(restored.returnAcquired("a", 0, 0)).isEqualTo(Errors.NONE);
        assertThat(restored.deliveryCount(0)).isEqualTo(2);
        assertThat(events).as("the lowered count is saved").containsExactly("save start 0, 2 AVAILABLE");
        assertThat(restored.returnAcquired("a", 0, 0)).as("undone once only").isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(restored.deliveryCount(0)).isEqualTo(2);

        // 2 is delivered again (and released) before its return arrives: that delivery counts, the return changes
        // nothing
        assertThat(restored.acquire("c", 10, 1 << 20).acquired()).as("0 with a delivery left, 1 archived, 2")
                .containsExactly(new AcquiredBatch(0, 0, 3), new AcquiredBatch(2, 2, 2));
        restored.acknowledge("c", List.of(ack(0, 0, AcknowledgeType.ACCEPT), ack(2, 2, AcknowledgeType.RELEASE)));
        assertThat(restored.returnAcquired("a", 2, 2)).isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(restored.deliveryCount(2)).isEqualTo(2);
        assertThat(deadLettersOf(events)).containsExactly("dead-letter 1/3 " + DeadLetter.REASON_DELIVERY_LIMIT);
    }

    /**
     * A lock lost without its holder settling it, to the member's removal or to its expiry, keeps the acquisition's
     * count; the holder, which had only read the records ahead, returns them and the count is undone once. A record
     * released at the holder's own request (RELEASE) keeps its count: that was a delivery.
     */
    @Test
    void shouldUndoTheCountOfALockLostToTheMembersRemovalOrToExpiryWhenReturned() throws InterruptedException {
        log.append(4);
        SharePartition partition = partition(ShareGroupConfig.defaults().withRecordLockDurationMs(1000)
                .withDeliveryCountLimit(3));
        partition.acquire("a", 2, 1 << 20);
        partition.releaseMember("a"); // fenced, say; it rejoins and returns what it read ahead
        assertThat(partition.deliveryCount(0)).isEqualTo(1);
        assertThat(partition.returnAcquired("a", 0, 1)).isEqualTo(Errors.NONE);
        assertThat(partition.deliveryCount(0)).isZero();
        assertThat(partition.deliveryCount(1)).isZero();
        assertThat(partition.returnAcquired("a", 0, 1)).as("once").isEqualTo(Errors.INVALID_RECORD_STATE);

        assertThat(partition.acquire("a", 4, 1 << 20).acquired()).containsExactly(new AcquiredBatch(0, 3, 1));
        partition.acknowledge("a", List.of(ack(3, 3, AcknowledgeType.RELEASE)));
        advanceMs(1000); // 0..2 expire: their holder could not renew them in time
        assertThat(partition.state(0)).contains(RecordState.AVAILABLE);
        assertThat(partition.returnAcquired("a", 0, 0)).isEqualTo(Errors.NONE);
        assertThat(partition.deliveryCount(0)).isZero();
        assertThat(partition.deliveryCount(1)).as("not returned: counted").isEqualTo(1);
        assertThat(partition.returnAcquired("a", 3, 3)).as("released by its holder: a delivery")
                .isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(partition.deliveryCount(3)).isEqualTo(1);
        assertThat(partition.acquire("b", 1, 1 << 20).acquired()).as("available at once, first delivery")
                .containsExactly(new AcquiredBatch(0, 0, 1));
    }

    /** Offsets 0..2, where 0 and 1 were acquired for their third delivery (limit 3) and 2 for its first, unsettled. */
    private SharePartitionSnapshot lostAtTheLastDelivery(ShareGroupConfig limitThree) {
        log.append(3);
        SharePartition old = partition(limitThree);
        for (int delivery = 1; delivery <= 2; delivery++) {
            old.acquire("a", 2, 1 << 20);
            old.acknowledge("a", List.of(ack(0, 1, AcknowledgeType.RELEASE)));
        }
        old.acquire("a", 3, 1 << 20); // 0 and 1: their third delivery, 2: its first; then the old leader is lost
        deadLetters.clear();
        return old.snapshot();
    }

    /** A share-partition whose saves and dead letters are written to {@code events}. */
    private SharePartition recording(ShareGroupConfig config, List<String> events) {
        return new SharePartition(KEY, log, config, timer, clock, new SharePartitionListener() {
            @Override
            public void onRecordsAvailable(SharePartitionKey key) {
            }

            @Override
            public void onArchived(DeadLetter deadLetter) {
                events.add("dead-letter " + deadLetter.offset() + "/" + deadLetter.deliveryCount() + " "
                        + deadLetter.reason());
            }

            @Override
            public void onStateChanged(SharePartition partition) {
                events.add("save start " + partition.startOffset() + ", 2 " + partition.state(2).orElseThrow());
            }
        }, 0);
    }

    private static List<String> deadLettersOf(List<String> events) {
        return events.stream().filter(e -> e.startsWith("dead-letter")).toList();
    }

    @Test
    void shouldEncodeTheSameStateAsItsSnapshotWithANewerVersion() {
        log.append(8);
        SharePartition partition = partition(ShareGroupConfig.defaults());
        partition.acquire("a", 6, 1 << 20);
        partition.acknowledge("a", List.of(new AcknowledgementBatch(1, 4, new byte[] {AcknowledgeType.ACCEPT.id(),
                AcknowledgeType.RELEASE.id(), AcknowledgeType.ACCEPT.id(), AcknowledgeType.ACCEPT.id()})));
        SharePartitionSnapshot snapshot = partition.snapshot();

        byte[] encoded = partition.encodedState().value();
        SharePartitionSnapshot decoded = ShareStateSerde.decodeValue(java.nio.ByteBuffer.wrap(encoded));

        assertThat(decoded.entries()).isEqualTo(snapshot.entries());
        assertThat(decoded.startOffset()).isEqualTo(snapshot.startOffset());
        assertThat(decoded.endOffset()).isEqualTo(snapshot.endOffset());
        assertThat(decoded.version()).isEqualTo(snapshot.version() + 1);
        assertThat(ShareStateSerde.valueVersion(encoded)).isEqualTo(decoded.version());
        // offset 0 acquired, 1 accepted, 2 released (available, 1 delivery), 3-4 accepted, 5 acquired: five runs
        assertThat(encoded).hasSize(2 + 24 + 4 + 5 * 15 + 10 + 4); // and no dead-letter copy owed, no hold
    }
}
