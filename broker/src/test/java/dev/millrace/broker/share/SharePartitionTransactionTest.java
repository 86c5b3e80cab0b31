package dev.millrace.broker.share;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.delay.SystemTimer;

/** Records held for a transaction (TxnShareAcknowledge) on a manual clock: only the transaction settles them. */
@Timeout(10)
class SharePartitionTransactionTest {

    private static final SharePartitionKey KEY = new SharePartitionKey("g", Uuid.randomUuid(),
            new TopicPartition("queue", 0));
    private static final long PID = 7;

    private final ManualClock clock = new ManualClock();
    private final SystemTimer timer = new SystemTimer(1, 20, clock, Runnable::run);
    private final InMemoryShareLog log = new InMemoryShareLog();
    private final SharePartition partition = new SharePartition(KEY, log, ShareGroupConfig.defaults()
            .withRecordLockDurationMs(1_000), timer, clock, new SharePartitionListener() {
                @Override
                public void onRecordsAvailable(SharePartitionKey key) {
                }

                @Override
                public void onArchived(DeadLetter deadLetter) {
                }
            }, 0);

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

    @Test
    void heldRecordsOutliveTheirLockAndTheirMemberAndAreAcceptedByTheCommit() throws Exception {
        log.append(4);
        partition.acquire("a", 10, 1 << 20);
        assertThat(partition.holdForTransaction("a", List.of(0L, 1L), PID)).isEqualTo(Errors.NONE);

        advanceMs(5_000); // far past the lock
        partition.releaseMember("a"); // the consumer left
        assertThat(partition.state(0)).contains(RecordState.ACQUIRED);
        assertThat(partition.state(1)).contains(RecordState.ACQUIRED);
        assertThat(partition.state(2)).contains(RecordState.AVAILABLE); // not held: released as usual
        // the member's own acknowledgement of a held record changes nothing and is not an error
        assertThat(partition.acknowledge("a", List.of(new AcknowledgementBatch(0, 0,
                new byte[] {AcknowledgeType.RELEASE.id()})))).isEqualTo(Errors.NONE);
        assertThat(partition.state(0)).contains(RecordState.ACQUIRED);

        partition.completeTransaction(PID + 1, true); // another producer's marker
        assertThat(partition.state(0)).contains(RecordState.ACQUIRED);
        partition.completeTransaction(PID, true);
        assertThat(partition.startOffset()).isEqualTo(2);
        assertThat(partition.state(0)).contains(RecordState.ACKNOWLEDGED);
    }

    @Test
    void anAbortReleasesHeldRecordsForRedeliveryWithTheirCount() {
        log.append(2);
        partition.acquire("a", 10, 1 << 20);
        assertThat(partition.holdForTransaction("a", List.of(0L, 1L), PID)).isEqualTo(Errors.NONE);
        partition.completeTransaction(PID, false);
        assertThat(partition.state(0)).contains(RecordState.AVAILABLE);
        AcquireResult again = partition.acquire("b", 10, 1 << 20);
        assertThat(again.acquired()).containsExactly(new AcquiredBatch(0, 1, 2));
        partition.completeTransaction(PID, true); // a late second call finds nothing
        assertThat(partition.state(0)).contains(RecordState.ACQUIRED);
    }

    @Test
    void theCommitOfTheLastHeldRecordsCancelsTheirLockTimer() {
        log.append(3);
        partition.acquire("a", 10, 1 << 20);
        assertThat(partition.holdForTransaction("a", List.of(0L, 1L), PID)).isEqualTo(Errors.NONE);
        partition.acknowledge("a", List.of(new AcknowledgementBatch(2, 2, new byte[] {AcknowledgeType.ACCEPT.id()})));
        assertThat(timer.size()).isEqualTo(1);

        partition.completeTransaction(PID, true);

        assertThat(timer.size()).isZero();
    }

    @Test
    void holdingIsAllOrNothing() throws Exception {
        log.append(3);
        partition.acquire("a", 2, 1 << 20); // offsets 0 and 1
        assertThat(partition.holdForTransaction("a", List.of(0L, 2L), PID)).isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(partition.holdForTransaction("b", List.of(0L), PID)).isEqualTo(Errors.INVALID_RECORD_STATE);
        advanceMs(5_000); // nothing was held: the locks expire
        assertThat(partition.state(0)).contains(RecordState.AVAILABLE);
        assertThat(partition.state(1)).contains(RecordState.AVAILABLE);
    }
}
