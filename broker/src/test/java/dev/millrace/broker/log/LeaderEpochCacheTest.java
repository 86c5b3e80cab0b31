package dev.millrace.broker.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.OptionalLong;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Assign rules, OffsetsForLeaderEpoch answers, truncation and the checkpoint file of {@link LeaderEpochCache}. */
@Timeout(20)
class LeaderEpochCacheTest {

    @TempDir
    Path tmp;

    private File file() {
        return tmp.resolve(LogFiles.LEADER_EPOCH_CHECKPOINT).toFile();
    }

    private LeaderEpochCache cache(EpochEntry... entries) throws IOException {
        LeaderEpochCache cache = LeaderEpochCache.open(file());
        for (EpochEntry entry : entries) {
            cache.assign(entry.epoch(), entry.startOffset());
        }
        return cache;
    }

    private static EpochEntry e(int epoch, long startOffset) {
        return new EpochEntry(epoch, startOffset);
    }

    @Test
    void shouldRecordTheFirstOffsetOfEachNewEpoch() throws IOException {
        LeaderEpochCache cache = cache(e(0, 0), e(2, 10), e(5, 25));

        assertThat(cache.entries()).containsExactly(e(0, 0), e(2, 10), e(5, 25));
        assertThat(cache.latestEpoch()).isEqualTo(OptionalInt.of(5));
        assertThat(cache.startOffsetOf(2)).isEqualTo(OptionalLong.of(10));
        assertThat(cache.startOffsetOf(3)).isEmpty();
    }

    @Test
    void shouldIgnoreAnEpochNotAboveTheLatestAndKeepTheEarlierStartOfTheSameEpoch() throws IOException {
        LeaderEpochCache cache = cache(e(1, 0), e(3, 10));

        cache.assign(3, 20);
        cache.assign(2, 30);

        assertThat(cache.entries()).containsExactly(e(1, 0), e(3, 10));
    }

    @Test
    void shouldReplaceEntriesWhoseStartIsNotBelowTheNewEntrysStart() throws IOException {
        LeaderEpochCache cache = cache(e(1, 0), e(2, 10), e(3, 20));

        cache.assign(4, 20);
        assertThat(cache.entries()).containsExactly(e(1, 0), e(2, 10), e(4, 20));

        cache.assign(6, 5);
        assertThat(cache.entries()).containsExactly(e(1, 0), e(6, 5));
    }

