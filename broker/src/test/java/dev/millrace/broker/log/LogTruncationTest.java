package dev.millrace.broker.log;

import static dev.millrace.broker.log.TestBatches.batch;
import static dev.millrace.broker.log.TestBatches.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link PartitionLog#truncateTo} and {@link PartitionLog#truncateFullyAndStartAt}: what remains is
 * exactly the records below the cut, on disk and after a reopen; appends continue at the new end; the
 * indexes, recovery point, producer state, transactions and leader epochs follow the cut.
 */
@Timeout(60)
class LogTruncationTest {

    private static final long PID = 777L;

    @TempDir
    Path tmp;

    private final ManualTime time = new ManualTime(1_000_000L);
    private PartitionLog log;

    @AfterEach
    void closeLog() {
        if (log != null) {
            log.close();
        }
    }

    private File dir() {
        return tmp.resolve("t-0").toFile();
    }

    private PartitionLog open(Map<String, String> settings) throws IOException {
        log = PartitionLog.open(dir(), new LogConfig(settings), time, Scheduler.IMMEDIATE);
        return log;
    }

    private PartitionLog reopen() throws IOException {
        LogConfig config = log.config();
        log.close();
        log = PartitionLog.open(dir(), config, time, Scheduler.IMMEDIATE);
        return log;
    }

    /** Appends {@code batches} batches of two records whose values are their offsets. */
    private void appendPairs(int batches, int leaderEpoch) {
        for (int b = 0; b < batches; b++) {
            long first = log.logEndOffset();
            log.appendAsLeader(TestBatches.batch(2, time.milliseconds(), org.apache.kafka.common.compress.Compression.NONE,
                    i -> null, i -> TestBatches.bytes(String.valueOf(first + i))), leaderEpoch);
            time.advance(10);
        }
    }

    private List<Long> offsets() {
        List<Long> out = new ArrayList<>();
        for (TestBatches.Read r : readAll(log, log.logStartOffset(), 1 << 16)) {
            assertThat(r.value()).isEqualTo(String.valueOf(r.offset()));
            out.add(r.offset());
        }
        return out;
    }

    private static List<Long> range(long from, long to) {
        List<Long> out = new ArrayList<>();
        for (long o = from; o < to; o++) {
            out.add(o);
        }
        return out;
    }

    private List<String> files(String suffix) {
        String[] names = dir().list((d, name) -> name.endsWith(suffix));
        Arrays.sort(names);
        return List.of(names);
    }

    @Test
    void shouldTruncateInsideTheActiveSegmentAndContinueAppendingAtTheCut() throws IOException {
        open(Map.of(LogConfig.INDEX_INTERVAL_BYTES, "0"));
        appendPairs(5, 0);
        log.flush();

        log.truncateTo(6);

        assertThat(log.logEndOffset()).isEqualTo(6);
        assertThat(log.recoveryPoint()).isEqualTo(6);
        assertThat(new OffsetCheckpointFile(new File(dir(), LogFiles.RECOVERY_POINT_CHECKPOINT)).read())
                .isEqualTo(OptionalLong.of(6));
        assertThat(offsets()).isEqualTo(range(0, 6));
        assertThatThrownBy(() -> log.read(7, 1000, true)).isInstanceOf(OffsetOutOfRangeException.class);

        appendPairs(1, 0);
        assertThat(offsets()).isEqualTo(range(0, 8));
        assertThat(reopen().logEndOffset()).isEqualTo(8);
        assertThat(offsets()).isEqualTo(range(0, 8));
    }

    @Test
    void shouldRemoveAWholeBatchWhenTheCutFallsInsideIt() throws IOException {
        open(Map.of());
        appendPairs(3, 0);

        log.truncateTo(3);

        assertThat(log.logEndOffset()).isEqualTo(2);
        assertThat(offsets()).isEqualTo(range(0, 2));
    }

    @Test
    void shouldCutTheIndexesSoThatLookupsAndTimestampsSeeOnlyWhatRemains() throws IOException {
        open(Map.of(LogConfig.INDEX_INTERVAL_BYTES, "0"));
        appendPairs(5, 0);
        long lastKeptTimestamp = readAll(log, 0, 1 << 16).get(5).timestamp();

        log.truncateTo(6);

        LogSegment active = log.activeSegment();
        assertThat(active.offsetIndex().lastEntry().offset()).isEqualTo(5);
        assertThat(active.timeIndex().lastEntry().offset()).isLessThan(6);
        assertThat(active.maxTimestampSoFar()).isEqualTo(lastKeptTimestamp);
        assertThat(log.offsetForTimestamp(lastKeptTimestamp + 1)).isEmpty();
        active.sanityCheckIndexes();
    }

