package dev.millrace.broker.log;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Readers tail the log while one appender writes and segments roll; every record a reader sees is
 * whole, at its offset, and in order. Closing the log under running readers gives them an error,
 * never bad data, and the reopened log holds everything.
 */
@Timeout(60)
class ConcurrentReadWriteTest {

    private static final int BATCHES = 3000;

    @TempDir
    Path tmp;

    @Test
    void shouldLetReadersTailTheLogWhileItIsAppendedAndRolled() throws Exception {
        LogConfig config = new LogConfig(Map.of(LogConfig.SEGMENT_BYTES, "4000", LogConfig.INDEX_INTERVAL_BYTES, "256"));
        PartitionLog log = PartitionLog.open(tmp.resolve("r-0").toFile(), config, Time.SYSTEM, Scheduler.IMMEDIATE);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            Future<Long> appender = pool.submit(() -> appendAll(log, new Random(7)));
            List<Future<Long>> readers = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                Random random = new Random(100 + r);
                readers.add(pool.submit(() -> tail(log, random, appender)));
            }
            long total = appender.get(50, TimeUnit.SECONDS);
            for (Future<Long> reader : readers) {
                assertThat(reader.get(50, TimeUnit.SECONDS)).isEqualTo(total);
            }
            assertThat(log.numberOfSegments()).isGreaterThan(10);
        } finally {
            pool.shutdownNow();
            log.close();
        }
    }

    @Test
    void shouldFailReadsCleanlyWhenTheLogClosesUnderThemAndKeepEverythingForTheReopen() throws Exception {
        LogConfig config = new LogConfig(Map.of(LogConfig.SEGMENT_BYTES, "4000"));
        PartitionLog log = PartitionLog.open(tmp.resolve("c-0").toFile(), config, Time.SYSTEM, Scheduler.IMMEDIATE);
        long total = appendAll(log, new Random(3));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        AtomicBoolean stop = new AtomicBoolean();
        try {
            List<Future<String>> readers = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                Random random = new Random(r);
                readers.add(pool.submit(() -> readUntilFailure(log, random, total, stop)));
            }
            log.close();
            stop.set(true);
            for (Future<String> reader : readers) {
                assertThat(reader.get(30, TimeUnit.SECONDS)).isIn("stopped", "failed");
            }
        } finally {
            pool.shutdownNow();
        }
        PartitionLog reopened = PartitionLog.open(tmp.resolve("c-0").toFile(), config, Time.SYSTEM, Scheduler.IMMEDIATE);
        try {
            List<TestBatches.Read> all = TestBatches.readAll(reopened, 0, 1 << 16);
            assertThat(all).hasSize((int) total);
            for (int i = 0; i < all.size(); i++) {
                assertThat(all.get(i).value()).isEqualTo(String.valueOf(i));
            }
        } finally {
            reopened.close();
        }
    }

    private static long appendAll(PartitionLog log, Random random) {
        long next = 0;
        for (int b = 0; b < BATCHES; b++) {
            int count = 1 + random.nextInt(10);
            long first = next;
            Compression codec = random.nextBoolean() ? Compression.NONE : Compression.lz4().build();
            log.appendAsLeader(TestBatches.batch(count, 1L, codec, i -> null,
                    i -> TestBatches.bytes(String.valueOf(first + i))), 0);
            next += count;
        }
        return next;
    }

    /** Reads from offset 0 until it has seen every record the appender wrote; returns the count seen. */
    private static long tail(PartitionLog log, Random random, Future<Long> appender) throws Exception {
        long next = 0;
        while (!appender.isDone() || next < log.logEndOffset()) {
            FetchDataInfo info = log.read(next, 1 + random.nextInt(3000), random.nextBoolean());
            long before = next;
            for (TestBatches.Read r : TestBatches.records(info.records())) {
                if (r.offset() < next) {
                    continue;
                }
                assertThat(r.offset()).isEqualTo(next);
                assertThat(r.value()).isEqualTo(String.valueOf(next));
                next++;
            }
            if (next == before) {
                // caught up with the appender (or the byte limit cut the batch): let it run
                Thread.yield();
            }
        }
        return next;
    }

    private static String readUntilFailure(PartitionLog log, Random random, long total, AtomicBoolean stop) {
        long next = 0;
        while (!stop.get()) {
            try {
                FetchDataInfo info = log.read(next, 1 + random.nextInt(3000), true);
                for (TestBatches.Read r : TestBatches.records(info.records())) {
                    if (r.offset() >= next) {
                        assertThat(r.value()).isEqualTo(String.valueOf(r.offset()));
                        next = r.offset() + 1;
                    }
                }
            } catch (KafkaException e) {
                return "failed";
            }
            if (next >= total) {
                next = 0;
            }
        }
        return "stopped";
    }
}
