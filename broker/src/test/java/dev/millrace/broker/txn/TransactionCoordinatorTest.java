package dev.millrace.broker.txn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.group.ManualClock;
import dev.millrace.broker.log.LogConfig;
import dev.millrace.broker.log.PartitionLog;
import dev.millrace.broker.log.Scheduler;
import dev.millrace.delay.SystemTimer;

/**
 * The transaction coordinator on a controllable clock, over real partition logs for
 * {@code __transaction_state} and a marker writer that records (or fails) what it is asked to write.
 */
@Timeout(30)
class TransactionCoordinatorTest {

    private static final TopicPartition P0 = new TopicPartition("orders", 0);
    private static final TopicPartition P1 = new TopicPartition("orders", 1);
    private static final int TIMEOUT_MS = 60_000;
    private static final long SCAN_MS = 1_000;

    /** One marker set the coordinator wrote. */
    record Markers(long producerId, short epoch, boolean commit, List<TopicPartition> partitions) {
    }

    @TempDir
    Path dir;

    private final ManualClock clock = new ManualClock();
    private final SystemTimer timer = new SystemTimer(1, 20, clock, Runnable::run);
    private final List<Markers> written = new ArrayList<>();
    private final AtomicBoolean markersFail = new AtomicBoolean();
    private final AtomicLong nextProducerId = new AtomicLong(1000);
    private final List<PartitionLog> logs = new ArrayList<>();
    private TransactionCoordinator coordinator;

    @BeforeEach
    void start() throws Exception {
        coordinator = startCoordinator();
    }

    @AfterEach
    void stop() {
        coordinator.close();
        logs.forEach(PartitionLog::close);
        timer.close();
    }

    private TransactionCoordinator startCoordinator() throws Exception {
        logs.forEach(PartitionLog::close);
        logs.clear();
        for (int p = 0; p < 2; p++) {
            logs.add(PartitionLog.open(dir.resolve(TransactionStateTopic.NAME + "-" + p).toFile(),
                    new LogConfig(Map.of()), Time.SYSTEM, Scheduler.IMMEDIATE));
        }
        TransactionStateTopic topic = new TransactionStateTopic() {
            @Override
            public int partitionCount() {
                return logs.size();
            }

            @Override
            public PartitionLog log(int partition) {
                return logs.get(partition);
            }
        };
        TxnMarkerWriter writer = (producerId, epoch, commit, partitions) -> {
            if (markersFail.get()) {
                throw new IllegalStateException("marker partition offline");
            }
            synchronized (written) {
                written.add(new Markers(producerId, epoch, commit, List.copyOf(partitions)));
            }
        };
        TransactionCoordinator c = new TransactionCoordinator(new TransactionCoordinator.Config(900_000, SCAN_MS),
                topic, () -> CompletableFuture.completedFuture(nextProducerId.getAndIncrement()), writer, clock, timer);
        c.load().get(10, TimeUnit.SECONDS);
        return c;
    }

    private static <T> T get(CompletableFuture<T> future) throws Exception {
        return future.get(10, TimeUnit.SECONDS);
    }

    /** Waits until everything queued on the coordinator thread so far has run. */
    private void drain() throws Exception {
        get(coordinator.endTransaction("no-such-id", -5, (short) 0, true));
    }

