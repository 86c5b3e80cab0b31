package dev.millrace.broker.delay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;

import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.group.ManualClock;
import dev.millrace.broker.log.AppendOrigin;
import dev.millrace.broker.log.LogConfig;
import dev.millrace.broker.log.PartitionLog;
import dev.millrace.broker.log.Scheduler;
import dev.millrace.broker.txn.TransactionCoordinator;
import dev.millrace.broker.txn.TransactionStateTopic;
import dev.millrace.broker.txn.TxnMarkerWriter;
import dev.millrace.delay.SystemTimer;
import dev.millrace.protocol.delay.DelayedDelivery;

/**
 * The delay service on a controllable clock, over real partition logs (two delay partitions, targets
 * {@code a} with two partitions and {@code b} with one) and a real transaction coordinator whose
 * markers are local appends. Each commit's partitions are recorded, so a test sees what one delivery
 * round carried.
 */
@Timeout(30)
class DelayedDeliveryServiceTest {

    private static final TopicPartition D0 = new TopicPartition(DelayedDelivery.TOPIC, 0);
    private static final TopicPartition D1 = new TopicPartition(DelayedDelivery.TOPIC, 1);
    private static final TopicPartition A0 = new TopicPartition("a", 0);
    private static final TopicPartition A1 = new TopicPartition("a", 1);
    private static final TopicPartition B0 = new TopicPartition("b", 0);

    @TempDir
    Path dir;

