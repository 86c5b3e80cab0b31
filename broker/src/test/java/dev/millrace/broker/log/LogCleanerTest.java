package dev.millrace.broker.log;

import static dev.millrace.broker.log.TestBatches.keyed;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class LogCleanerTest {

    private static final Map<String, String> COMPACTED = Map.of(LogConfig.CLEANUP_POLICY, "compact",
            LogConfig.SEGMENT_BYTES, "1024", LogConfig.DELETE_RETENTION_MS, "5000", LogConfig.FILE_DELETE_DELAY_MS, "0");

    @TempDir
    Path tmp;

    private final ManualTime time = new ManualTime(50_000_000L);
    private final LogCleaner cleaner = new LogCleaner();
    private PartitionLog log;

    @AfterEach
    void closeLog() {
        if (log != null) {
            log.close();
        }
    }

    private PartitionLog open() throws IOException {
        log = PartitionLog.open(tmp.resolve("c-0").toFile(), new LogConfig(COMPACTED), time, Scheduler.IMMEDIATE);
        return log;
    }

    @Test
    void shouldDropACleanedSegmentWhenTheLogWasTruncatedDuringThePass() throws IOException {
        List<Runnable> deferredDeletes = new java.util.ArrayList<>();
        log = PartitionLog.open(tmp.resolve("c-0").toFile(), new LogConfig(COMPACTED), time,
                (name, task, delayMs) -> deferredDeletes.add(task));
        String filler = "x".repeat(60);
        log.appendAsLeader(keyed("a", "old", time.milliseconds()), 0);                      // 0
        for (int i = 0; i < 7; i++) {
            log.appendAsLeader(keyed("f" + i, filler, time.milliseconds()), 0);
        }
        log.roll();
        long newValueOffset = log.appendAsLeader(keyed("a", "new", time.milliseconds()), 0).firstOffset();
        for (int i = 7; i < 14; i++) {
            log.appendAsLeader(keyed("f" + i, filler, time.milliseconds()), 0);
        }
        log.roll();
        log.appendAsLeader(keyed("z", "active", time.milliseconds()), 0);
        java.util.concurrent.atomic.AtomicBoolean truncated = new java.util.concurrent.atomic.AtomicBoolean();

        // the cleaner has mapped "a" to its new value when the new value is cut away (a follower truncating)
        cleaner.clean(log, () -> {
            if (truncated.compareAndSet(false, true)) {
                log.truncateTo(newValueOffset);
            }
            return false;
        });

        assertThat(truncated).isTrue();
        List<TestBatches.Read> remaining = TestBatches.readAll(log, 0, 1 << 16);
        assertThat(remaining).hasSize(8);
        assertThat(remaining.get(0).key()).isEqualTo("a");
        assertThat(remaining.get(0).value()).isEqualTo("old");
        deferredDeletes.forEach(Runnable::run);
    }

    @Test
    void shouldKeepTheLatestValueOfEveryKeyAtItsOriginalOffsetAcrossManySegments() throws IOException {
        open();
        Random random = new Random(42);
        Map<String, Long> latestOffset = new HashMap<>();
        Map<String, String> latestValue = new HashMap<>();
        for (int i = 0; i < 600; i++) {
            String key = "k" + random.nextInt(40);
            String value = "value-" + i;
            long offset = log.appendAsLeader(keyed(key, value, time.milliseconds()), 0).firstOffset();
            latestOffset.put(key, offset);
            latestValue.put(key, value);
        }
        log.roll();
        int segmentsBefore = log.numberOfSegments();
        long sizeBefore = log.size();
        long endBefore = log.logEndOffset();

        LogCleaner.Result result = cleaner.clean(log);
        assertThat(result.segmentsBefore()).isEqualTo(segmentsBefore - 1);
        assertThat(result.bytesAfter()).isLessThan(result.bytesBefore());
        // segments are grouped by their size before cleaning, so the second pass merges the shrunk ones
        cleaner.clean(log);
        assertThat(log.numberOfSegments()).isLessThan(segmentsBefore / 4);
        assertThat(log.size()).isLessThan(sizeBefore);
        assertThat(log.logEndOffset()).isEqualTo(endBefore);
        List<TestBatches.Read> survivors = TestBatches.readAll(log, 0, 300);
        assertThat(survivors).hasSize(40);
        for (TestBatches.Read r : survivors) {
            assertThat(r.offset()).isEqualTo(latestOffset.get(r.key()));
            assertThat(r.value()).isEqualTo(latestValue.get(r.key()));
        }
        LogConfig config = log.config();
        log.close();
        log = PartitionLog.open(tmp.resolve("c-0").toFile(), config, time, Scheduler.IMMEDIATE);
        assertThat(TestBatches.readAll(log, 0, 300)).isEqualTo(survivors);
        assertThat(log.appendAsLeader(keyed("k1", "new", 1L), 0).firstOffset()).isEqualTo(endBefore);
    }

    @Test
    void shouldKeepTombstonesForDeleteRetentionMsAndThenDropThem() throws IOException {
        open();
        for (int i = 0; i < 30; i++) {
            log.appendAsLeader(keyed("k" + (i % 3), "v" + i, time.milliseconds()), 0);
        }
        long tombstoneOffset = log.appendAsLeader(keyed("k0", null, time.milliseconds()), 0).firstOffset();
        log.appendAsLeader(keyed("k9", "after", time.milliseconds()), 0);
        log.roll();

        cleaner.clean(log);
        Map<String, TestBatches.Read> byKey = TestBatches.readAll(log, 0, 1 << 20).stream()
                .collect(Collectors.toMap(TestBatches.Read::key, r -> r));
        assertThat(byKey).containsOnlyKeys("k0", "k1", "k2", "k9");
        assertThat(byKey.get("k0").value()).isNull();
        assertThat(byKey.get("k0").offset()).isEqualTo(tombstoneOffset);

        time.advance(4999);
        cleaner.clean(log);
        assertThat(TestBatches.readAll(log, 0, 1 << 20)).extracting(TestBatches.Read::key).contains("k0");

        time.advance(2);
        cleaner.clean(log);
        assertThat(TestBatches.readAll(log, 0, 1 << 20)).extracting(TestBatches.Read::key)
                .containsExactlyInAnyOrder("k1", "k2", "k9");
    }

    @Test
    void shouldNeverCleanTheActiveSegment() throws IOException {
        open();
        for (int i = 0; i < 5; i++) {
            log.appendAsLeader(keyed("same", "v" + i, 1L), 0);
        }
        assertThat(log.numberOfSegments()).isEqualTo(1);
        cleaner.clean(log);
        assertThat(TestBatches.readAll(log, 0, 1 << 20)).hasSize(5);
    }

    @Test
    void shouldLeaveDeleteOnlyLogsAlone() throws IOException {
        log = PartitionLog.open(tmp.resolve("d-0").toFile(), new LogConfig(Map.of(LogConfig.SEGMENT_BYTES, "500")),
                time, Scheduler.IMMEDIATE);
        for (int i = 0; i < 40; i++) {
            log.appendAsLeader(keyed("same", "v" + i, 1L), 0);
        }
        cleaner.clean(log);
        assertThat(TestBatches.readAll(log, 0, 1 << 20)).hasSize(40);
    }

    @Test
    void shouldFinishASwapThatACrashInterrupted() throws IOException {
        open();
        for (int i = 0; i < 200; i++) {
            log.appendAsLeader(keyed("k" + (i % 10), "v" + i, 1L), 0);
        }
        log.roll();
        File dir = log.dir();
        List<Long> bases = log.segmentBaseOffsets();
        LogConfig config = log.config();
        log.close();

        // Stage what a crash in the middle of replaceSegments leaves: a compacted copy of the first two
        // segments under .swap names while the originals are still live.
        Path staging = tmp.resolve("staging");
        Files.createDirectories(staging);
        try (var files = Files.list(dir.toPath())) {
            for (Path p : files.toList()) {
                Files.copy(p, staging.resolve(p.getFileName()));
            }
        }
        Files.delete(staging.resolve(LogFiles.CLEAN_SHUTDOWN));
        for (long base : bases.subList(2, bases.size())) {
            for (String suffix : List.of(LogFiles.LOG_SUFFIX, LogFiles.INDEX_SUFFIX, LogFiles.TIME_INDEX_SUFFIX)) {
                Files.delete(staging.resolve(LogFiles.filenamePrefix(base) + suffix));
            }
        }
        PartitionLog partial = PartitionLog.open(staging.toFile(), config, time, Scheduler.IMMEDIATE);
        partial.roll();
        new LogCleaner().clean(partial);
        new LogCleaner().clean(partial);
        assertThat(partial.segmentBaseOffsets()).containsExactly(bases.get(0), bases.get(2));
        partial.close();
        long swapBase = bases.get(0);
        for (String suffix : List.of(LogFiles.LOG_SUFFIX, LogFiles.INDEX_SUFFIX, LogFiles.TIME_INDEX_SUFFIX)) {
            String name = LogFiles.filenamePrefix(swapBase) + suffix;
            Files.copy(staging.resolve(name), dir.toPath().resolve(name + LogFiles.SWAP_SUFFIX));
        }
        Files.delete(dir.toPath().resolve(LogFiles.CLEAN_SHUTDOWN));

        log = PartitionLog.open(dir, config, time, Scheduler.IMMEDIATE);
        assertThat(log.segmentBaseOffsets()).doesNotContain(bases.get(1));
        assertThat(new File(dir, LogFiles.filenamePrefix(swapBase) + LogFiles.LOG_SUFFIX + LogFiles.SWAP_SUFFIX))
                .doesNotExist();
        List<TestBatches.Read> all = TestBatches.readAll(log, 0, 1 << 20);
        assertThat(all).extracting(TestBatches.Read::offset).isSorted().doesNotHaveDuplicates();
        assertThat(all.get(all.size() - 1).offset()).isEqualTo(199);
        assertThat(all.stream().filter(r -> r.offset() < bases.get(2)).count()).isLessThanOrEqualTo(10);
    }
}
