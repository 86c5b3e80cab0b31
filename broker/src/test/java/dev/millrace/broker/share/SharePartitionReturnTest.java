package dev.millrace.broker.share;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.delay.SystemTimer;

/**
 * {@link SharePartition#returnAcquired} (ShareSettle RETURN) on a manual clock: records read ahead and given back are
 * available again at once, as if that acquisition had not happened.
 */
@Timeout(10)
class SharePartitionReturnTest {

    private static final SharePartitionKey KEY = new SharePartitionKey("g", Uuid.randomUuid(),
            new TopicPartition("queue", 0));
    private static final long PID = 7;

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
            // run everything due
        }
    }

    private static List<AcknowledgementBatch> ack(long first, long last, AcknowledgeType type) {
        return List.of(new AcknowledgementBatch(first, last, new byte[] {type.id()}));
    }

    @Test
    void shouldMakeRecordsAvailableAtOnceWithTheirEarlierDeliveryCountWhenReturned() {
        log.append(3);
        // a release would hold the records back for 10 s; a return must not
        SharePartition partition = partition(ShareGroupConfig.defaults().withRedeliveryBackoff(10_000, 10_000));
        assertThat(partition.acquire("a", 10, 1 << 20).acquired()).containsExactly(new AcquiredBatch(0, 2, 1));
        int signals = availableSignals.get();

        assertThat(partition.returnAcquired("a", 0, 2)).isEqualTo(Errors.NONE);

        assertThat(partition.state(0)).contains(RecordState.AVAILABLE);
        assertThat(partition.deliveryCount(0)).isZero();
        assertThat(availableSignals.get()).as("waiting fetches are told").isGreaterThan(signals);
        assertThat(timer.size()).as("the acquisition's lock timer is cancelled").isZero();
        assertThat(partition.pendingLockTimeouts()).isZero();
        assertThat(partition.acquire("b", 10, 1 << 20).acquired()).containsExactly(new AcquiredBatch(0, 2, 1));
    }

    @Test
    void shouldLowerTheDeliveryCountByOneAcquisitionWhenAReleasedRecordIsReturned() {
        log.append(1);
        SharePartition partition = partition(ShareGroupConfig.defaults());
        partition.acquire("a", 10, 1 << 20);
        partition.acknowledge("a", ack(0, 0, AcknowledgeType.RELEASE)); // delivered once, given back
        assertThat(partition.acquire("b", 10, 1 << 20).acquired()).containsExactly(new AcquiredBatch(0, 0, 2));

        assertThat(partition.returnAcquired("b", 0, 0)).isEqualTo(Errors.NONE);

        assertThat(partition.deliveryCount(0)).isEqualTo(1);
        assertThat(partition.acquire("c", 10, 1 << 20).acquired()).containsExactly(new AcquiredBatch(0, 0, 2));
    }

    @Test
    void shouldNeverDeadLetterWhenRecordsAreReturnedAtTheDeliveryLimit() throws Exception {
        log.append(2);
        SharePartition partition = partition(ShareGroupConfig.defaults().withDeliveryCountLimit(1)
                .withRecordLockDurationMs(1_000));

        for (int round = 0; round < 3; round++) {
            assertThat(partition.acquire("a", 10, 1 << 20).acquired()).containsExactly(new AcquiredBatch(0, 1, 1));
            assertThat(partition.returnAcquired("a", 0, 1)).isEqualTo(Errors.NONE);
        }
        advanceMs(5_000); // past every returned acquisition's lock: nothing expires, nothing is archived

        assertThat(deadLetters).isEmpty();
        assertThat(partition.state(0)).contains(RecordState.AVAILABLE);
        assertThat(partition.startOffset()).isZero();
        assertThat(partition.acquire("b", 10, 1 << 20).acquired()).containsExactly(new AcquiredBatch(0, 1, 1));
        // the limit still applies to a real delivery
        partition.acknowledge("b", ack(0, 0, AcknowledgeType.RELEASE));
        assertThat(deadLetters).containsExactly(new DeadLetter(KEY, 0, 1, DeadLetter.REASON_DELIVERY_LIMIT));
    }

    @Test
    void shouldSkipOffsetsTheMemberDoesNotHoldAndReportInvalidRecordStateWhenReturning() {
        log.append(5);
        SharePartition partition = partition(ShareGroupConfig.defaults());
        partition.acquire("a", 2, 1 << 20); // 0, 1
        partition.acquire("b", 2, 1 << 20); // 2, 3; 4 never delivered

        // a's own offsets, b's, a never-delivered one and some past the end
        assertThat(partition.returnAcquired("a", 0, 9)).isEqualTo(Errors.INVALID_RECORD_STATE);

        assertThat(partition.state(0)).contains(RecordState.AVAILABLE);
        assertThat(partition.state(1)).contains(RecordState.AVAILABLE);
        assertThat(partition.state(2)).contains(RecordState.ACQUIRED);
        assertThat(partition.deliveryCount(2)).isEqualTo(1);
        assertThat(partition.returnAcquired("stranger", 2, 3)).isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(partition.acknowledge("b", ack(2, 3, AcknowledgeType.ACCEPT))).isEqualTo(Errors.NONE);
        // settled records are not the member's any more either
        partition.acquire("a", 1, 1 << 20);
        partition.acknowledge("a", ack(0, 0, AcknowledgeType.ACCEPT));
        assertThat(partition.returnAcquired("a", 0, 0)).isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(partition.state(0)).contains(RecordState.ACKNOWLEDGED);
        assertThat(partition.acquire("c", 10, 1 << 20).acquired()).containsExactly(new AcquiredBatch(1, 1, 1),
                new AcquiredBatch(4, 4, 1));
    }

    /** Runs in a thread of its own, so that a loop over every offset of the range fails the test instead of hanging. */
    @Test
    @Timeout(value = 10, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void shouldAnswerAtOnceWhenAReturnedRangeReachesFarBeyondTheEndOffset() {
        log.append(3);
        SharePartition partition = partition(ShareGroupConfig.defaults());
        partition.acquire("a", 2, 1 << 20); // 0, 1
        partition.acquire("b", 1, 1 << 20); // 2

        assertThat(partition.returnAcquired("a", 0, Long.MAX_VALUE)).isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(partition.returnAcquired("b", 2, Long.MAX_VALUE - 1)).isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(partition.returnAcquired("b", 1L << 40, 1L << 41)).isEqualTo(Errors.INVALID_RECORD_STATE);

        assertThat(partition.acquire("c", 10, 1 << 20).acquired()).containsExactly(new AcquiredBatch(0, 2, 1));
        // offsets below the start offset are not visited one by one either
        partition.acknowledge("c", ack(0, 2, AcknowledgeType.ACCEPT));
        assertThat(partition.startOffset()).isEqualTo(3);
        assertThat(partition.returnAcquired("c", 0, 2)).isEqualTo(Errors.INVALID_RECORD_STATE);
    }

    @Test
    void shouldLeaveRecordsHeldForATransactionWhenReturned() {
        log.append(3);
        SharePartition partition = partition(ShareGroupConfig.defaults());
        partition.acquire("a", 10, 1 << 20);
        assertThat(partition.holdForTransaction("a", List.of(0L, 1L), PID)).isEqualTo(Errors.NONE);

        assertThat(partition.returnAcquired("a", 0, 2)).isEqualTo(Errors.INVALID_RECORD_STATE);

        assertThat(partition.state(0)).contains(RecordState.ACQUIRED);
        assertThat(partition.state(1)).contains(RecordState.ACQUIRED);
        assertThat(partition.state(2)).contains(RecordState.AVAILABLE);
        assertThat(partition.acquire("b", 10, 1 << 20).acquired()).containsExactly(new AcquiredBatch(2, 2, 1));
        partition.completeTransaction(PID, true);
        assertThat(partition.startOffset()).isEqualTo(2);
    }
}
