package dev.millrace.broker.txn;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.coordinator.ReplicationAwaiter;
import dev.millrace.broker.group.ManualClock;
import dev.millrace.broker.log.LogConfig;
import dev.millrace.broker.log.PartitionLog;
import dev.millrace.broker.log.Scheduler;
import dev.millrace.delay.SystemTimer;

/**
 * The transaction coordinator handing a {@code __transaction_state} partition over: two coordinators over one set of
 * partition logs (as a replica that becomes leader has the same log), leadership given and taken with
 * {@code onElected}/{@code onResigned} and a leader epoch per partition, markers recorded (or failed), and the wait for
 * the in-sync replicas controlled by the test.
 */
@Timeout(30)
class TransactionCoordinatorHandOverTest {

    private static final TopicPartition P0 = new TopicPartition("orders", 0);
    private static final TopicPartition P1 = new TopicPartition("orders", 1);
    private static final TopicPartition OFFSETS = new TopicPartition("__consumer_offsets", 3);
    private static final int TIMEOUT_MS = 60_000;
    /** Transactional ids chosen to share one of the two partitions. */
    private static final String A = "tx-a";

    /** One marker set a coordinator wrote. */
    record Markers(long producerId, short epoch, int coordinatorEpoch, boolean commit,
                   List<TopicPartition> partitions) {
    }

    @TempDir
    Path dir;

    private final ManualClock clock = new ManualClock();
    private final SystemTimer timer = new SystemTimer(1, 20, clock, Runnable::run);
    private final List<Markers> written = new ArrayList<>();
    private final AtomicBoolean markersFail = new AtomicBoolean();
    private final AtomicLong nextProducerId = new AtomicLong(1000);
    private final List<PartitionLog> logs = new ArrayList<>();
    /** The current leader epoch of each partition; absent: not led by "this broker" (the coordinator asking). */
    private final Map<Integer, Integer> epochs = new ConcurrentHashMap<>();
    /** When set, loading a partition waits for it. */
    private volatile CountDownLatch loadGate;
    /** When set, the wait for the in-sync replicas returns it (instead of completing at once). */
    private volatile CompletableFuture<Void> replicas;
    private final List<TransactionCoordinator> coordinators = new ArrayList<>();

    @BeforeEach
    void openLogs() throws Exception {
        for (int p = 0; p < 2; p++) {
            logs.add(PartitionLog.open(dir.resolve(TransactionStateTopic.NAME + "-" + p).toFile(),
                    new LogConfig(Map.of()), Time.SYSTEM, Scheduler.IMMEDIATE));
        }
    }

    @AfterEach
    void close() {
        coordinators.forEach(TransactionCoordinator::close);
        logs.forEach(PartitionLog::close);
        timer.close();
    }