    @Test
    void shouldRemoveTheSegmentsAboveTheCutAndReopenWithExactlyWhatRemains() throws IOException {
        open(Map.of(LogConfig.SEGMENT_BYTES, "200"));
        appendPairs(12, 0);
        List<Long> bases = log.segmentBaseOffsets();
        assertThat(bases.size()).isGreaterThan(3);
        long cut = bases.get(1) + 1;

        log.truncateTo(cut);

        long newEnd = log.logEndOffset();
        assertThat(newEnd).isLessThanOrEqualTo(cut).isGreaterThanOrEqualTo(bases.get(1));
        assertThat(log.segmentBaseOffsets()).containsExactly(bases.get(0), bases.get(1));
        assertThat(files(LogFiles.LOG_SUFFIX)).containsExactly(LogFiles.filenamePrefix(bases.get(0)) + ".log",
                LogFiles.filenamePrefix(bases.get(1)) + ".log");
        assertThat(files(LogFiles.INDEX_SUFFIX)).hasSize(2);
        assertThat(files(LogFiles.DELETED_SUFFIX)).isEmpty();
        assertThat(offsets()).isEqualTo(range(0, newEnd));

        appendPairs(6, 0);
        assertThat(log.numberOfSegments()).isGreaterThan(2);
        assertThat(offsets()).isEqualTo(range(0, newEnd + 12));
        reopen();
        assertThat(offsets()).isEqualTo(range(0, newEnd + 12));
    }

    @Test
    void shouldRecoverTheTruncatedLogAfterACrash() throws IOException {
        open(Map.of(LogConfig.SEGMENT_BYTES, "200"));
        appendPairs(12, 0);
        log.flush();
        log.checkpoint();
        log.truncateTo(9);
        appendPairs(2, 0);
        long end = log.logEndOffset();
        log.closeAsIfCrashed();

        log = PartitionLog.open(dir(), new LogConfig(Map.of(LogConfig.SEGMENT_BYTES, "200")), time, Scheduler.IMMEDIATE);

        assertThat(log.logEndOffset()).isEqualTo(end);
        assertThat(offsets()).isEqualTo(range(0, end));
    }

