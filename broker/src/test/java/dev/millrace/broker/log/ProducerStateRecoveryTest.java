package dev.millrace.broker.log;

import static dev.millrace.broker.log.IdempotentAppendTest.idempotent;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Producer state survives a clean close, an unclean stop, a corrupt snapshot and a truncation. */
@Timeout(30)
class ProducerStateRecoveryTest {

    private static final long PID = 77L;

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
        return tmp.resolve("topic-0").toFile();
    }

    private PartitionLog open() throws IOException {
        log = PartitionLog.open(dir(), new LogConfig(Map.of()), time, Scheduler.IMMEDIATE);
        return log;
    }

    /** Appends batches 0..{@code count}-1 of two records each, a plain batch before each. */
    private void appendBatches(int fromBatch, int count) {
        for (int i = fromBatch; i < fromBatch + count; i++) {
            log.appendAsLeader(TestBatches.batch(1, 5L), 0);
            log.appendAsLeader(idempotent(PID, 0, i * 2, 2), 0);
        }
    }

    /** Offsets of batch {@code i} as {@link #appendBatches} placed it. */
    private static long firstOffsetOf(int batch) {
        return batch * 3L + 1;
    }

    private void assertDuplicatesDetected(int lastBatch) {
        long end = log.logEndOffset();
        for (int i = lastBatch - 4; i <= lastBatch; i++) {
            LogAppendInfo retry = log.appendAsLeader(idempotent(PID, 0, i * 2, 2), 0);
            assertThat(retry.duplicate()).as("batch %d", i).isTrue();
            assertThat(retry.firstOffset()).as("batch %d", i).isEqualTo(firstOffsetOf(i));
            assertThat(retry.lastOffset()).as("batch %d", i).isEqualTo(firstOffsetOf(i) + 1);
        }
        assertThat(log.logEndOffset()).isEqualTo(end);
        assertThat(log.appendAsLeader(idempotent(PID, 0, (lastBatch + 1) * 2, 1), 0).firstOffset()).isEqualTo(end);
    }

    @Test
    void shouldDetectDuplicatesAfterACleanCloseFromTheSnapshot() throws IOException {
        open();
        appendBatches(0, 8);
        long end = log.logEndOffset();
        log.close();
        log = null;
        assertThat(ProducerStateSnapshotFileTest.snapshotOffsets(dir())).containsExactly(end);
        open();
        assertThat(log.producerState().entry(PID).batches()).hasSize(5);
        assertDuplicatesDetected(7);
    }

    @Test
    void shouldDetectDuplicatesAfterAnUncleanStopByReplayingTheLog() throws IOException {
        open();
        appendBatches(0, 3);
        log.roll();
        appendBatches(3, 4);
        long rolledAt = firstOffsetOf(3) - 1;
        log.closeAsIfCrashed();
        log = null;
        assertThat(ProducerStateSnapshotFileTest.snapshotOffsets(dir())).containsExactly(rolledAt);
        open();
        assertDuplicatesDetected(6);
    }

    @Test
    void shouldReplayOnlyWhatCameAfterTheLastRecoveryFlushAfterAnUncleanStop() throws IOException {
        open();
        appendBatches(0, 6);
        LogMaintenance maintenance = new LogMaintenance(60_000);
        maintenance.register(log);
        time.advance(59_999);
        maintenance.runOnce();
        assertThat(log.recoveryPoint()).as("not due yet").isZero();
        assertThat(ProducerStateSnapshotFileTest.snapshotOffsets(dir())).isEmpty();

        time.advance(1);
        maintenance.runOnce();
        long flushedAt = log.logEndOffset();
        assertThat(log.recoveryPoint()).isEqualTo(flushedAt);
        assertThat(new OffsetCheckpointFile(new File(dir(), LogFiles.RECOVERY_POINT_CHECKPOINT)).read())
                .hasValue(flushedAt);
        assertThat(ProducerStateSnapshotFileTest.snapshotOffsets(dir())).containsExactly(flushedAt);
        time.advance(60_000);
        maintenance.runOnce();
        assertThat(ProducerStateSnapshotFileTest.snapshotOffsets(dir())).as("nothing appended since")
                .containsExactly(flushedAt);

        appendBatches(6, 3);
        maintenance.unregister(log);
        log.closeAsIfCrashed();
        log = null;
        open();
        assertThat(log.recoveryPoint()).isEqualTo(flushedAt);
        assertThat(log.producerStateReplayedFrom()).isEqualTo(flushedAt);
        assertDuplicatesDetected(8);
    }

    @Test
    void shouldRebuildFromTheLogStartWhenNoSnapshotExists() throws IOException {
        open();
        appendBatches(0, 6);
        log.closeAsIfCrashed();
        log = null;
        assertThat(ProducerStateSnapshotFileTest.snapshotOffsets(dir())).isEmpty();
        open();
        assertDuplicatesDetected(5);
    }

    @Test
    void shouldIgnoreACorruptSnapshotAndRebuildFromTheLog() throws IOException {
        open();
        appendBatches(0, 6);
        long end = log.logEndOffset();
        log.close();
        log = null;
        File snapshot = ProducerStateSnapshotFile.file(dir(), end);
        try (RandomAccessFile raf = new RandomAccessFile(snapshot, "rw")) {
            raf.seek(raf.length() - 3);
            raf.write(0x5a);
        }
        open();
        assertThat(snapshot).doesNotExist();
        assertDuplicatesDetected(5);
    }

    @Test
    void shouldFallBackToAnOlderSnapshotWhenTheNewestIsCorrupt() throws IOException {
        open();
        appendBatches(0, 3);
        log.roll();
        appendBatches(3, 3);
        long end = log.logEndOffset();
        log.close();
        log = null;
        File newest = ProducerStateSnapshotFile.file(dir(), end);
        try (RandomAccessFile raf = new RandomAccessFile(newest, "rw")) {
            raf.setLength(raf.length() - 1);
        }
        open();
        assertThat(ProducerStateSnapshotFileTest.snapshotOffsets(dir())).containsExactly(firstOffsetOf(3) - 1);
        assertDuplicatesDetected(5);
    }

    @Test
    void shouldDeleteSnapshotsAboveTheLogEndAfterRecoveryTruncates() throws IOException {
        open();
        appendBatches(0, 4);
        log.roll();
        long rolledAt = log.logEndOffset();
        appendBatches(4, 2);
        log.closeAsIfCrashed();
        log = null;
        File firstSegment = LogFiles.logFile(dir(), 0);
        try (RandomAccessFile raf = new RandomAccessFile(firstSegment, "rw")) {
            raf.setLength(raf.length() - 5);
        }
        open();
        assertThat(log.logEndOffset()).isLessThan(rolledAt);
        assertThat(ProducerStateSnapshotFileTest.snapshotOffsets(dir())).isEmpty();
        // the last batch of producer PID (batch 3) was cut: batch 2 is its last, batch 3 is new again
        assertThat(log.producerState().entry(PID).lastSequence()).isEqualTo(5);
        assertThat(log.appendAsLeader(idempotent(PID, 0, 4, 2), 0).duplicate()).isTrue();
        assertThat(log.appendAsLeader(idempotent(PID, 0, 6, 2), 0).duplicate()).isFalse();
    }

    @Test
    void shouldSnapshotAtRollsDuringAppendsAndReplayAfterTheNewestOne() throws IOException {
        log = PartitionLog.open(dir(), new LogConfig(Map.of(LogConfig.SEGMENT_BYTES, "400")), time,
                Scheduler.IMMEDIATE);
        appendBatches(0, 12);
        assertThat(log.numberOfSegments()).isGreaterThan(2);
        assertThat(ProducerStateSnapshotFileTest.snapshotOffsets(dir())).hasSize(2);
        LogConfig config = log.config();
        log.closeAsIfCrashed();
        log = PartitionLog.open(dir(), config, time, Scheduler.IMMEDIATE);
        assertDuplicatesDetected(11);
    }

    @Test
    void shouldKeepOnlyTheNewestTwoSnapshots() throws IOException {
        open();
        for (int i = 0; i < 5; i++) {
            appendBatches(i, 1);
            log.roll();
        }
        assertThat(ProducerStateSnapshotFileTest.snapshotOffsets(dir())).containsExactly(12L, 15L);
    }
}