    private final ManualClock clock = new ManualClock();
    private final SystemTimer timer = new SystemTimer(1, 20, clock, Runnable::run);
    private final Map<TopicPartition, PartitionLog> logs = new LinkedHashMap<>();
    private final List<Set<TopicPartition>> commits = new ArrayList<>();
    private final AtomicLong nextProducerId = new AtomicLong(5000);
    private PartitionLog txnLog;
    private TransactionCoordinator coordinator;
    private volatile DelayedDeliveryService service;
    /** Every running service (the test's other brokers included): appends and markers are told to each. */
    private final List<DelayedDeliveryService> services = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        for (TopicPartition tp : List.of(D0, D1, A0, A1, B0)) {
            logs.put(tp, open(tp.toString()));
        }
        txnLog = open(TransactionStateTopic.NAME + "-0");
        TransactionStateTopic topic = new TransactionStateTopic() {
            @Override
            public int partitionCount() {
                return 1;
            }

            @Override
            public PartitionLog log(int partition) {
                return txnLog;
            }
        };
        TxnMarkerWriter markers = (producerId, epoch, commit, partitions) -> {
            EndTransactionMarker marker = new EndTransactionMarker(commit ? ControlRecordType.COMMIT
                    : ControlRecordType.ABORT, 0);
            for (TopicPartition tp : partitions) {
                logs.get(tp).appendAsLeader(MemoryRecords.withEndTransactionMarker(clock.milliseconds(), producerId,
                        epoch, marker), 0, AppendOrigin.COORDINATOR);
                services.forEach(s -> s.onAppend(tp));
            }
            if (commit) {
                synchronized (commits) {
                    commits.add(Set.copyOf(partitions));
                }
            }
        };
        coordinator = new TransactionCoordinator(new TransactionCoordinator.Config(900_000, 60_000), topic,
                () -> CompletableFuture.completedFuture(nextProducerId.getAndIncrement()), markers, clock, timer);
        coordinator.load().get(10, TimeUnit.SECONDS);
        service = startService();
    }

    @AfterEach
    void stop() {
        services.forEach(DelayedDeliveryService::close);
        coordinator.close();
        timer.close();
        logs.values().forEach(PartitionLog::close);
        txnLog.close();
    }

    private PartitionLog open(String name) throws Exception {
        return PartitionLog.open(dir.resolve(name).toFile(), new LogConfig(Map.of()), Time.SYSTEM, Scheduler.IMMEDIATE);
    }

    private DelayedDeliveryService startService() throws Exception {
        DelayedDeliveryService s = newService(DelayedDeliveryService.TRANSACTIONAL_ID, "checkpoints");
        s.start();
        s.onElected(0, 0);
        s.onElected(1, 0);
        return s;
    }

    /**
     * A service as another broker would run it: its own transactional id and checkpoint directory,
     * over the same logs and transaction coordinator; it serves no partition until elected.
     */
    private DelayedDeliveryService newService(String transactionalId, String checkpoints) {
        return newService(transactionalId, checkpoints, UnaryOperator.identity());
    }

    /** {@link #newService(String, String)} with its round writer wrapped by {@code wrap}. */
    private DelayedDeliveryService newService(String transactionalId, String checkpoints,
                                              UnaryOperator<RoundWriter> wrap) {
        DelayLogs delayLogs = new DelayLogs() {
            @Override
            public int partitionCount(String topic) {
                return (int) logs.keySet().stream().filter(tp -> tp.topic().equals(topic)).count();
            }

            @Override
            public Optional<PartitionLog> log(TopicPartition tp) {
                return Optional.ofNullable(logs.get(tp));
            }

            @Override
            public int leaderEpoch(TopicPartition tp) {
                return 0;
            }
        };
        DelayedDeliveryService.Config config = new DelayedDeliveryService.Config(2, 3_600_000, 60_000,
                dir.resolve(checkpoints).toFile(), 1 << 20);
        DelayedDeliveryService s = new DelayedDeliveryService(config, delayLogs, wrap.apply(new LocalRoundWriter(
                coordinator, delayLogs, transactionalId, config.transactionTimeoutMs(), List.of())), timer, clock);
        services.add(s);
        return s;
    }

    /** Appends one delayed record to a delay partition, as a producer would, and tells the service. */
    /** Appends a delayed record and waits until the service has indexed it (and set its wake-up). */
    private void delay(TopicPartition delayPartition, TopicPartition target, String value, long dueMs)
            throws Exception {
        Header[] headers = {
            new RecordHeader(DelayedDelivery.TARGET_TOPIC, target.topic().getBytes(StandardCharsets.UTF_8)),
            new RecordHeader(DelayedDelivery.TARGET_PARTITION, DelayedDelivery.encodeInt(target.partition())),
            new RecordHeader(DelayedDelivery.DUE_MS, DelayedDelivery.encodeLong(dueMs))};
        logs.get(delayPartition).appendAsLeader(MemoryRecords.withRecords(Compression.NONE,
                new SimpleRecord(clock.milliseconds(), null, value.getBytes(StandardCharsets.UTF_8), headers)), 0);
        services.forEach(s -> s.onAppend(delayPartition));
        // without this, a scan still queued when the test moves the clock sets a wake-up that is already due, and
        // the round it starts runs after advance()'s wait: the test would read the targets mid-round
        service.pendingCount();
    }

    /** Moves the clock, fires what is due, and waits until the service has done what that queued. */
    private void advance(long ms) throws Exception {
        clock.advanceMs(ms);
        timer.advanceClock(0);
        for (DelayedDeliveryService s : services) {
            s.pendingCount();
        }
    }

    /** The copies in a target: value and the delivery time stamped on them. */
    private Map<String, Long> delivered(TopicPartition target) {
        Map<String, Long> out = new LinkedHashMap<>();
        PartitionLog log = logs.get(target);
        for (RecordBatch batch : log.read(0, 1 << 20, true).records().batches()) {
            if (batch.isControlBatch()) {
                continue;
            }
            for (Record record : batch) {
                long deliveredMs = 0;
                for (Header header : record.headers()) {
                    if (header.key().equals(DelayedDelivery.DELIVERED_MS)) {
                        deliveredMs = DelayedDelivery.longValue(header.value(), DelayedDelivery.DELIVERED_MS);
                    }
                }
                String value = new String(Utils.toArray(record.value()), StandardCharsets.UTF_8);
                assertThat(out.put(value, deliveredMs)).as("%s delivered once", value).isNull();
            }
        }
        return out;
    }

    private List<Set<TopicPartition>> commits() {
        synchronized (commits) {
            return List.copyOf(commits);
        }
    }

    @Test
    void shouldDeliverTheDueRecordsOfSeveralPartitionsAndTargetsInOneRoundWhenTheyFallDueTogether() throws Exception {
        long due = clock.milliseconds() + 100;
        delay(D0, A0, "d0-a0", due);
        delay(D0, B0, "d0-b0", due);
        delay(D1, A1, "d1-a1", due);
        delay(D1, B0, "d1-b0", due);
        delay(D1, A0, "later", due + 400);
        assertThat(service.pendingCount()).isEqualTo(5);

        advance(99);
        assertThat(commits()).as("nothing is delivered before it is due").isEmpty();
        assertThat(service.pendingCount()).isEqualTo(5);

        advance(1);
        assertThat(commits()).as("one round for the four records due at once")
                .containsExactly(Set.of(A0, A1, B0, D0, D1));
        assertThat(delivered(A0)).containsOnlyKeys("d0-a0");
        assertThat(delivered(A1)).containsOnlyKeys("d1-a1");
        assertThat(delivered(B0)).containsOnlyKeys("d0-b0", "d1-b0");
        assertThat(delivered(B0).values()).allSatisfy(ms -> assertThat(ms).isEqualTo(due));
        assertThat(service.pendingCount()).isEqualTo(1);

        advance(399);
        assertThat(commits()).hasSize(1);
        advance(1);
        assertThat(commits()).hasSize(2).last().isEqualTo(Set.of(A0, D1));
        assertThat(delivered(A0)).containsOnlyKeys("d0-a0", "later");
        assertThat(service.pendingCount()).isZero();
    }

    @Test
    void shouldStartTheNextRoundOnlyAfterTheIntervalWhenRecordsFallDueJustAfterARound() throws Exception {
        long now = clock.milliseconds();
        int timerTasks = timer.size();
        delay(D0, A0, "first", now + 100);
        delay(D1, A1, "second", now + 101);
        delay(D0, B0, "third", now + 103);
        assertThat(service.pendingCount()).isEqualTo(3);
        assertThat(timer.size()).as("one wake-up for the service, not one timer task per delay")
                .isEqualTo(timerTasks + 1);

        advance(100);
        assertThat(commits()).containsExactly(Set.of(A0, D0));
        advance(1);
        advance(2);
        advance(1);
        assertThat(commits()).as("paced: due, but the previous round started under 5 ms ago").hasSize(1);
        assertThat(service.pendingCount()).isEqualTo(2);

        advance(1);
        assertThat(commits()).as("one round carries what fell due during the interval").hasSize(2)
                .last().isEqualTo(Set.of(A1, B0, D0, D1));
        assertThat(delivered(A1).get("second")).isEqualTo(now + 105);
        assertThat(service.pendingCount()).isZero();
    }

    @Test
    void shouldDeliverEachRecordOnceAcrossARestartWhenItsOwnMarksWereSkippedWhileRunning() throws Exception {
        long now = clock.milliseconds();
        Set<String> expected = new HashSet<>();
        for (int i = 0; i < 40; i++) {
            TopicPartition from = i % 2 == 0 ? D0 : D1;
            TopicPartition to = List.of(A0, A1, B0).get(i % 3);
            delay(from, to, "v" + i, now + 10 + (i % 4) * 10);
            expected.add("v" + i);
        }
        advance(25);
        int deliveredBeforeRestart = delivered(A0).size() + delivered(A1).size() + delivered(B0).size();
        assertThat(deliveredBeforeRestart).as("due by +25: offsets i%4 in {0,1}").isEqualTo(20);
        assertThat(service.pendingCount()).as("the marks of this run's rounds are applied, not re-read").isEqualTo(20);
        delay(D0, B0, "after-marks", now + 30);
        assertThat(service.pendingCount()).as("the scan passed the skipped mark batches").isEqualTo(21);
        expected.add("after-marks");

        service.close();
        services.remove(service);
        service = startService();
        assertThat(service.pendingCount()).as("rebuilt from the log: delivered minus marked").isEqualTo(21);

        advance(100);
        Map<String, Long> all = new LinkedHashMap<>();
        for (TopicPartition target : List.of(A0, A1, B0)) {
            all.putAll(delivered(target));
        }
        assertThat(all).containsOnlyKeys(expected);
        assertThat(service.pendingCount()).isZero();
    }

    @Test
    void shouldDeliverOnTheNewLeaderExactlyWhatTheOldOneHadNotWhenLeadershipMoves() throws Exception {
        long now = clock.milliseconds();
        Map<String, Long> dueOf = new LinkedHashMap<>();
        for (int i = 0; i < 20; i++) {
            long due = now + 10 + (i % 4) * 10;
            delay(D0, List.of(A0, A1, B0).get(i % 3), "v" + i, due);
            dueOf.put("v" + i, due);
        }
        delay(D1, A0, "stays", now + 20);
        dueOf.put("stays", now + 20);
        advance(25);
        assertThat(allDelivered()).as("due by +25 on the first leader").hasSize(11);

        service.onResigned(0, 0);
        assertThat(service.pendingCount()).as("the old leader dropped the moved partition's state").isZero();
        DelayedDeliveryService next = newService("__millrace-delay-node-2", "checkpoints-2");
        next.start();
        next.onElected(0, 1);
        assertThat(next.pendingCount()).as("the new leader loads exactly what was not delivered").isEqualTo(10);

        advance(4);
        assertThat(allDelivered()).as("nothing early on the new leader (next due at +30)").hasSize(11);
        advance(1);
        assertThat(allDelivered()).hasSize(16);
        advance(10);
        Map<String, Long> all = allDelivered();
        assertThat(all).as("every record once, the moved ones by the new leader").containsOnlyKeys(dueOf.keySet());
        all.forEach((value, deliveredMs) -> assertThat(deliveredMs).as("%s never early", value)
                .isGreaterThanOrEqualTo(dueOf.get(value)));
        assertThat(next.pendingCount()).isZero();
        assertThat(service.pendingCount()).isZero();
    }

    @Test
    void shouldDeliverNothingOfAPartitionAfterResigningItWhenItsRecordsFallDue() throws Exception {
        long now = clock.milliseconds();
        delay(D0, A0, "moved", now + 10);
        delay(D1, A1, "kept", now + 10);
        service.onResigned(0, 0);
        advance(20);
        assertThat(allDelivered()).as("only the partition still led here").containsOnlyKeys("kept");
        assertThat(commits()).containsExactly(Set.of(A1, D1));

        service.onElected(0, 2);
        advance(DelayedDeliveryService.ROUND_INTERVAL_MS);
        assertThat(allDelivered()).as("led again: loaded and delivered").containsOnlyKeys("kept", "moved");
    }

    @Test
    void shouldHoldAPartitionBackWhileAnotherBrokersRoundIsOpenInItWhenElected() throws Exception {
        long now = clock.milliseconds();
        delay(D0, A0, "marked-by-committed-round", now + 10);
        delay(D0, A0, "d0-other", now + 10);
        delay(D1, A1, "marked-by-aborted-round", now + 10);
        service.onResigned(0, 0);
        service.onResigned(1, 0);
        // a former leader's round (producer 9999) has written its marks and is not decided yet
        openRound(D0, 0);
        openRound(D1, 0);
        service.onElected(0, 1);
        service.onElected(1, 1);

        advance(20);
        assertThat(allDelivered()).as("held back while the other round is open").isEmpty();
        // the service is not told of the markers: its periodic look at held-back partitions finds them decided
        endRound(D0, true);
        endRound(D1, false);
        advance(DelayedDeliveryService.BLOCKED_RECHECK_MS - 1);
        assertThat(allDelivered()).isEmpty();
        advance(1);
        assertThat(allDelivered()).as("its committed mark counts, its aborted one does not")
                .containsOnlyKeys("d0-other", "marked-by-aborted-round");
        assertThat(service.pendingCount()).isZero();
    }

    @Test
    void shouldTakeAResignationWhileItsTransactionalIdWaitsForTheCoordinatorAndDeliverOnceInitialised()
            throws Exception {
        CountDownLatch initialising = new CountDownLatch(1);
        CountDownLatch coordinatorBack = new CountDownLatch(1);
        CountDownLatch roundWritten = new CountDownLatch(1);
        DelayedDeliveryService next = newService("__millrace-delay-node-2", "checkpoints-2", local -> new RoundWriter() {
            @Override
            public void ensureReady() throws Exception {
                initialising.countDown();
                // the coordinator of the id is on a broker that just died
                if (!coordinatorBack.await(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test never brought the coordinator back");
                }
                local.ensureReady();
            }

            @Override
            public boolean ready() {
                return local.ready();
            }

            @Override
            public String transactionalId() {
                return local.transactionalId();
            }

            @Override
            public long producerId() {
                return local.producerId();
            }

            @Override
            public Map<TopicPartition, Long> write(DeliveryRound round) throws Exception {
                Map<TopicPartition, Long> marks = local.write(round);
                roundWritten.countDown();
                return marks;
            }

            @Override
            public void close() {
                local.close();
            }
        });
        service.onResigned(0, 0);
        service.onResigned(1, 0);
        next.onElected(0, 1);
        next.onElected(1, 1);
        long now = clock.milliseconds();
        delay(D0, A0, "moved-on", now + 10);
        delay(D1, A1, "kept", now + 10);
        advance(20);
        assertThat(initialising.await(10, TimeUnit.SECONDS)).as("due: the new leader initialises its id").isTrue();

        next.onResigned(0, 1);
        assertThat(next.pendingCount()).as("the resignation is taken while the initialisation waits").isEqualTo(1);
        assertThat(allDelivered()).as("nothing before the id is initialised").isEmpty();

        coordinatorBack.countDown();
        assertThat(roundWritten.await(10, TimeUnit.SECONDS)).as("a round once initialised").isTrue();
        assertThat(next.pendingCount()).isZero();
        assertThat(allDelivered()).as("only the partition still led").containsOnlyKeys("kept");
    }

    @Test
    void shouldRefuseDeliveryMarksWhenTheyDoNotComeFromThisBrokersRounds() {
        Header[] mark = {new RecordHeader(DelayedDelivery.DONE_OFFSET, DelayedDelivery.encodeLong(0))};
        MemoryRecords transactional = MemoryRecords.withTransactionalRecords(Compression.NONE, 9999, (short) 0, 0,
                new SimpleRecord(clock.milliseconds(), (byte[]) null, (byte[]) null, mark));
        assertThatThrownBy(() -> service.validate("someone-else", transactional))
                .isInstanceOf(InvalidRecordException.class).hasMessageContaining(DelayedDelivery.DONE_OFFSET)
                .hasMessageContaining("'someone-else'");
        assertThatThrownBy(() -> service.validate(null, MemoryRecords.withRecords(Compression.NONE,
                new SimpleRecord(clock.milliseconds(), (byte[]) null, (byte[]) null, mark))))
                .isInstanceOf(InvalidRecordException.class).hasMessageContaining("without a transactional id");
        service.validate(DelayedDeliveryService.TRANSACTIONAL_ID, transactional); // this broker's own rounds
    }

    /** Appends, as producer 9999's open transaction, a delivery mark for {@code offset} to {@code tp}. */
    private void openRound(TopicPartition tp, long offset) {
        Header[] mark = {new RecordHeader(DelayedDelivery.DONE_OFFSET, DelayedDelivery.encodeLong(offset))};
        logs.get(tp).appendAsLeader(MemoryRecords.withTransactionalRecords(Compression.NONE, 9999, (short) 0, 0,
                new SimpleRecord(clock.milliseconds(), (byte[]) null, (byte[]) null, mark)), 0, AppendOrigin.COORDINATOR);
    }

    private void endRound(TopicPartition tp, boolean commit) {
        logs.get(tp).appendAsLeader(MemoryRecords.withEndTransactionMarker(clock.milliseconds(), 9999, (short) 0,
                new EndTransactionMarker(commit ? ControlRecordType.COMMIT : ControlRecordType.ABORT, 0)), 0,
                AppendOrigin.COORDINATOR);
    }

    private Map<String, Long> allDelivered() {
        Map<String, Long> all = new LinkedHashMap<>();
        for (TopicPartition target : List.of(A0, A1, B0)) {
            all.putAll(delivered(target));
        }
        return all;
    }
}
