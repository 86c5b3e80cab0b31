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

    /**
     * A topic deleted while a maintenance round works on its log (a temporary queue whose connection closed): the
     * deletion waits until the round is done with the log, then closes it and deletes its directory; the round reports
     * no error, leaves no file behind and still maintains the other logs.
     */
    @Test
    void shouldLetALogBeDeletedWhileARoundRunsWithoutAnErrorOrLeftovers() throws Exception {
        PausingTime pausing = new PausingTime(time.milliseconds());
        Map<String, String> flushAlways = Map.of(LogConfig.FLUSH_MS, "0");
        PartitionLog deleted = PartitionLog.open(tmp.resolve("millrace.tmp.queue.x-0").toFile(),
                new LogConfig(flushAlways), pausing, Scheduler.IMMEDIATE);
        PartitionLog kept = PartitionLog.open(tmp.resolve("kept-0").toFile(), new LogConfig(flushAlways), time,
                Scheduler.IMMEDIATE);
        LogMaintenance maintenance = new LogMaintenance();
        maintenance.register(deleted);
        maintenance.register(kept);
        try {
            deleted.appendAsLeader(batch(3, time.milliseconds()), 0);
            kept.appendAsLeader(batch(5, time.milliseconds()), 0);

            Thread round = new Thread(maintenance::runOnce, "maintenance-round");
            pausing.pause(round);
            round.start();
            pausing.awaitPaused(); // the round is inside the deleted log's maintenance

            Thread deletion = new Thread(() -> {
                maintenance.unregister(deleted);
                deleted.close();
                deleteRecursively(deleted.dir());
            }, "topic-deletion");
            deletion.start();
            while (deletion.getState() != Thread.State.WAITING && deletion.getState() != Thread.State.TERMINATED) {
                Thread.onSpinWait();
            }
            assertThat(deletion.getState()).as("the deletion waits for the round").isEqualTo(Thread.State.WAITING);

            pausing.resume();
            round.join();
            deletion.join();

            assertThat(maintenance.failureCount()).as("no maintenance error").isZero();
            assertThat(deleted.dir()).as("nothing written into the deleted directory").doesNotExist();
            assertThat(new OffsetCheckpointFile(new File(kept.dir(), LogFiles.RECOVERY_POINT_CHECKPOINT)).read())
                    .as("the other log maintained").hasValue(5);
        } finally {
            kept.close();
        }
    }

    /** A log closed without being unregistered is skipped quietly; the others are maintained. */
    @Test
    void shouldSkipAClosedLogQuietly() throws IOException {
        PartitionLog closed = PartitionLog.open(tmp.resolve("closed-0").toFile(), LogConfig.defaults(), time,
                Scheduler.IMMEDIATE);
        PartitionLog open = PartitionLog.open(tmp.resolve("open-0").toFile(),
                new LogConfig(Map.of(LogConfig.FLUSH_MS, "0")), time, Scheduler.IMMEDIATE);
        LogMaintenance maintenance = new LogMaintenance();
        maintenance.register(closed);
        maintenance.register(open);
        try {
            closed.appendAsLeader(batch(1, time.milliseconds()), 0);
            closed.close();
            open.appendAsLeader(batch(2, time.milliseconds()), 0);
            maintenance.runOnce();
            assertThat(maintenance.failureCount()).isZero();
            assertThat(open.recoveryPoint()).isEqualTo(2);
        } finally {
            open.close();
        }
    }

    /** A storage failure of a log that is still open and registered is an error, and the other logs go on. */
    @Test
    void shouldStillReportAStorageFailureOfAnOpenLog() throws IOException {
        PartitionLog broken = PartitionLog.open(tmp.resolve("broken-0").toFile(), LogConfig.defaults(), time,
                Scheduler.IMMEDIATE);
        PartitionLog healthy = PartitionLog.open(tmp.resolve("healthy-0").toFile(),
                new LogConfig(Map.of(LogConfig.FLUSH_MS, "0")), time, Scheduler.IMMEDIATE);
        LogMaintenance maintenance = new LogMaintenance();
        maintenance.register(broken);
        maintenance.register(healthy);
        try {
            deleteRecursively(broken.dir()); // its checkpoints can no longer be written
            healthy.appendAsLeader(batch(4, time.milliseconds()), 0);
            maintenance.runOnce();
            assertThat(maintenance.failureCount()).isEqualTo(1);
            assertThat(healthy.recoveryPoint()).isEqualTo(4);
        } finally {
            healthy.close();
        }
    }

    /** A compaction pass asked to stop (its log is leaving) swaps nothing in. */
    @Test
    void shouldStopACompactionPassWhenAsked() throws IOException {
        PartitionLog compacted = PartitionLog.open(tmp.resolve("stop-0").toFile(), new LogConfig(Map.of(
                LogConfig.CLEANUP_POLICY, "compact", LogConfig.SEGMENT_BYTES, "500",
                LogConfig.FILE_DELETE_DELAY_MS, "0")), time, Scheduler.IMMEDIATE);
        try {
            for (int i = 0; i < 40; i++) {
                compacted.appendAsLeader(keyed("k" + (i % 2), "v" + i, time.milliseconds()), 0);
            }
            int before = TestBatches.readAll(compacted, 0, 1 << 20).size();
            LogCleaner.Result stopped = new LogCleaner().clean(compacted, () -> true);
            assertThat(stopped.segmentsAfter()).isZero();
            assertThat(TestBatches.readAll(compacted, 0, 1 << 20)).hasSize(before);
        } finally {
            compacted.close();
        }
    }

    private static void deleteRecursively(File dir) {
        File[] children = dir.listFiles();
        if (children != null) {
            for (File child : children) {
                deleteRecursively(child);
            }
        }
        dir.delete();
    }

    /**
     * A clock that stops one chosen thread the first time it reads it, until the test resumes it: a deterministic
     * way to hold a maintenance round inside one log.
     */
    private static final class PausingTime implements org.apache.kafka.common.utils.Time {
        private final long nowMs;
        private final java.util.concurrent.CountDownLatch paused = new java.util.concurrent.CountDownLatch(1);
        private final java.util.concurrent.CountDownLatch resumed = new java.util.concurrent.CountDownLatch(1);
        private volatile Thread toPause;

        PausingTime(long nowMs) {
            this.nowMs = nowMs;
        }

        void pause(Thread thread) {
            toPause = thread;
        }

        void awaitPaused() throws InterruptedException {
            paused.await();
        }

        void resume() {
            resumed.countDown();
        }

        @Override
        public long milliseconds() {
            if (Thread.currentThread() == toPause) {
                toPause = null;
                paused.countDown();
                try {
                    resumed.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return nowMs;
        }

        @Override
        public long nanoseconds() {
            return nowMs * 1_000_000L;
        }

        @Override
        public void sleep(long ms) {
        }
    }
}