    /** Lets the coordinator thread run until {@code condition} holds (markers and Complete states take a few hops). */
    private void awaitCondition(String what, BooleanSupplier condition) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("Timed out waiting for " + what);
            }
            drain();
        }
    }

    private void awaitState(String id, TransactionState state) throws Exception {
        awaitCondition(id + " in state " + state, () -> state(id) != null && state(id).state() == state);
    }

    private void advance(long ms) throws Exception {
        clock.advanceMs(ms);
        timer.advanceClock(0);
        drain();
    }

    private TransactionMetadata state(String id) {
        return coordinator.describe(List.of(id)).get(id);
    }

    @Test
    void initGivesANewProducerIdAndEachInitBumpsTheEpochFencingTheOlderProducer() throws Exception {
        TransactionCoordinator.InitResult first = get(coordinator.initProducerId("tx", TIMEOUT_MS, -1, (short) -1));
        assertThat(first).isEqualTo(new TransactionCoordinator.InitResult(Errors.NONE, 1000, (short) 0));
        TransactionCoordinator.InitResult second = get(coordinator.initProducerId("tx", TIMEOUT_MS, -1, (short) -1));
        assertThat(second).isEqualTo(new TransactionCoordinator.InitResult(Errors.NONE, 1000, (short) 1));

        assertThat(get(coordinator.addPartitions("tx", 1000, (short) 0, List.of(P0)))).isEqualTo(Errors.PRODUCER_FENCED);
        assertThat(get(coordinator.addPartitions("tx", 999, (short) 1, List.of(P0))))
                .isEqualTo(Errors.INVALID_PRODUCER_ID_MAPPING);
        assertThat(get(coordinator.addPartitions("unknown", 1000, (short) 1, List.of(P0))))
                .isEqualTo(Errors.INVALID_PRODUCER_ID_MAPPING);
        assertThat(get(coordinator.initProducerId("tx", TIMEOUT_MS, 1000, (short) 0)).error())
                .as("a retry with a stale epoch (KIP-360)").isEqualTo(Errors.PRODUCER_FENCED);
        assertThat(get(coordinator.initProducerId("tx", 0, -1, (short) -1)).error())
                .isEqualTo(Errors.INVALID_TRANSACTION_TIMEOUT);
        assertThat(get(coordinator.initProducerId("tx", 900_001, -1, (short) -1)).error())
                .isEqualTo(Errors.INVALID_TRANSACTION_TIMEOUT);
    }

    @Test
    void commitWritesMarkersToEveryPartitionThenCompletesAndRetriesAreAnsweredTheSame() throws Exception {
        get(coordinator.initProducerId("tx", TIMEOUT_MS, -1, (short) -1));
        assertThat(get(coordinator.addPartitions("tx", 1000, (short) 0, List.of(P0)))).isEqualTo(Errors.NONE);
        assertThat(get(coordinator.addPartitions("tx", 1000, (short) 0, List.of(P1, P0)))).isEqualTo(Errors.NONE);
        assertThat(state("tx").state()).isEqualTo(TransactionState.ONGOING);
        assertThat(coordinator.verifyTransactionalBatch("tx", 1000, (short) 0, P1)).isEqualTo(Errors.NONE);
        assertThat(coordinator.verifyTransactionalBatch("tx", 1000, (short) 0, new TopicPartition("other", 0)))
                .isEqualTo(Errors.INVALID_TXN_STATE);

        assertThat(get(coordinator.endTransaction("tx", 1000, (short) 0, true))).isEqualTo(Errors.NONE);
        assertThat(written).containsExactly(new Markers(1000, (short) 0, true, List.of(P0, P1)));
        assertThat(state("tx").state()).isEqualTo(TransactionState.COMPLETE_COMMIT);
        assertThat(state("tx").partitions()).isEmpty();
        assertThat(coordinator.verifyTransactionalBatch("tx", 1000, (short) 0, P0)).isEqualTo(Errors.INVALID_TXN_STATE);

        assertThat(get(coordinator.endTransaction("tx", 1000, (short) 0, true))).as("a retried commit")
                .isEqualTo(Errors.NONE);
        assertThat(get(coordinator.endTransaction("tx", 1000, (short) 0, false))).as("abort after commit")
                .isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(written).hasSize(1);
    }

    @Test
    void aNewProducerAbortsTheOpenTransactionOfTheOldOneWithABumpedEpoch() throws Exception {
        get(coordinator.initProducerId("tx", TIMEOUT_MS, -1, (short) -1));
        get(coordinator.addPartitions("tx", 1000, (short) 0, List.of(P0)));
        TransactionCoordinator.InitResult successor = get(coordinator.initProducerId("tx", TIMEOUT_MS, -1, (short) -1));
        assertThat(written).containsExactly(new Markers(1000, (short) 1, false, List.of(P0)));
        assertThat(successor.producerEpoch()).isEqualTo((short) 2);
        assertThat(coordinator.verifyTransactionalBatch("tx", 1000, (short) 0, P0)).isEqualTo(Errors.PRODUCER_FENCED);
        assertThat(get(coordinator.endTransaction("tx", 1000, (short) 0, true))).isEqualTo(Errors.PRODUCER_FENCED);
    }

    @Test
    void aTransactionOpenPastItsTimeoutIsAbortedAndItsProducerFenced() throws Exception {
        get(coordinator.initProducerId("tx", TIMEOUT_MS, -1, (short) -1));
        get(coordinator.addPartitions("tx", 1000, (short) 0, List.of(P0)));
        advance(TIMEOUT_MS - 1);
        assertThat(state("tx").state()).as("not yet timed out").isEqualTo(TransactionState.ONGOING);
        advance(2 * SCAN_MS);
        awaitState("tx", TransactionState.COMPLETE_ABORT);
        assertThat(state("tx").producerEpoch()).isEqualTo((short) 1);
        assertThat(written).containsExactly(new Markers(1000, (short) 1, false, List.of(P0)));
        assertThat(get(coordinator.endTransaction("tx", 1000, (short) 0, true))).isEqualTo(Errors.PRODUCER_FENCED);
    }

    @Test
    void aRestartFinishesPreparedTransactionsAndKeepsOpenOnesUntilTheirTimeout() throws Exception {
        get(coordinator.initProducerId("prepared", TIMEOUT_MS, -1, (short) -1));   // pid 1000
        get(coordinator.initProducerId("open", TIMEOUT_MS, -1, (short) -1));       // pid 1001
        get(coordinator.addPartitions("prepared", 1000, (short) 0, List.of(P0, P1)));
        get(coordinator.addPartitions("open", 1001, (short) 0, List.of(P1)));
        markersFail.set(true);
        assertThat(get(coordinator.endTransaction("prepared", 1000, (short) 0, true)))
                .as("the commit is decided once PrepareCommit is in the log").isEqualTo(Errors.NONE);
        assertThat(state("prepared").state()).isEqualTo(TransactionState.PREPARE_COMMIT);
        assertThat(get(coordinator.addPartitions("prepared", 1000, (short) 0, List.of(P0))))
                .isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        assertThat(get(coordinator.addSharePartition("prepared", new TopicPartition("queue", 0))).error())
                .as("a hold for the next transaction waits for this one's markers")
                .isEqualTo(Errors.CONCURRENT_TRANSACTIONS);

        coordinator.close();
        markersFail.set(false);
        coordinator = startCoordinator();

        awaitState("prepared", TransactionState.COMPLETE_COMMIT);
        assertThat(written).containsExactly(new Markers(1000, (short) 0, true, List.of(P0, P1)));
        assertThat(state("prepared").state()).isEqualTo(TransactionState.COMPLETE_COMMIT);
        assertThat(state("open").state()).isEqualTo(TransactionState.ONGOING);
        assertThat(state("open").partitions()).containsExactly(P1);
        advance(TIMEOUT_MS + 2 * SCAN_MS);
        awaitState("open", TransactionState.COMPLETE_ABORT);
        assertThat(written).last().isEqualTo(new Markers(1001, (short) 1, false, List.of(P1)));
        assertThat(get(coordinator.initProducerId("open", TIMEOUT_MS, -1, (short) -1)))
                .as("ids and epochs continue after the restart")
                .isEqualTo(new TransactionCoordinator.InitResult(Errors.NONE, 1001, (short) 2));
    }

    @Test
    void markersThatFailAreRetriedUntilWritten() throws Exception {
        get(coordinator.initProducerId("tx", TIMEOUT_MS, -1, (short) -1));
        get(coordinator.addPartitions("tx", 1000, (short) 0, List.of(P0)));
        markersFail.set(true);
        get(coordinator.endTransaction("tx", 1000, (short) 0, false));
        advance(5_000);
        assertThat(state("tx").state()).isEqualTo(TransactionState.PREPARE_ABORT);
        markersFail.set(false);
        advance(1_000);
        awaitState("tx", TransactionState.COMPLETE_ABORT);
        assertThat(written).containsExactly(new Markers(1000, (short) 0, false, List.of(P0)));
    }

    @Test
    void fencingWhoseAbortMarkersFailAnswersConcurrentTransactionsUntilTheyAreWritten() throws Exception {
        get(coordinator.initProducerId("tx", TIMEOUT_MS, -1, (short) -1));
        get(coordinator.addPartitions("tx", 1000, (short) 0, List.of(P0)));
        markersFail.set(true);
        assertThat(get(coordinator.initProducerId("tx", TIMEOUT_MS, -1, (short) -1)).error())
                .isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        assertThat(state("tx").state()).as("the abort stays prepared, not overwritten").isEqualTo(
                TransactionState.PREPARE_ABORT);
        assertThat(get(coordinator.initProducerId("tx", TIMEOUT_MS, -1, (short) -1)).error())
                .isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        markersFail.set(false);
        advance(1_000);
        awaitState("tx", TransactionState.COMPLETE_ABORT);
        assertThat(written).containsExactly(new Markers(1000, (short) 1, false, List.of(P0)));
        assertThat(get(coordinator.initProducerId("tx", TIMEOUT_MS, -1, (short) -1)))
                .isEqualTo(new TransactionCoordinator.InitResult(Errors.NONE, 1000, (short) 2));
    }

    @Test
    void aCorruptStateRecordFailsTheLoadNamingItsOffsetAndPartition() throws Exception {
        coordinator.close();
        int partition = org.apache.kafka.common.utils.Utils.abs("broken".hashCode()) % 2;
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(256), Compression.NONE,
                TimestampType.CREATE_TIME, 0L);
        builder.append(0L, TxnLogRecordSerde.serializeKey("broken"), new byte[] {0, 0, 1, 2});
        logs.get(partition).appendAsLeader(builder.build(), 0);
        assertThatThrownBy(this::startCoordinator).isInstanceOf(ExecutionException.class)
                .cause().hasMessageContaining("offset 0 of " + TransactionStateTopic.NAME + "-" + partition)
                .hasMessageContaining("truncated");
    }
}
