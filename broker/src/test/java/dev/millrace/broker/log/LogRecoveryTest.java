package dev.millrace.broker.log;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;
import java.util.TreeMap;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.internal.FileRecords;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crash recovery in a seeded loop: append, stop without a clean close, damage a segment that
 * recovery must look at (cut it at a random byte, or overwrite a random range with garbage), reopen.
 * Every record is written with the value "seed-offset", so a record read back at the wrong offset,
 * or a damaged one, is caught. A failure names its seed.
 */
@Timeout(120)
class LogRecoveryTest {

    private static final int SEEDS = 150;
    private static final List<Compression> CODECS = List.of(Compression.NONE, Compression.gzip().build(),
            Compression.lz4().build());

    @TempDir
    Path tmp;

    @Test
    void shouldKeepEveryWholeBatchBeforeTheDamageAndNeverReturnACorruptOne() throws IOException {
        for (long seed = 0; seed < SEEDS; seed++) {
            runOnce(seed);
        }
    }

    @Test
    void shouldRecoverATornWriteAtTheEndOfTheActiveSegment() throws IOException {
        File dir = tmp.resolve("torn-0").toFile();
        ManualTime time = new ManualTime(0);
        PartitionLog log = PartitionLog.open(dir, LogConfig.defaults(), time, Scheduler.IMMEDIATE);
        for (int i = 0; i < 5; i++) {
            log.appendAsLeader(TestBatches.batch(3, i), 0);
        }
        long goodSize = log.size();
        log.appendAsLeader(TestBatches.batch(3, 9), 0);
        log.closeAsIfCrashed();
        File segment = LogFiles.logFile(dir, 0);
        try (RandomAccessFile file = new RandomAccessFile(segment, "rw")) {
            file.setLength(goodSize + 20);
        }
        PartitionLog recovered = PartitionLog.open(dir, LogConfig.defaults(), time, Scheduler.IMMEDIATE);
        try {
            assertThat(recovered.logEndOffset()).isEqualTo(15);
            assertThat(recovered.size()).isEqualTo(goodSize);
            assertThat(segment.length()).isEqualTo(goodSize);
            assertThat(recovered.appendAsLeader(TestBatches.batch(1, 1), 0).firstOffset()).isEqualTo(15);
            assertThat(TestBatches.readAll(recovered, 0, 1 << 20)).hasSize(16);
        } finally {
            recovered.close();
        }
    }

    private void runOnce(long seed) throws IOException {
        Random random = new Random(seed);
        File dir = tmp.resolve("seed-" + seed).toFile();
        ManualTime time = new ManualTime(1_000_000);
        LogConfig config = new LogConfig(Map.of(
                LogConfig.SEGMENT_BYTES, String.valueOf(600 + random.nextInt(3000)),
                LogConfig.INDEX_INTERVAL_BYTES, String.valueOf(random.nextInt(400)),
                LogConfig.FLUSH_MESSAGES, String.valueOf(List.of(1L, 7L, Long.MAX_VALUE).get(random.nextInt(3)))));
        PartitionLog log = PartitionLog.open(dir, config, time, Scheduler.IMMEDIATE);
        long next = 0;
        int appends = 10 + random.nextInt(60);
        for (int a = 0; a < appends; a++) {
            int count = 1 + random.nextInt(5);
            long first = next;
            LogAppendInfo info = log.appendAsLeader(TestBatches.batch(count, time.milliseconds(),
                    CODECS.get(random.nextInt(CODECS.size())), i -> null,
                    i -> TestBatches.bytes(seed + "-" + (first + i))), 0);
            assertThat(info.firstOffset()).as("seed %d", seed).isEqualTo(first);
            next += count;
            time.advance(random.nextInt(10));
            if (random.nextInt(10) == 0) {
                log.checkpoint();
            }
        }
        long endBeforeCrash = log.logEndOffset();
        log.closeAsIfCrashed();

        long safeEnd = damage(dir, random, seed);

        PartitionLog recovered = PartitionLog.open(dir, config, time, Scheduler.IMMEDIATE);
        try {
            assertThat(recovered.logEndOffset()).as("seed %d: log end after recovery", seed)
                    .isBetween(safeEnd, endBeforeCrash);
            List<TestBatches.Read> records = TestBatches.readAll(recovered, 0, 1 + random.nextInt(5000));
            assertThat(records).as("seed %d: records after recovery", seed).hasSize((int) recovered.logEndOffset());
            for (int i = 0; i < records.size(); i++) {
                assertThat(records.get(i).offset()).as("seed %d", seed).isEqualTo(i);
                assertThat(records.get(i).value()).as("seed %d: value at offset %d", seed, i).isEqualTo(seed + "-" + i);
            }
            long end = recovered.logEndOffset();
            LogAppendInfo after = recovered.appendAsLeader(TestBatches.batch(2, time.milliseconds(), Compression.NONE,
                    i -> null, i -> TestBatches.bytes(seed + "-" + (end + i))), 0);
            assertThat(after.firstOffset()).as("seed %d", seed).isEqualTo(end);
            assertThat(TestBatches.readAll(recovered, end, 1 << 20)).as("seed %d", seed).hasSize(2);
        } finally {
            recovered.close();
        }
    }

    /**
     * Damages a segment at or after the one holding the checkpointed recovery point.
     *
     * @return the offset after the last batch that lies wholly before the damage
     */
    private static long damage(File dir, Random random, long seed) throws IOException {
        TreeMap<Long, File> segments = new TreeMap<>();
        for (File f : dir.listFiles()) {
            if (f.getName().endsWith(LogFiles.LOG_SUFFIX)) {
                segments.put(LogFiles.offsetFromFileName(f.getName()), f);
            }
        }
        OptionalLong checkpointed = new OffsetCheckpointFile(new File(dir, LogFiles.RECOVERY_POINT_CHECKPOINT)).read();
        long firstRecovered = segments.floorKey(checkpointed.orElse(0L));
        List<Long> candidates = new ArrayList<>(segments.tailMap(firstRecovered, true).keySet());
        candidates.removeIf(base -> segments.get(base).length() == 0);
        if (candidates.isEmpty()) {
            return segments.lastKey();
        }
        long base = candidates.get(random.nextInt(candidates.size()));
        File target = segments.get(base);
        long length = target.length();
        long position = random.nextInt((int) length);
        long safeEnd = base;
        FileRecords records = FileRecords.open(target, true, false, 0, false);
        try {
            for (FileChannelRecordBatch batch : records.batches()) {
                if (batch.position() + batch.sizeInBytes() <= position) {
                    safeEnd = batch.nextOffset();
                }
            }
        } finally {
            records.channel().close();
        }
        try (RandomAccessFile file = new RandomAccessFile(target, "rw")) {
            if (random.nextBoolean()) {
                file.setLength(position);
            } else {
                byte[] garbage = new byte[(int) Math.min(1 + random.nextInt(64), length - position)];
                random.nextBytes(garbage);
                file.seek(position);
                file.write(garbage);
            }
        }
        return safeEnd;
    }
}