    private TransactionCoordinator newCoordinator() {
        TransactionStateTopic topic = new TransactionStateTopic() {
            @Override
            public int partitionCount() {
                return logs.size();
            }

            @Override
            public PartitionLog log(int partition) {
                CountDownLatch gate = loadGate;
                if (gate != null) {
                    try {
                        gate.await(20, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return logs.get(partition);
            }

            @Override
            public int leaderEpoch(int partition) {
                Integer epoch = epochs.get(partition);
                if (epoch == null) {
                    throw new NotLeaderOrFollowerException("not the leader of " + partition);
                }
                return epoch;
            }
        };
        TxnMarkerWriter writer = new TxnMarkerWriter() {
            @Override
            public void writeMarkers(long producerId, short epoch, boolean commit,
                                     java.util.Collection<TopicPartition> partitions) {
                throw new UnsupportedOperationException("the coordinator writes with its epoch");
            }

            @Override
            public CompletableFuture<Void> writeMarkers(long producerId, short epoch, int coordinatorEpoch,
                                                        boolean commit, java.util.Collection<TopicPartition> parts) {
                if (markersFail.get()) {
                    return CompletableFuture.failedFuture(new IllegalStateException("leader of the partition lost"));
                }
                synchronized (written) {
                    written.add(new Markers(producerId, epoch, coordinatorEpoch, commit, List.copyOf(parts)));
                }
                return CompletableFuture.completedFuture(null);
            }
        };
        ReplicationAwaiter awaiter = partition -> {
            CompletableFuture<Void> gate = replicas;
            return gate == null ? CompletableFuture.completedFuture(null) : gate;
        };
        TransactionCoordinator c = new TransactionCoordinator(new TransactionCoordinator.Config(900_000, 1_000),
                topic, () -> CompletableFuture.completedFuture(nextProducerId.getAndIncrement()), writer, awaiter,
                clock, timer);
        coordinators.add(c);
        return c;
    }

    private int partitionOf(String id) {
        return org.apache.kafka.common.utils.Utils.abs(id.hashCode()) % logs.size();
    }

    private static <T> T get(CompletableFuture<T> future) throws Exception {
        return future.get(10, TimeUnit.SECONDS);
    }

    /** Lets {@code c}'s thread run until {@code condition} holds; {@code c} must lead the partition of {@link #A}. */
    private void awaitCondition(String what, TransactionCoordinator c, BooleanSupplier condition) throws Exception {
        String probe = idOnPartitionOf(A, "probe");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("Timed out waiting for " + what);
            }
            get(c.endTransaction(probe, -5, (short) 0, true)); // a round trip through the coordinator thread
        }
    }

    /** Elects {@code c} for {@code partition} in {@code epoch} and waits for the load. */
    private void elect(TransactionCoordinator c, int partition, int epoch) throws Exception {
        epochs.put(partition, epoch);
        c.onElected(partition, epoch);
        get(c.whenLoaded(partition));
    }

    private TransactionMetadata state(TransactionCoordinator c, String id) {
        return c.describe(List.of(id)).get(id);
    }

    @Test
    void shouldLoadTheSameStateOnTheNewLeaderAndFinishItsPreparedCommitWithItsOwnEpoch() throws Exception {
        // three ids on one partition: one open, one committed, one whose commit was acknowledged but whose markers
        // never made it (its coordinator died)
        String open = A;
        String done = idOnPartitionOf(A, "done");
        String prepared = idOnPartitionOf(A, "prepared");
        int p = partitionOf(A);
        TransactionCoordinator old = newCoordinator();
        elect(old, p, 4);
        long openPid = get(old.initProducerId(open, TIMEOUT_MS, -1, (short) -1)).producerId();
        long donePid = get(old.initProducerId(done, TIMEOUT_MS, -1, (short) -1)).producerId();
        long preparedPid = get(old.initProducerId(prepared, TIMEOUT_MS, -1, (short) -1)).producerId();
        get(old.addPartitions(open, openPid, (short) 0, List.of(P0, OFFSETS)));
        get(old.addPartitions(done, donePid, (short) 0, List.of(P1)));
        assertThat(get(old.endTransaction(done, donePid, (short) 0, true))).isEqualTo(Errors.NONE);
        get(old.addPartitions(prepared, preparedPid, (short) 0, List.of(P0, P1, OFFSETS)));
        markersFail.set(true);
        assertThat(get(old.endTransaction(prepared, preparedPid, (short) 0, true)))
                .as("acknowledged: PrepareCommit is on the replicas").isEqualTo(Errors.NONE);
        Map<String, TransactionMetadata> before = old.describe(List.of(open, done, prepared));
        assertThat(before.get(prepared).state()).isEqualTo(TransactionState.PREPARE_COMMIT);

        old.onResigned(p, 4);
        epochs.put(p, 5);
        markersFail.set(false);
        written.clear();
        TransactionCoordinator successor = newCoordinator();
        elect(successor, p, 5);

        assertThat(successor.describe(List.of(open, done))).as("the state loaded from the log")
                .isEqualTo(Map.of(open, before.get(open), done, before.get(done)));
        awaitCondition("the prepared commit completed", successor,
                () -> state(successor, prepared).state() == TransactionState.COMPLETE_COMMIT);
        assertThat(written).as("markers on every partition of the transaction, with the new coordinator epoch")
                .containsExactly(new Markers(preparedPid, (short) 0, 5, true, List.of(OFFSETS, P0, P1)));
        assertThat(state(successor, open).state()).as("an open transaction stays open until its timeout")
                .isEqualTo(TransactionState.ONGOING);

        // the producer of the open transaction carries on with the new coordinator
        assertThat(get(successor.endTransaction(open, openPid, (short) 0, false))).isEqualTo(Errors.NONE);
        assertThat(written).last().isEqualTo(new Markers(openPid, (short) 0, 5, false, List.of(OFFSETS, P0)));
    }

    @Test
    void shouldAnswerNotCoordinatorAtOnceAfterResigningAndForPartitionsLedElsewhere() throws Exception {
        int p = partitionOf(A);
        TransactionCoordinator old = newCoordinator();
        elect(old, p, 1);
        long pid = get(old.initProducerId(A, TIMEOUT_MS, -1, (short) -1)).producerId();
        get(old.addPartitions(A, pid, (short) 0, List.of(P0)));
        assertThat(old.verifyTransactionalBatch(A, pid, (short) 0, P1)).isEqualTo(Errors.INVALID_TXN_STATE);

        old.onResigned(p, 1);

        assertThat(old.addPartitions(A, pid, (short) 0, List.of(P1))).as("answered on the calling thread")
                .isCompletedWithValue(Errors.NOT_COORDINATOR);
        assertThat(get(old.endTransaction(A, pid, (short) 0, true))).isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(get(old.initProducerId(A, TIMEOUT_MS, -1, (short) -1)).error()).isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(old.describe(List.of(A))).as("its state is dropped").isEmpty();
        assertThat(old.coordinatorError(A)).isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(old.verifyTransactionalBatch(A, pid, (short) 0, P1))
                .as("a verification asked of a former coordinator").isEqualTo(Errors.NOT_COORDINATOR);
        String other = idOnOtherPartition(A);
        assertThat(get(old.initProducerId(other, TIMEOUT_MS, -1, (short) -1)).error())
                .as("a partition never led here").isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(written).isEmpty();
    }

    @Test
    void shouldRefuseToWriteOnceTheLeaderEpochMovedEvenBeforeTheResignationArrives() throws Exception {
        int p = partitionOf(A);
        TransactionCoordinator old = newCoordinator();
        elect(old, p, 1);
        long pid = get(old.initProducerId(A, TIMEOUT_MS, -1, (short) -1)).producerId();
        long end = logs.get(p).logEndOffset();

        epochs.put(p, 2); // another broker leads in epoch 2; the metadata event has not reached the coordinator yet

        assertThat(get(old.addPartitions(A, pid, (short) 0, List.of(P0)))).isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(get(old.initProducerId(A, TIMEOUT_MS, -1, (short) -1)).error()).isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(logs.get(p).logEndOffset()).as("nothing appended in the old epoch").isEqualTo(end);
    }

    @Test
    void shouldAnswerLoadInProgressWhileThePartitionLoads() throws Exception {
        int p = partitionOf(A);
        TransactionCoordinator c = newCoordinator();
        loadGate = new CountDownLatch(1);
        epochs.put(p, 3);
        c.onElected(p, 3);

        assertThat(c.initProducerId(A, TIMEOUT_MS, -1, (short) -1)).isCompletedWithValue(
                new TransactionCoordinator.InitResult(Errors.COORDINATOR_LOAD_IN_PROGRESS, -1, (short) -1));
        assertThat(c.verifyTransactionalBatch(A, 1000, (short) 0, P0)).isEqualTo(Errors.COORDINATOR_LOAD_IN_PROGRESS);
        assertThat(c.coordinatorError(A)).isEqualTo(Errors.COORDINATOR_LOAD_IN_PROGRESS);

        loadGate.countDown();
        get(c.whenLoaded(p));
        assertThat(get(c.initProducerId(A, TIMEOUT_MS, -1, (short) -1)).error()).isEqualTo(Errors.NONE);
    }

    @Test
    void shouldAnswerOnlyOnceTheAppendIsOnTheReplicasAndWriteNoMarkerBeforeThePrepareIs() throws Exception {
        int p = partitionOf(A);
        TransactionCoordinator c = newCoordinator();
        elect(c, p, 1);
        long pid = get(c.initProducerId(A, TIMEOUT_MS, -1, (short) -1)).producerId();

        CompletableFuture<Void> addReplicated = new CompletableFuture<>();
        replicas = addReplicated;
        CompletableFuture<Errors> added = c.addPartitions(A, pid, (short) 0, List.of(P0));
        awaitCondition("AddPartitions appended", c, () -> state(c, A).state() == TransactionState.ONGOING);
        assertThat(added).as("not answered before the ISR has the append").isNotDone();
        addReplicated.complete(null);
        assertThat(get(added)).isEqualTo(Errors.NONE);

        CompletableFuture<Void> prepareReplicated = new CompletableFuture<>();
        replicas = prepareReplicated;
        CompletableFuture<Errors> committed = c.endTransaction(A, pid, (short) 0, true);
        awaitCondition("PrepareCommit appended", c, () -> state(c, A).state() == TransactionState.PREPARE_COMMIT);
        assertThat(committed).isNotDone();
        assertThat(written).as("no marker before PrepareCommit is on the replicas").isEmpty();

        // the leader is lost before the replicas had it: the client hears NOT_COORDINATOR and no marker is written
        c.onResigned(p, 1);
        prepareReplicated.completeExceptionally(new NotCoordinatorException("lost the leadership"));
        assertThat(get(committed)).isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(written).isEmpty();
    }

    @Test
    void shouldFenceAZombieAcrossFailoverWhenTheNewProducerInitialisesOnTheNewCoordinator() throws Exception {
        int p = partitionOf(A);
        TransactionCoordinator old = newCoordinator();
        elect(old, p, 1);
        long pid = get(old.initProducerId(A, TIMEOUT_MS, -1, (short) -1)).producerId();
        get(old.addPartitions(A, pid, (short) 0, List.of(P0, P1)));
        old.onResigned(p, 1);
        epochs.put(p, 2);
        TransactionCoordinator successor = newCoordinator();
        elect(successor, p, 2);

        TransactionCoordinator.InitResult init = get(successor.initProducerId(A, TIMEOUT_MS, -1, (short) -1));

        assertThat(init).isEqualTo(new TransactionCoordinator.InitResult(Errors.NONE, pid, (short) 2));
        assertThat(written).as("the zombie's transaction aborted with a bumped epoch on all its partitions")
                .containsExactly(new Markers(pid, (short) 1, 2, false, List.of(P0, P1)));
        assertThat(get(successor.addPartitions(A, pid, (short) 0, List.of(P0)))).isEqualTo(Errors.PRODUCER_FENCED);
        assertThat(successor.verifyTransactionalBatch(A, pid, (short) 0, P0)).isEqualTo(Errors.PRODUCER_FENCED);
        assertThat(get(old.endTransaction(A, pid, (short) 0, true))).isEqualTo(Errors.NOT_COORDINATOR);
    }

    /** A transactional id in the same partition as {@code id}. */
    private String idOnPartitionOf(String id, String prefix) {
        for (int i = 0; ; i++) {
            String candidate = prefix + "-" + i;
            if (partitionOf(candidate) == partitionOf(id)) {
                return candidate;
            }
        }
    }

    private String idOnOtherPartition(String id) {
        for (int i = 0; ; i++) {
            String candidate = "other-" + i;
            if (partitionOf(candidate) != partitionOf(id)) {
                return candidate;
            }
        }
    }
}
