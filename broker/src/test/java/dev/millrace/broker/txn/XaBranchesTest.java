package dev.millrace.broker.txn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
import dev.millrace.protocol.ext.XaCodes;
import dev.millrace.protocol.ext.XaComplete;
import dev.millrace.protocol.ext.XaPrepare;
import dev.millrace.protocol.ext.XaRecover;
import dev.millrace.protocol.ext.XaXid;

/**
 * XA branches in the transaction coordinator ({@link XaBranches}) on a controllable clock, over real partition logs
 * for {@code __transaction_state} and a marker writer that records (or fails) what it is asked to write: prepare,
 * completion by Xid, the answers of the XaComplete table, restarts, timeouts, retention and InitProducerId after a
 * prepare.
 */
@Timeout(30)
class XaBranchesTest {

    private static final TopicPartition P0 = new TopicPartition("orders", 0);
    private static final TopicPartition P1 = new TopicPartition("orders", 1);
    private static final int TIMEOUT_MS = 60_000;
    private static final long SCAN_MS = 1_000;
    private static final long RETENTION_MS = 3_600_000;
    private static final XaXid XID = xid("order-1", "a");
    private static final XaXid XID2 = xid("order-2", "a");

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

    private static XaXid xid(String gtrid, String bqual) {
        return new XaXid(0x1234, gtrid.getBytes(StandardCharsets.UTF_8), bqual.getBytes(StandardCharsets.UTF_8));
    }

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
        TransactionCoordinator c = new TransactionCoordinator(
                new TransactionCoordinator.Config(900_000, SCAN_MS, RETENTION_MS), topic,
                () -> CompletableFuture.completedFuture(nextProducerId.getAndIncrement()), writer, clock, timer);
        c.load().get(10, TimeUnit.SECONDS);
        return c;
    }

    private static <T> T get(CompletableFuture<T> future) throws Exception {
        return future.get(10, TimeUnit.SECONDS);
    }

    private void drain() throws Exception {
        get(coordinator.endTransaction("no-such-id", -5, (short) 0, true));
    }

    private void awaitCondition(String what, BooleanSupplier condition) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("Timed out waiting for " + what);
            }
            drain();
        }
    }

    private void advance(long ms) throws Exception {
        clock.advanceMs(ms);
        timer.advanceClock(0);
        drain();
    }

    private TransactionMetadata state(String id) {
        return coordinator.describe(List.of(id)).get(id);
    }

    /** A transactional id with an Ongoing transaction on {@code partitions}; returns its producer id. */
    private long ongoing(String id, TopicPartition... partitions) throws Exception {
        TransactionCoordinator.InitResult init = get(coordinator.initProducerId(id, TIMEOUT_MS, -1, (short) -1));
        assertThat(get(coordinator.addPartitions(id, init.producerId(), init.producerEpoch(), List.of(partitions))))
                .isEqualTo(Errors.NONE);
        return init.producerId();
    }

    private XaPrepare.Response prepare(String id, XaXid xid) throws Exception {
        return get(coordinator.xaPrepare(new XaPrepare.Request(id, -1, (short) -1, xid)));
    }

    private XaComplete.Response complete(String id, XaXid xid, XaComplete.Action action) throws Exception {
        return complete(id, xid, action, false);
    }

    private XaComplete.Response complete(String id, XaXid xid, XaComplete.Action action, boolean heuristic)
            throws Exception {
        return get(coordinator.xaComplete(new XaComplete.Request(id, xid, action, heuristic)));
    }

    private List<XaRecover.Branch> recover() {
        XaRecover.Response response = coordinator.xaRecover(null);
        assertThat(response.partitions()).as("a coordinator alone covers every partition").containsExactly(0, 1);
        return response.branches();
    }

    @Test
    void shouldPrepareWithoutMarkersThenCommitByXidWithTheBranchProducer() throws Exception {
        long pid = ongoing("tx", P0, P1);
        XaPrepare.Response prepared = prepare("tx", XID);
        assertThat(prepared).isEqualTo(new XaPrepare.Response((short) 0, null, XaCodes.XA_OK, pid, (short) 0));
        assertThat(written).as("prepare writes no marker").isEmpty();
        assertThat(state("tx").state()).isEqualTo(TransactionState.PREPARED_XA);
        assertThat(recover()).singleElement().satisfies(b -> {
            assertThat(b.xid()).isEqualTo(XID);
            assertThat(b.transactionalId()).isEqualTo("tx");
            assertThat(b.state()).isEqualTo(XaRecover.BranchState.PREPARED);
            assertThat(b.partitionCount()).isEqualTo(2);
        });
        assertThat(prepare("tx", XID).xaCode()).as("a retried prepare").isEqualTo(XaCodes.XA_OK);

        assertThat(complete("tx", XID, XaComplete.Action.COMMIT).xaCode()).isEqualTo(XaCodes.XA_OK);
        assertThat(written).containsExactly(new Markers(pid, (short) 0, true, List.of(P0, P1)));
        assertThat(recover()).singleElement().extracting(XaRecover.Branch::state)
                .isEqualTo(XaRecover.BranchState.COMMITTED);
        assertThat(complete("tx", XID, XaComplete.Action.COMMIT).xaCode()).as("a retried commit")
                .isEqualTo(XaCodes.XA_OK);
        assertThat(complete("tx", XID, XaComplete.Action.ROLLBACK).xaCode()).isEqualTo(XaCodes.XAER_PROTO);
        assertThat(written).hasSize(1);
    }

    @Test
    void shouldAnswerRollbackThenCommitWithRbAndUnknownXidWithNota() throws Exception {
        long pid = ongoing("tx", P0);
        prepare("tx", XID);
        assertThat(complete("tx", XID, XaComplete.Action.ROLLBACK).xaCode()).isEqualTo(XaCodes.XA_OK);
        assertThat(written).containsExactly(new Markers(pid, (short) 0, false, List.of(P0)));
        XaComplete.Response commitAfter = complete("tx", XID, XaComplete.Action.COMMIT);
        assertThat(commitAfter.xaCode()).isEqualTo(XaCodes.XA_RBROLLBACK);
        assertThat(commitAfter.errorMessage()).contains("rolled back");
        assertThat(complete("tx", XID, XaComplete.Action.ROLLBACK).xaCode()).isEqualTo(XaCodes.XA_OK);

        XaComplete.Response unknown = complete("tx", XID2, XaComplete.Action.COMMIT);
        assertThat(unknown.xaCode()).isEqualTo(XaCodes.XAER_NOTA);
        assertThat(unknown.errorCode()).isEqualTo(Errors.TRANSACTIONAL_ID_NOT_FOUND.code());
        assertThat(unknown.errorMessage()).contains(XID2.toString());
        assertThat(complete("tx", XID, XaComplete.Action.FORGET).xaCode()).isEqualTo(XaCodes.XAER_NOTA);
    }

    @Test
    void shouldNotTimeOutAPreparedBranch() throws Exception {
        long pid = ongoing("tx", P0);
        prepare("tx", XID);
        advance(TIMEOUT_MS + 10 * SCAN_MS);
        advance(10 * TIMEOUT_MS);
        assertThat(written).as("no abort marker").isEmpty();
        assertThat(recover()).singleElement().extracting(XaRecover.Branch::state, XaRecover.Branch::ageMs)
                .containsExactly(XaRecover.BranchState.PREPARED, TIMEOUT_MS + 10 * SCAN_MS + 10L * TIMEOUT_MS);
        assertThat(complete("tx", XID, XaComplete.Action.COMMIT).xaCode()).isEqualTo(XaCodes.XA_OK);
        assertThat(written).containsExactly(new Markers(pid, (short) 0, true, List.of(P0)));
    }

    @Test
    void shouldAnswerPrepareOfATimedOutTransactionWithRollback() throws Exception {
        ongoing("tx", P0);
        advance(TIMEOUT_MS + 2 * SCAN_MS);
        awaitCondition("the timeout abort", () -> state("tx").state() == TransactionState.COMPLETE_ABORT);
        XaPrepare.Response late = prepare("tx", XID);
        assertThat(late.xaCode()).isEqualTo(XaCodes.XA_RBROLLBACK);
        assertThat(late.errorMessage()).contains("aborted");
        XaPrepare.Response fenced = get(coordinator.xaPrepare(new XaPrepare.Request("tx", 1000, (short) 0, XID)));
        assertThat(fenced.errorCode()).isEqualTo(Errors.PRODUCER_FENCED.code());
        assertThat(fenced.xaCode()).isEqualTo(XaCodes.XA_RBROLLBACK);
        assertThat(prepare("unknown-id", XID).xaCode()).isEqualTo(XaCodes.XAER_PROTO);
        assertThat(recover()).isEmpty();
    }

    @Test
    void shouldGiveANewProducerIdAfterPrepareAndNeitherFenceNorAbortTheBranch() throws Exception {
        long pid = ongoing("tx", P0);
        prepare("tx", XID);
        assertThat(get(coordinator.addPartitions("tx", pid, (short) 0, List.of(P1))))
                .as("the preparing producer is done").isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(get(coordinator.endTransaction("tx", pid, (short) 0, false)))
                .as("the abort a closing kafka-clients producer sends").isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(coordinator.verifyTransactionalBatch("tx", pid, (short) 0, P0))
                .isEqualTo(Errors.INVALID_TXN_STATE);

        TransactionCoordinator.InitResult next = get(coordinator.initProducerId("tx", TIMEOUT_MS, -1, (short) -1));
        assertThat(next).isEqualTo(new TransactionCoordinator.InitResult(Errors.NONE, pid + 1, (short) 0));
        assertThat(get(coordinator.addPartitions("tx", pid + 1, (short) 0, List.of(P0)))).isEqualTo(Errors.NONE);
        assertThat(prepare("tx", XID).xaCode()).as("the same Xid for another transaction").isEqualTo(
                XaCodes.XAER_DUPID);
        assertThat(prepare("tx", XID2).xaCode()).as("the id's second branch, the first still in doubt")
                .isEqualTo(XaCodes.XA_OK);
        assertThat(written).isEmpty();
        assertThat(recover()).extracting(XaRecover.Branch::xid).containsExactlyInAnyOrder(XID, XID2);

        complete("tx", XID2, XaComplete.Action.ROLLBACK);
        complete("tx", XID, XaComplete.Action.COMMIT);
        assertThat(written).containsExactly(new Markers(pid + 1, (short) 0, false, List.of(P0)),
                new Markers(pid, (short) 0, true, List.of(P0)));
    }

    @Test
    void shouldCommitAPreparedBranchWithItsProducersEndTxnAndLetThatProducerGoOn() throws Exception {
        long pid = ongoing("tx", P0, P1);
        prepare("tx", XID);
        assertThat(get(coordinator.endTransaction("tx", pid, (short) 0, true))).isEqualTo(Errors.NONE);
        assertThat(written).containsExactly(new Markers(pid, (short) 0, true, List.of(P0, P1)));
        assertThat(recover()).singleElement().extracting(XaRecover.Branch::state)
                .isEqualTo(XaRecover.BranchState.COMMITTED);
        assertThat(state("tx").state()).isEqualTo(TransactionState.COMPLETE_COMMIT);
        assertThat(state("tx").producerId()).isEqualTo(pid);
        assertThat(get(coordinator.endTransaction("tx", pid, (short) 0, true))).as("a retried EndTxn")
                .isEqualTo(Errors.NONE);
        assertThat(complete("tx", XID, XaComplete.Action.COMMIT).xaCode()).as("the commit by Xid after it")
                .isEqualTo(XaCodes.XA_OK);

        assertThat(get(coordinator.addPartitions("tx", pid, (short) 0, List.of(P1))))
                .as("the same producer's next transaction").isEqualTo(Errors.NONE);
        assertThat(prepare("tx", XID2).xaCode()).isEqualTo(XaCodes.XA_OK);
        assertThat(get(coordinator.endTransaction("tx", pid, (short) 0, false)))
                .as("the abort a closing producer sends leaves a prepared branch alone")
                .isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(written).hasSize(1);
        assertThat(recover()).filteredOn(b -> b.xid().equals(XID2)).singleElement()
                .extracting(XaRecover.Branch::state).isEqualTo(XaRecover.BranchState.PREPARED);
        assertThat(get(coordinator.endTransaction("tx", pid, (short) 0, true)))
                .as("the second branch of the same producer id and epoch, the first one still remembered")
                .isEqualTo(Errors.NONE);
        assertThat(written).last().isEqualTo(new Markers(pid, (short) 0, true, List.of(P1)));
        assertThat(recover()).extracting(XaRecover.Branch::state).containsOnly(XaRecover.BranchState.COMMITTED);
    }

    @Test
    void shouldFreeTheProducerOfABranchCompletedByXidButNotOfOneCompletedByHand() throws Exception {
        long pid = ongoing("tx", P0);
        prepare("tx", XID);
        assertThat(complete("tx", XID, XaComplete.Action.ROLLBACK).xaCode()).isEqualTo(XaCodes.XA_OK);
        assertThat(state("tx").state()).isEqualTo(TransactionState.COMPLETE_ABORT);
        assertThat(get(coordinator.endTransaction("tx", pid, (short) 0, true)))
                .as("commit of a branch rolled back by Xid").isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(get(coordinator.endTransaction("tx", pid, (short) 0, false)))
                .as("the producer brought in step with the rollback").isEqualTo(Errors.NONE);

        assertThat(get(coordinator.addPartitions("tx", pid, (short) 0, List.of(P0)))).isEqualTo(Errors.NONE);
        prepare("tx", XID2);
        assertThat(complete("tx", XID2, XaComplete.Action.COMMIT, true).xaCode()).isEqualTo(XaCodes.XA_OK);
        assertThat(state("tx").state()).as("completed by hand: the producer stays refused")
                .isEqualTo(TransactionState.PREPARED_XA);
        assertThat(get(coordinator.endTransaction("tx", pid, (short) 0, true))).isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(complete("tx", XID2, XaComplete.Action.COMMIT).xaCode()).as("the XA code comes from XaComplete")
                .isEqualTo(XaCodes.XA_HEURCOM);
    }

    @Test
    void shouldAnswerTheProducersCommitConcurrentWhileMarkersFailThenDone() throws Exception {
        long pid = ongoing("tx", P0);
        prepare("tx", XID);
        markersFail.set(true);
        assertThat(get(coordinator.endTransaction("tx", pid, (short) 0, true)))
                .isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        assertThat(get(coordinator.endTransaction("tx", pid, (short) 0, true))).as("asked again meanwhile")
                .isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        assertThat(state("tx").state()).isEqualTo(TransactionState.PREPARED_XA);
        markersFail.set(false);
        advance(MarkerCompletion.MARKER_RETRY_MS);
        awaitCondition("the retried markers", () -> state("tx").state() == TransactionState.COMPLETE_COMMIT);
        assertThat(written).containsExactly(new Markers(pid, (short) 0, true, List.of(P0)));
        assertThat(get(coordinator.endTransaction("tx", pid, (short) 0, true))).isEqualTo(Errors.NONE);
    }

    @Test
    void shouldKeepPreparedAndCompletingBranchesAcrossARestart() throws Exception {
        long pid1 = ongoing("tx-1", P0);
        long pid2 = ongoing("tx-2", P1);
        prepare("tx-1", XID);
        prepare("tx-2", XID2);
        markersFail.set(true);
        assertThat(complete("tx-2", XID2, XaComplete.Action.COMMIT).xaCode())
                .as("decided once the decision is in the log").isEqualTo(XaCodes.XA_OK);
        XaComplete.Response meanwhile = complete("tx-2", XID2, XaComplete.Action.COMMIT);
        assertThat(meanwhile.xaCode()).isEqualTo(XaCodes.XA_RETRY);
        assertThat(meanwhile.errorCode()).isEqualTo(Errors.CONCURRENT_TRANSACTIONS.code());

        coordinator.close();
        markersFail.set(false);
        coordinator = startCoordinator();

        awaitCondition("the restarted commit", () -> recover().stream().anyMatch(b -> b.xid().equals(XID2)
                && b.state() == XaRecover.BranchState.COMMITTED));
        assertThat(written).containsExactly(new Markers(pid2, (short) 0, true, List.of(P1)));
        assertThat(recover()).filteredOn(b -> b.xid().equals(XID)).singleElement()
                .extracting(XaRecover.Branch::state).isEqualTo(XaRecover.BranchState.PREPARED);
        assertThat(state("tx-1").state()).isEqualTo(TransactionState.PREPARED_XA);
        assertThat(get(coordinator.initProducerId("tx-1", TIMEOUT_MS, -1, (short) -1)).producerId())
                .as("a new producer id after the restart too").isEqualTo(1002);
        assertThat(complete("tx-1", XID, XaComplete.Action.ROLLBACK).xaCode()).isEqualTo(XaCodes.XA_OK);
        assertThat(written).last().isEqualTo(new Markers(pid1, (short) 0, false, List.of(P0)));
        assertThat(state("tx-1").producerId()).as("the id's new producer is left as it is").isEqualTo(1002);
        assertThat(state("tx-1").state()).isEqualTo(TransactionState.EMPTY);
    }

    @Test
    void shouldReportAHeuristicDecisionUntilItIsForgotten() throws Exception {
        ongoing("tx", P0);
        prepare("tx", XID);
        assertThat(complete("tx", XID, XaComplete.Action.FORGET).xaCode()).as("forget of a prepared branch")
                .isEqualTo(XaCodes.XAER_PROTO);
        assertThat(complete("tx", XID, XaComplete.Action.ROLLBACK, true).xaCode()).isEqualTo(XaCodes.XA_OK);
        assertThat(recover()).singleElement().extracting(XaRecover.Branch::state)
                .isEqualTo(XaRecover.BranchState.HEURISTIC_ROLLED_BACK);
        advance(2 * RETENTION_MS);
        assertThat(complete("tx", XID, XaComplete.Action.COMMIT).xaCode()).as("kept past the retention")
                .isEqualTo(XaCodes.XA_HEURRB);
        assertThat(complete("tx", XID, XaComplete.Action.ROLLBACK).xaCode()).isEqualTo(XaCodes.XA_HEURRB);
        assertThat(complete("tx", XID, XaComplete.Action.FORGET).xaCode()).isEqualTo(XaCodes.XA_OK);
        assertThat(recover()).isEmpty();
        assertThat(complete("tx", XID, XaComplete.Action.COMMIT).xaCode()).isEqualTo(XaCodes.XAER_NOTA);
    }

    @Test
    void shouldForgetACompletedBranchAfterTheRetention() throws Exception {
        ongoing("tx", P0);
        prepare("tx", XID);
        complete("tx", XID, XaComplete.Action.COMMIT);
        advance(RETENTION_MS - SCAN_MS);
        assertThat(complete("tx", XID, XaComplete.Action.COMMIT).xaCode()).isEqualTo(XaCodes.XA_OK);
        advance(3 * SCAN_MS);
        awaitCondition("the removal", () -> recover().isEmpty());
        assertThat(complete("tx", XID, XaComplete.Action.COMMIT).xaCode()).isEqualTo(XaCodes.XAER_NOTA);

        coordinator.close();
        coordinator = startCoordinator();
        assertThat(recover()).as("the tombstone is in the log").isEmpty();
    }

    @Test
    void shouldFilterRecoverByTransactionalIdPrefix() throws Exception {
        ongoing("app-1", P0);
        ongoing("other", P1);
        prepare("app-1", XID);
        prepare("other", XID2);
        assertThat(coordinator.xaRecover("app-").branches()).extracting(XaRecover.Branch::xid).containsExactly(XID);
        assertThat(coordinator.xaRecover("").branches()).hasSize(2);
    }

    @Test
    void shouldRoundTripBranchRecordsAndNameACorruptOneAtLoad() throws Exception {
        XaBranch branch = new XaBranch(XID, "tx", 1000, (short) 3, XaBranchState.ROLLING_BACK, true, Set.of(P1, P0),
                5, 6, 7);
        TxnLogRecordSerde.Key key = TxnLogRecordSerde.deserializeAnyKey(ByteBuffer.wrap(
                TxnLogRecordSerde.serializeBranchKey(XID)));
        assertThat(key).isEqualTo(new TxnLogRecordSerde.Key(null, XID));
        assertThat(TxnLogRecordSerde.deserializeBranchValue(XID, ByteBuffer.wrap(
                TxnLogRecordSerde.serializeBranchValue(branch)))).isEqualTo(branch);
        assertThat(TxnLogRecordSerde.deserializeAnyKey(ByteBuffer.wrap(TxnLogRecordSerde.serializeKey("tx"))))
                .isEqualTo(new TxnLogRecordSerde.Key("tx", null));

        coordinator.close();
        int partition = org.apache.kafka.common.utils.Utils.abs("x".hashCode()) % 2;
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(256), Compression.NONE,
                TimestampType.CREATE_TIME, 0L);
        byte[] value = TxnLogRecordSerde.serializeBranchValue(branch);
        value[2 + 2 + 2 + 8 + 2] = 9; // the state
        builder.append(0L, TxnLogRecordSerde.serializeBranchKey(XID), value);
        logs.get(partition).appendAsLeader(builder.build(), 0);
        assertThatThrownBy(this::startCoordinator).isInstanceOf(ExecutionException.class).cause()
                .hasMessageContaining("offset 0 of " + TransactionStateTopic.NAME + "-" + partition)
                .hasMessageContaining("Unknown XA branch state id 9 at byte 16");
    }

    @Test
    void shouldBeginATransactionForAShareAcknowledgementOfAnIdleProducerSoAConsumeOnlyBranchCanBePrepared()
            throws Exception {
        TopicPartition queue = new TopicPartition("queue", 0);
        TransactionCoordinator.InitResult init = get(coordinator.initProducerId("tx", TIMEOUT_MS, -1, (short) -1));
        assertThat(get(coordinator.addSharePartition("tx", queue))).isEqualTo(init);
        assertThat(state("tx").state()).isEqualTo(TransactionState.ONGOING);
        assertThat(state("tx").partitions()).containsExactly(queue);
        assertThat(prepare("tx", XID).xaCode()).isEqualTo(XaCodes.XA_OK);
        assertThat(get(coordinator.addSharePartition("tx", queue)).error()).as("prepared: the producer is done")
                .isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(get(coordinator.addSharePartition("unknown", queue)).error()).isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(complete("tx", XID, XaComplete.Action.COMMIT).xaCode()).isEqualTo(XaCodes.XA_OK);
        assertThat(written).containsExactly(new Markers(init.producerId(), (short) 0, true, List.of(queue)));
    }
}