    @Test
    void shouldIgnoreACutAtOrPastTheEndAndRefuseOneBelowTheLogStart() throws IOException {
        open(Map.of());
        appendPairs(4, 0);
        log.maybeIncrementLogStartOffset(4);

        log.truncateTo(8);
        log.truncateTo(20);
        assertThat(log.logEndOffset()).isEqualTo(8);

        assertThatThrownBy(() -> log.truncateTo(3)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("offset 3").hasMessageContaining("log start offset 4");
        assertThat(log.logEndOffset()).isEqualTo(8);
    }

    @Test
    void shouldAcceptAnIdempotentBatchAgainOnceItWasTruncated() throws IOException {
        open(Map.of());
        log.appendAsLeader(IdempotentAppendTest.idempotent(PID, 0, 0, 2), 0);   // 0-1
        log.appendAsLeader(IdempotentAppendTest.idempotent(PID, 0, 2, 2), 0);   // 2-3
        log.roll();                                                              // snapshot at 4
        log.appendAsLeader(IdempotentAppendTest.idempotent(PID, 0, 4, 2), 0);   // 4-5
        log.appendAsLeader(IdempotentAppendTest.idempotent(PID, 0, 6, 2), 0);   // 6-7

        log.truncateTo(6);
        LogAppendInfo again = log.appendAsLeader(IdempotentAppendTest.idempotent(PID, 0, 6, 2), 0);

        assertThat(again.duplicate()).isFalse();
        assertThat(again.firstOffset()).isEqualTo(6);
        assertThat(log.appendAsLeader(IdempotentAppendTest.idempotent(PID, 0, 4, 2), 0).duplicate()).isTrue();

        log.truncateTo(2);                                                       // below the snapshot at 4
        assertThat(files(LogFiles.SNAPSHOT_SUFFIX)).allMatch(name -> LogFiles.offsetFromFileName(name) <= 2);
        LogAppendInfo resent = log.appendAsLeader(IdempotentAppendTest.idempotent(PID, 0, 2, 2), 0);
        assertThat(resent.duplicate()).isFalse();
        assertThat(resent.firstOffset()).isEqualTo(2);
        assertThat(log.producerState().entry(PID).lastSequence()).isEqualTo(3);
        reopen();
        assertThat(log.producerState().entry(PID).lastSequence()).isEqualTo(3);
    }

    @Test
    void shouldForgetATransactionWhoseDataWasTruncated() throws IOException {
        open(Map.of());
        appendPairs(1, 0);                                                             // 0-1
        log.appendAsLeader(TransactionalLogTest.transactional(PID, 0, 0, "a", "b"), 0); // 2-3 opens
        assertThat(log.firstUnstableOffset()).isEqualTo(2);

        log.truncateTo(2);

        assertThat(log.firstUnstableOffset()).isEqualTo(-1);
        assertThat(log.openTransactions()).isEmpty();
        assertThat(reopen().firstUnstableOffset()).isEqualTo(-1);
    }

    @Test
    void shouldReopenATransactionWhoseAbortMarkerWasTruncatedAndKeepTheAbortedIndexConsistent() throws IOException {
        open(Map.of());
        log.appendAsLeader(TransactionalLogTest.transactional(PID, 0, 0, "a"), 0);      // 0 opens
        log.appendAsLeader(TransactionalLogTest.marker(PID, 0, false), 0, AppendOrigin.COORDINATOR); // 1 abort
        log.appendAsLeader(TransactionalLogTest.transactional(PID, 0, 1, "b"), 0);      // 2 opens
        log.appendAsLeader(TransactionalLogTest.marker(PID, 0, false), 0, AppendOrigin.COORDINATOR); // 3 abort
        assertThat(log.collectAbortedTransactions(0, 4)).hasSize(2);

        log.truncateTo(3);

        assertThat(log.firstUnstableOffset()).isEqualTo(2);
        assertThat(log.collectAbortedTransactions(0, 3))
                .containsExactly(new AbortedTxn(PID, 0, 1, 2));
        log.appendAsLeader(TransactionalLogTest.marker(PID, 0, true), 0, AppendOrigin.COORDINATOR); // 3 commit
        assertThat(log.firstUnstableOffset()).isEqualTo(-1);
        assertThat(log.collectAbortedTransactions(0, 4)).containsExactly(new AbortedTxn(PID, 0, 1, 2));

        log.truncateTo(1);
        assertThat(log.collectAbortedTransactions(0, 1)).isEmpty();
        assertThat(log.firstUnstableOffset()).isEqualTo(0);
        log.appendAsLeader(TransactionalLogTest.marker(PID, 0, false), 0, AppendOrigin.COORDINATOR); // 1 abort again
        assertThat(reopen().collectAbortedTransactions(0, 2)).containsExactly(new AbortedTxn(PID, 0, 1, 2));
        assertThat(log.firstUnstableOffset()).isEqualTo(-1);
    }

    @Test
    void shouldDropTheLeaderEpochsThatStartAtOrAfterTheCut() throws IOException {
        open(Map.of());
        appendPairs(2, 0);   // 0-3 under epoch 0
        appendPairs(2, 3);   // 4-7 under epoch 3
        assertThat(log.endOffsetForEpoch(0)).isEqualTo(new EpochEndOffset(0, 4));

        log.truncateTo(4);

        assertThat(log.leaderEpochCache().entries()).containsExactly(new EpochEntry(0, 0));
        assertThat(log.endOffsetForEpoch(0)).isEqualTo(new EpochEndOffset(0, 4));
        assertThat(log.endOffsetForEpoch(3)).isEqualTo(EpochEndOffset.UNDEFINED);
        assertThat(reopen().leaderEpochCache().entries()).containsExactly(new EpochEntry(0, 0));
    }

    @Test
    void shouldEmptyTheLogAndStartAtTheGivenOffset() throws IOException {
        open(Map.of(LogConfig.SEGMENT_BYTES, "200"));
        log.appendAsLeader(IdempotentAppendTest.idempotent(PID, 0, 0, 2), 2);
        appendPairs(8, 2);
        log.roll();
        assertThat(files(LogFiles.SNAPSHOT_SUFFIX)).isNotEmpty();

        log.truncateFullyAndStartAt(100);

        assertThat(log.logStartOffset()).isEqualTo(100);
        assertThat(log.logEndOffset()).isEqualTo(100);
        assertThat(log.recoveryPoint()).isEqualTo(100);
        assertThat(log.segmentBaseOffsets()).containsExactly(100L);
        assertThat(files(LogFiles.LOG_SUFFIX)).containsExactly(LogFiles.filenamePrefix(100) + ".log");
        assertThat(files(LogFiles.SNAPSHOT_SUFFIX)).isEmpty();
        assertThat(log.leaderEpochCache().entries()).isEmpty();
        assertThat(log.producerState().entry(PID)).isNull();
        assertThat(log.read(100, 1000, true).records().sizeInBytes()).isZero();
        assertThatThrownBy(() -> log.read(50, 1000, true)).isInstanceOf(OffsetOutOfRangeException.class);

        log.appendAsFollower(MemoryRecords.withRecords(100L, org.apache.kafka.common.compress.Compression.NONE, 5,
                new org.apache.kafka.common.record.internal.SimpleRecord(1L, null, TestBatches.bytes("100"))));
        assertThat(log.leaderEpochCache().entries()).containsExactly(new EpochEntry(5, 100));
        reopen();
        assertThat(log.logStartOffset()).isEqualTo(100);
        assertThat(offsets()).containsExactly(100L);
        assertThat(log.leaderEpochCache().entries()).containsExactly(new EpochEntry(5, 100));
    }

    @Test
    void shouldCutTheSameSegmentAgainWhileItsEarlierCopyStillWaitsForDeletion() throws IOException {
        List<Runnable> deferredDeletes = new ArrayList<>();
        log = PartitionLog.open(dir(), new LogConfig(Map.of()), time, (name, task, delayMs) -> deferredDeletes.add(task));
        appendPairs(2, 0);                                                                  // 0-3
        for (int round = 0; round < 2; round++) {
            log.roll();                                                                     // segment at 4
            log.appendAsLeader(TransactionalLogTest.transactional(PID, 0, round, "x"), 0);  // 4
            log.appendAsLeader(TransactionalLogTest.marker(PID, 0, false), 0, AppendOrigin.COORDINATOR); // 5
            assertThat(files(LogFiles.TXN_INDEX_SUFFIX)).contains(LogFiles.filenamePrefix(4) + ".txnindex");

            log.truncateTo(2);
            appendPairs(1, 0);                                                              // 2-3
        }

        assertThat(log.isClosed()).isFalse();
        assertThat(offsets()).isEqualTo(range(0, 4));
        assertThat(files(LogFiles.DELETED_SUFFIX)).allMatch(name -> name.startsWith(LogFiles.filenamePrefix(4)));
        deferredDeletes.forEach(Runnable::run);
        assertThat(files(LogFiles.DELETED_SUFFIX)).isEmpty();
        assertThat(log.collectAbortedTransactions(0, 4)).isEmpty();
    }

    @Test
    void shouldLetReadersRunWhileTheLogIsTruncatedAndRewritten() throws Exception {
        List<Runnable> deferredDeletes = new ArrayList<>();
        Scheduler deferred = (name, task, delayMs) -> {
            synchronized (deferredDeletes) {
                deferredDeletes.add(task);
            }
        };
        log = PartitionLog.open(dir(), new LogConfig(Map.of(LogConfig.SEGMENT_BYTES, "300",
                LogConfig.INDEX_INTERVAL_BYTES, "0")), time, deferred);
        appendPairs(20, 0);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        AtomicBoolean stop = new AtomicBoolean();
        try {
            List<Future<Integer>> readers = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                int seed = r;
                readers.add(pool.submit(() -> {
                    int reads = 0;
                    while (!stop.get()) {
                        long offset = (reads * 7L + seed) % 40;
                        try {
                            log.read(offset, 1 + (reads % 500), reads % 2 == 0);
                            log.read(offset, 500, true, 30);
                        } catch (OffsetOutOfRangeException expected) {
                            // the offset was cut away: a normal answer
                        }
                        reads++;
                    }
                    return reads;
                }));
            }
            for (int round = 0; round < 60; round++) {
                log.truncateTo(5 + round % 30);
                while (log.logEndOffset() < 40) {
                    appendPairs(1, 0);
                }
            }
            stop.set(true);
            for (Future<Integer> reader : readers) {
                assertThat(reader.get(30, TimeUnit.SECONDS)).isPositive();
            }
        } finally {
            stop.set(true);
            pool.shutdownNow();
        }
        assertThat(offsets()).isEqualTo(range(0, log.logEndOffset()));
        synchronized (deferredDeletes) {
            deferredDeletes.forEach(Runnable::run);
        }
    }
}
