package dev.millrace.broker.log;

import static dev.millrace.broker.log.TestBatches.batch;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(30)
class LogRetentionTest {

    @TempDir
    Path tmp;

    private final ManualTime time = new ManualTime(10_000_000L);
    private PartitionLog log;

    @AfterEach
    void closeLog() {
        if (log != null) {
            log.close();
        }
    }

    private void open(Map<String, ?> settings, Scheduler scheduler) throws IOException {
        log = PartitionLog.open(tmp.resolve("t-0").toFile(), new LogConfig(settings), time, scheduler);
    }

    @Test
    void shouldDeleteWholeSegmentsOlderThanRetentionMsAndAdvanceTheLogStart() throws IOException {
        open(Map.of(LogConfig.SEGMENT_BYTES, "500", LogConfig.RETENTION_MS, "10000",
                LogConfig.FILE_DELETE_DELAY_MS, "0"), Scheduler.IMMEDIATE);
        for (int i = 0; i < 60; i++) {
            log.appendAsLeader(batch(2, time.milliseconds()), 0);
            time.advance(500);
        }
        List<Long> bases = log.segmentBaseOffsets();
        assertThat(bases).hasSizeGreaterThan(8);
        // now = start + 30 s; records older than now - 10 s are expired
        int deleted = log.deleteOldSegments();
        assertThat(deleted).isPositive();
        long start = log.logStartOffset();
        assertThat(start).isEqualTo(log.segmentBaseOffsets().get(0));
        assertThat(start).isGreaterThan(0);
        for (long base : bases.subList(0, deleted)) {
            assertThat(LogFiles.logFile(log.dir(), base)).doesNotExist();
        }
        // every remaining segment still holds a record within retention, except none are expired whole
        List<TestBatches.Read> left = TestBatches.readAll(log, start, 1 << 20);
        assertThat(left.get(left.size() - 1).offset()).isEqualTo(119);
        assertThat(left).extracting(TestBatches.Read::timestamp)
                .anyMatch(ts -> ts >= time.milliseconds() - 10_000);
        assertThatThrownBy(() -> log.read(0, 100, true)).isInstanceOf(OffsetOutOfRangeException.class);
        assertThat(log.deleteOldSegments()).isZero();

        LogConfig config = log.config();
        log.close();
        log = PartitionLog.open(tmp.resolve("t-0").toFile(), config, time, Scheduler.IMMEDIATE);
        assertThat(log.logStartOffset()).isEqualTo(start);
    }

    @Test
    void shouldRollAndDeleteAnActiveSegmentWhoseRecordsHaveAllExpired() throws IOException {
        open(Map.of(LogConfig.RETENTION_MS, "1000", LogConfig.FILE_DELETE_DELAY_MS, "0"), Scheduler.IMMEDIATE);
        log.appendAsLeader(batch(5, time.milliseconds()), 0);
        time.advance(1001);
        assertThat(log.deleteOldSegments()).isEqualTo(1);
        assertThat(log.logStartOffset()).isEqualTo(5);
        assertThat(log.logEndOffset()).isEqualTo(5);
        assertThat(log.size()).isZero();
        assertThat(log.appendAsLeader(batch(1, time.milliseconds()), 0).firstOffset()).isEqualTo(5);
    }

    @Test
    void shouldDeleteTheOldestSegmentsWhileTheLogIsLargerThanRetentionBytes() throws IOException {
        open(Map.of(LogConfig.SEGMENT_BYTES, "1000", LogConfig.RETENTION_BYTES, "3000", LogConfig.RETENTION_MS, "-1",
                LogConfig.FILE_DELETE_DELAY_MS, "0"), Scheduler.IMMEDIATE);
        for (int i = 0; i < 200; i++) {
            log.appendAsLeader(batch(1, 1L), 0);
        }
        long sizeBefore = log.size();
        int segmentsBefore = log.numberOfSegments();
        int deleted = log.deleteOldSegments();
        assertThat(deleted).isPositive();
        assertThat(log.numberOfSegments()).isEqualTo(segmentsBefore - deleted);
        // as in Kafka, whole segments go only while the rest still holds at least retention.bytes
        assertThat(log.size()).isGreaterThanOrEqualTo(3000);
        long oldest = LogFiles.logFile(log.dir(), log.segmentBaseOffsets().get(0)).length();
        assertThat(log.size() - oldest).isLessThan(3000);
        assertThat(sizeBefore).isGreaterThan(3000);
        assertThat(log.logEndOffset()).isEqualTo(200);
        assertThat(TestBatches.readAll(log, log.logStartOffset(), 1 << 20)).hasSize(200 - (int) log.logStartOffset());
    }

    @Test
    void shouldRemoveSegmentsBelowAMovedLogStartOffset() throws IOException {
        open(Map.of(LogConfig.SEGMENT_BYTES, "600", LogConfig.RETENTION_MS, "-1",
                LogConfig.FILE_DELETE_DELAY_MS, "0"), Scheduler.IMMEDIATE);
        for (int i = 0; i < 50; i++) {
            log.appendAsLeader(batch(2, 1L), 0);
        }
        List<Long> bases = log.segmentBaseOffsets();
        long newStart = bases.get(2) + 1;
        log.maybeIncrementLogStartOffset(newStart);
        assertThat(log.deleteOldSegments()).isEqualTo(2);
        assertThat(log.segmentBaseOffsets().get(0)).isEqualTo(bases.get(2));
        assertThat(log.logStartOffset()).isEqualTo(newStart);
        assertThatThrownBy(() -> log.maybeIncrementLogStartOffset(101)).isInstanceOf(OffsetOutOfRangeException.class)
                .hasMessageContaining("log end is 100");
    }

    @Test
    void shouldKeepDeletedSegmentsReadableUntilTheDeleteDelayPasses() throws IOException {
        List<Runnable> deferred = new ArrayList<>();
        open(Map.of(LogConfig.SEGMENT_BYTES, "500", LogConfig.RETENTION_BYTES, "0", LogConfig.RETENTION_MS, "-1",
                LogConfig.FILE_DELETE_DELAY_MS, "60000"), (name, task, delayMs) -> deferred.add(task));
        for (int i = 0; i < 20; i++) {
            log.appendAsLeader(batch(2, 1L), 0);
        }
        FetchDataInfo inFlight = log.read(0, 1 << 20, true);
        assertThat(log.deleteOldSegments()).isPositive();
        File renamed = new File(log.dir(), LogFiles.filenamePrefix(0) + LogFiles.LOG_SUFFIX + LogFiles.DELETED_SUFFIX);
        assertThat(renamed).exists();
        assertThat(TestBatches.records(inFlight.records())).isNotEmpty();
        deferred.forEach(Runnable::run);
        assertThat(renamed).doesNotExist();
    }
}