    @Test
    void shouldRefuseNegativeEpochsAndOffsets() throws IOException {
        LeaderEpochCache cache = cache();

        assertThatThrownBy(() -> cache.assign(-1, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("epoch -1");
        assertThatThrownBy(() -> cache.assign(0, -5)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("offset -5");
    }

    @Test
    void shouldAnswerTheLatestEpochWithTheLogEnd() throws IOException {
        LeaderEpochCache cache = cache(e(1, 0), e(4, 10));

        assertThat(cache.endOffsetFor(4, 37)).isEqualTo(new EpochEndOffset(4, 37));
    }

    @Test
    void shouldAnswerAnOlderEpochWithTheStartOfTheNextEpoch() throws IOException {
        LeaderEpochCache cache = cache(e(1, 0), e(4, 10), e(6, 30));

        assertThat(cache.endOffsetFor(1, 50)).isEqualTo(new EpochEndOffset(1, 10));
        assertThat(cache.endOffsetFor(4, 50)).isEqualTo(new EpochEndOffset(4, 30));
    }

    @Test
    void shouldAnswerAnUnknownEpochBetweenKnownOnesWithTheLargestEpochBelowIt() throws IOException {
        LeaderEpochCache cache = cache(e(1, 0), e(4, 10), e(6, 30));

        assertThat(cache.endOffsetFor(2, 50)).isEqualTo(new EpochEndOffset(1, 10));
        assertThat(cache.endOffsetFor(5, 50)).isEqualTo(new EpochEndOffset(4, 30));
    }

    @Test
    void shouldAnswerUndefinedBelowTheFirstEpochAboveTheLatestAndWhenEmpty() throws IOException {
        LeaderEpochCache cache = cache(e(3, 5), e(4, 10));

        assertThat(cache.endOffsetFor(2, 50)).isEqualTo(EpochEndOffset.UNDEFINED);
        assertThat(cache.endOffsetFor(-1, 50)).isEqualTo(EpochEndOffset.UNDEFINED);
        assertThat(cache.endOffsetFor(7, 50)).isEqualTo(EpochEndOffset.UNDEFINED);
        assertThat(cache().endOffsetFor(0, 50)).isEqualTo(new EpochEndOffset(-1, -1));
        assertThat(EpochEndOffset.UNDEFINED.isUndefined()).isTrue();
    }

    @Test
    void shouldDropEntriesStartingAtOrAfterTheNewEndWhenTruncatedFromTheEnd() throws IOException {
        LeaderEpochCache cache = cache(e(1, 0), e(2, 10), e(3, 20));

        cache.truncateFromEnd(21);
        assertThat(cache.entries()).containsExactly(e(1, 0), e(2, 10), e(3, 20));

        cache.truncateFromEnd(20);
        assertThat(cache.entries()).containsExactly(e(1, 0), e(2, 10));

        cache.truncateFromEnd(0);
        assertThat(cache.entries()).isEmpty();
        assertThat(cache.latestEpoch()).isEmpty();
    }

    @Test
    void shouldDropWhollyBelowEntriesAndMoveTheFirstKeptStartWhenTruncatedFromTheStart() throws IOException {
        LeaderEpochCache cache = cache(e(1, 0), e(2, 10), e(3, 20));

        cache.truncateFromStart(15);
        assertThat(cache.entries()).containsExactly(e(2, 15), e(3, 20));

        cache.truncateFromStart(20);
        assertThat(cache.entries()).containsExactly(e(3, 20));

        cache.truncateFromStart(42);
        assertThat(cache.entries()).containsExactly(e(3, 42));
        assertThat(LeaderEpochCache.open(file()).entries()).containsExactly(e(3, 42));
    }

    @Test
    void shouldKeepTheCacheWhenTheLogStartDoesNotMovePastItsFirstEntry() throws IOException {
        LeaderEpochCache cache = cache(e(1, 10), e(2, 20));

        cache.truncateFromStart(5);

        assertThat(cache.entries()).containsExactly(e(1, 10), e(2, 20));
    }

    @Test
    void shouldSurviveReopenThroughTheCheckpointFile() throws IOException {
        cache(e(0, 0), e(2, 1500), e(5, 98000));

        assertThat(Files.readAllLines(file().toPath())).containsExactly("0", "3", "0 0", "2 1500", "5 98000");
        assertThat(LeaderEpochCache.open(file()).entries()).containsExactly(e(0, 0), e(2, 1500), e(5, 98000));
        assertThat(tmp.resolve(LogFiles.LEADER_EPOCH_CHECKPOINT + ".tmp")).doesNotExist();
    }

    @Test
    void shouldWriteAnEmptyCheckpointWhenCleared() throws IOException {
        LeaderEpochCache cache = cache(e(0, 0), e(2, 15));

        cache.clearAndFlush();

        assertThat(cache.entries()).isEmpty();
        assertThat(Files.readAllLines(file().toPath())).containsExactly("0", "0");
        assertThat(LeaderEpochCache.open(file()).entries()).isEmpty();
    }

    @Test
    void shouldRejectACheckpointThatIsNotInTheFormatNamingTheLine() throws IOException {
        Files.writeString(file().toPath(), "0\n2\n3 10\n2 20\n", StandardCharsets.UTF_8);
        assertThatThrownBy(() -> LeaderEpochCache.open(file())).isInstanceOf(IOException.class)
                .hasMessageContaining("line 4").hasMessageContaining(file().getName());

        Files.writeString(file().toPath(), "0\n3\n1 0\n", StandardCharsets.UTF_8);
        assertThatThrownBy(() -> LeaderEpochCache.open(file())).isInstanceOf(IOException.class)
                .hasMessageContaining("announces 3 entries");

        Files.writeString(file().toPath(), "7\n0\n", StandardCharsets.UTF_8);
        assertThatThrownBy(() -> LeaderEpochCache.open(file())).isInstanceOf(IOException.class)
                .hasMessageContaining("version 0");

        Files.writeString(file().toPath(), "0\n1\n1 x\n", StandardCharsets.UTF_8);
        assertThatThrownBy(() -> LeaderEpochCache.open(file())).isInstanceOf(IOException.class)
                .hasMessageContaining("line 3 is not a start offset");
    }

    @Test
    void shouldListEntriesAsAnImmutableSnapshot() throws IOException {
        LeaderEpochCache cache = cache(e(0, 0));
        List<EpochEntry> before = cache.entries();

        cache.assign(1, 5);

        assertThat(before).containsExactly(e(0, 0));
        assertThatThrownBy(() -> before.add(e(9, 9))).isInstanceOf(UnsupportedOperationException.class);
    }

    // ---- the cache inside a PartitionLog ----

    private final ManualTime time = new ManualTime(1_000_000L);

    private File logDir() {
        return tmp.resolve("p-0").toFile();
    }

    private PartitionLog openLog() throws IOException {
        return PartitionLog.open(logDir(), new LogConfig(Map.of(LogConfig.SEGMENT_BYTES, "300")), time,
                Scheduler.IMMEDIATE);
    }

    private static MemoryRecords fromLeader(long baseOffset, int epoch, int count) {
        SimpleRecord[] records = new SimpleRecord[count];
        for (int i = 0; i < count; i++) {
            records[i] = new SimpleRecord(1_000L + i, null, TestBatches.bytes("r" + (baseOffset + i)));
        }
        return MemoryRecords.withRecords(baseOffset, Compression.NONE, epoch, records);
    }

    /** Leader appends under epochs 0, 0, 3, 3, 7 (two records each), across several segments. */
    private static void appendUnderEpochs(PartitionLog log) {
        for (int epoch : new int[] {0, 0, 3, 3, 7}) {
            log.appendAsLeader(TestBatches.batch(2, 1_000L), epoch);
        }
    }

    @Test
    void shouldAssignTheLeaderEpochAtTheFirstOffsetOfALeaderAppend() throws IOException {
        try (PartitionLog log = openLog()) {
            appendUnderEpochs(log);

            assertThat(log.leaderEpochCache().entries()).containsExactly(e(0, 0), e(3, 4), e(7, 8));
            assertThat(log.endOffsetForEpoch(0)).isEqualTo(new EpochEndOffset(0, 4));
            assertThat(log.endOffsetForEpoch(5)).isEqualTo(new EpochEndOffset(3, 8));
            assertThat(log.endOffsetForEpoch(7)).isEqualTo(new EpochEndOffset(7, 10));
        }
    }

    @Test
    void shouldLetANewLeaderRecordItsEpochAtTheLogEndBeforeAppending() throws IOException {
        try (PartitionLog log = openLog()) {
            appendUnderEpochs(log);

            log.assignLeaderEpochAtLogEnd(8);

            assertThat(log.endOffsetForEpoch(7)).isEqualTo(new EpochEndOffset(7, 10));
            assertThat(log.endOffsetForEpoch(8)).isEqualTo(new EpochEndOffset(8, 10));
            log.appendAsLeader(TestBatches.batch(1, 1_000L), 8);
            assertThat(log.leaderEpochCache().entries()).endsWith(e(7, 8), e(8, 10));
            assertThatThrownBy(() -> log.assignLeaderEpochAtLogEnd(-1)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("-1");
        }
    }

    @Test
    void shouldBuildTheCacheFromTheEpochsOfFollowerBatches() throws IOException {
        try (PartitionLog log = openLog()) {
            log.appendAsFollower(fromLeader(0, 1, 2));
            log.appendAsFollower(IdempotentAppendTest.concat(fromLeader(2, 1, 1), fromLeader(3, 4, 2)));
            log.appendAsFollower(fromLeader(5, RecordBatch.NO_PARTITION_LEADER_EPOCH, 1));
            log.appendAsFollower(fromLeader(6, 6, 1));

            assertThat(log.leaderEpochCache().entries()).containsExactly(e(1, 0), e(4, 3), e(6, 6));
        }
    }

    @Test
    void shouldRebuildAMissingCheckpointFromTheBatches() throws IOException {
        try (PartitionLog log = openLog()) {
            appendUnderEpochs(log);
            assertThat(log.numberOfSegments()).isGreaterThan(1);
        }
        File checkpoint = new File(logDir(), LogFiles.LEADER_EPOCH_CHECKPOINT);
        Files.delete(checkpoint.toPath());

        try (PartitionLog log = openLog()) {
            assertThat(log.leaderEpochCache().entries()).containsExactly(e(0, 0), e(3, 4), e(7, 8));
        }
        assertThat(LeaderEpochCache.open(checkpoint).entries()).containsExactly(e(0, 0), e(3, 4), e(7, 8));
    }

    @Test
    void shouldRebuildACorruptCheckpointFromTheBatches() throws IOException {
        try (PartitionLog log = openLog()) {
            appendUnderEpochs(log);
        }
        File checkpoint = new File(logDir(), LogFiles.LEADER_EPOCH_CHECKPOINT);
        Files.writeString(checkpoint.toPath(), "0\n3\n0 0\n3 4\n", StandardCharsets.UTF_8);

        try (PartitionLog log = openLog()) {
            assertThat(log.leaderEpochCache().entries()).containsExactly(e(0, 0), e(3, 4), e(7, 8));
        }
    }

    @Test
    void shouldDropCheckpointedEpochsPastTheRecoveredLogEnd() throws IOException {
        try (PartitionLog log = openLog()) {
            appendUnderEpochs(log);
        }
        // what a crash between recording epoch 9 and writing its records leaves behind
        new LeaderEpochCheckpointFile(new File(logDir(), LogFiles.LEADER_EPOCH_CHECKPOINT))
                .write(List.of(e(0, 0), e(3, 4), e(7, 8), e(9, 10)));

        try (PartitionLog log = openLog()) {
            assertThat(log.leaderEpochCache().entries()).containsExactly(e(0, 0), e(3, 4), e(7, 8));
            assertThat(log.endOffsetForEpoch(9)).isEqualTo(EpochEndOffset.UNDEFINED);
        }
    }

    @Test
    void shouldDropTheEpochOfATornTailThatRecoveryCut() throws IOException {
        PartitionLog crashed = openLog();
        appendUnderEpochs(crashed);                     // the last batch, offsets 8-9, is the only one of epoch 7
        crashed.closeAsIfCrashed();
        File[] logs = logDir().listFiles((d, name) -> name.endsWith(LogFiles.LOG_SUFFIX));
        java.util.Arrays.sort(logs);
        File last = logs[logs.length - 1];
        try (java.io.RandomAccessFile file = new java.io.RandomAccessFile(last, "rw")) {
            file.setLength(file.length() - 5);          // tear the last batch
        }

        try (PartitionLog log = openLog()) {
            assertThat(log.logEndOffset()).isEqualTo(8);
            assertThat(log.leaderEpochCache().entries()).containsExactly(e(0, 0), e(3, 4));
            assertThat(log.endOffsetForEpoch(3)).isEqualTo(new EpochEndOffset(3, 8));
        }
    }

    @Test
    void shouldMoveTheFirstEpochWithTheLogStartOffset() throws IOException {
        try (PartitionLog log = openLog()) {
            appendUnderEpochs(log);

            log.maybeIncrementLogStartOffset(5);

            assertThat(log.leaderEpochCache().entries()).containsExactly(e(3, 5), e(7, 8));
            assertThat(log.endOffsetForEpoch(0)).isEqualTo(EpochEndOffset.UNDEFINED);
        }
        try (PartitionLog log = openLog()) {
            assertThat(log.leaderEpochCache().entries()).containsExactly(e(3, 5), e(7, 8));
        }
    }
}
