package dev.millrace.broker.log;

import static dev.millrace.broker.log.TestBatches.batch;
import static dev.millrace.broker.log.TestBatches.keyed;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(30)
class LogMaintenanceTest {

    @TempDir
    Path tmp;

    private final ManualTime time = new ManualTime(5_000_000L);

    @Test
    void shouldFlushByTimeApplyRetentionCompactAndCheckpointInOneRound() throws IOException {
        PartitionLog timed = PartitionLog.open(tmp.resolve("timed-0").toFile(), new LogConfig(Map.of(
                LogConfig.FLUSH_MS, "1000", LogConfig.SEGMENT_BYTES, "500", LogConfig.RETENTION_MS, "60000",
                LogConfig.FILE_DELETE_DELAY_MS, "0")), time, Scheduler.IMMEDIATE);
        PartitionLog compacted = PartitionLog.open(tmp.resolve("compact-0").toFile(), new LogConfig(Map.of(
                LogConfig.CLEANUP_POLICY, "compact", LogConfig.SEGMENT_BYTES, "500",
                LogConfig.FILE_DELETE_DELAY_MS, "0")), time, Scheduler.IMMEDIATE);
        PartitionLog closed = PartitionLog.open(tmp.resolve("closed-0").toFile(), LogConfig.defaults(), time,
                Scheduler.IMMEDIATE);
        closed.close();
        LogMaintenance maintenance = new LogMaintenance();
        maintenance.register(closed);
        maintenance.register(timed);
        maintenance.register(compacted);
        try {
            for (int i = 0; i < 40; i++) {
                timed.appendAsLeader(batch(2, time.milliseconds()), 0);
                compacted.appendAsLeader(keyed("k" + (i % 2), "v" + i, time.milliseconds()), 0);
            }
            time.advance(1000);
            maintenance.runOnce();
            assertThat(timed.recoveryPoint()).isEqualTo(80);
            assertThat(new OffsetCheckpointFile(new File(timed.dir(), LogFiles.RECOVERY_POINT_CHECKPOINT)).read())
                    .hasValue(80);
            assertThat(TestBatches.readAll(compacted, 0, 1 << 20).size()).isLessThan(10);

            time.advance(60_000);
            maintenance.runOnce();
            assertThat(timed.logStartOffset()).isEqualTo(80);
            assertThat(new OffsetCheckpointFile(new File(timed.dir(), LogFiles.LOG_START_OFFSET_CHECKPOINT)).read())
                    .hasValue(80);
        } finally {
            timed.close();
            compacted.close();
        }
    }

    @Test
    void shouldSkipACompactionPassWhenNothingChanged() throws IOException {
        PartitionLog compacted = PartitionLog.open(tmp.resolve("skip-0").toFile(), new LogConfig(Map.of(
                LogConfig.CLEANUP_POLICY, "compact", LogConfig.SEGMENT_BYTES, "500",
                LogConfig.FILE_DELETE_DELAY_MS, "0")), time, Scheduler.IMMEDIATE);
        LogCleaner cleaner = new LogCleaner();
        try {
            for (int i = 0; i < 40; i++) {
                compacted.appendAsLeader(keyed("k" + (i % 4), "v" + i, time.milliseconds()), 0);
            }
            LogCleaner.Result first = cleaner.clean(compacted);
            assertThat(first.segmentsBefore()).isPositive();
            LogCleaner.Result merged;
            do {
                merged = cleaner.clean(compacted);
            } while (merged.segmentsBefore() > 0);
            assertThat(cleaner.clean(compacted)).isEqualTo(LogCleaner.Result.SKIPPED);
            for (int i = 0; i < 20; i++) {
                compacted.appendAsLeader(keyed("k" + (i % 4), "w" + i, time.milliseconds()), 0);
            }
            assertThat(cleaner.clean(compacted).segmentsBefore()).isPositive();
        } finally {
            compacted.close();
        }
    }
}
