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

    /** What a new leader of the share-partition would load: the state as last saved. */
    private SharePartition restoredElsewhere() {
        SharePartitionSnapshot saved = ShareStateSerde.decodeValue(java.nio.ByteBuffer.wrap(
                partition.encodedState().value()));
        partition.close();
        SharePartition next = new SharePartition(KEY, log, ShareGroupConfig.defaults().withRecordLockDurationMs(1_000),
                timer, clock, new SharePartitionListener() {
                    @Override
                    public void onRecordsAvailable(SharePartitionKey key) {
                    }

                    @Override
                    public void onArchived(DeadLetter deadLetter) {
                    }
                }, 0);
        next.restore(saved);
        next.settleRestore();
        return next;
    }

    /**
     * A hold survives the loss of the share-partition's leader: the new leader keeps the records held (no other member
     * gets them, no lock expires them) until the transaction's marker, written to it, accepts them.
     */
    @Test
    void aHoldSurvivesItsLeaderAndTheCommitMarkerAtTheNewLeaderAcceptsIt() throws Exception {
        log.append(4);
        partition.acquire("a", 10, 1 << 20);
        assertThat(partition.holdForTransaction("a", List.of(0L, 1L), PID)).isEqualTo(Errors.NONE);

        SharePartition next = restoredElsewhere();
        advanceMs(5_000);

        assertThat(next.holdsFor(PID)).isTrue();
        assertThat(next.acquire("b", 10, 1 << 20).acquired()).as("only what was not held")
                .containsExactly(new AcquiredBatch(2, 3, 2));
        next.completeTransaction(PID, true);
        assertThat(next.state(0)).contains(RecordState.ACKNOWLEDGED);
        assertThat(next.state(1)).contains(RecordState.ACKNOWLEDGED);
        assertThat(next.holdsFor(PID)).isFalse();
    }

    /**
     * The old leader appended the commit marker and was lost before it saved the settlement: the new leader finds the
     * marker in the log as it loads the state, and accepts the held records.
     */
    @Test
    void aRestoredHoldWhoseCommitMarkerIsInTheLogAlreadyIsAcceptedAsTheStateLoads() {
        log.append(4);
        partition.acquire("a", 10, 1 << 20);
        assertThat(partition.holdForTransaction("a", List.of(0L, 1L), PID)).isEqualTo(Errors.NONE);
        log.append(2); // other records written after the hold
        log.appendMarker(PID + 1, false); // another producer's marker: not ours
        log.appendMarker(PID, true);

        SharePartition next = restoredElsewhere();

        assertThat(next.state(0)).contains(RecordState.ACKNOWLEDGED);
        assertThat(next.state(1)).contains(RecordState.ACKNOWLEDGED);
        assertThat(next.holdsFor(PID)).isFalse();
    }

    /** The same with an abort marker: the held records are released, their delivery counted, for anyone. */
    @Test
    void aRestoredHoldWhoseAbortMarkerIsInTheLogAlreadyIsReleasedAsTheStateLoads() throws Exception {
        log.append(4);
        partition.acquire("a", 10, 1 << 20);
        assertThat(partition.holdForTransaction("a", List.of(0L, 1L), PID)).isEqualTo(Errors.NONE);
        log.appendMarker(PID, false);

        SharePartition next = restoredElsewhere();
        advanceMs(60_000); // past any redelivery backoff

        assertThat(next.state(0)).contains(RecordState.AVAILABLE);
        assertThat(next.deliveryCount(0)).isEqualTo(1);
        assertThat(next.acquire("b", 2, 1 << 20).acquired()).containsExactly(new AcquiredBatch(0, 1, 2));
    }
}
