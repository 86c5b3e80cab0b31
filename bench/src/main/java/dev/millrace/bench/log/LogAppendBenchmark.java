package dev.millrace.bench.log;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;

import dev.millrace.broker.log.GroupCommit;
import dev.millrace.broker.log.LogAppendInfo;
import dev.millrace.broker.log.LogConfig;
import dev.millrace.broker.log.PartitionLog;
import dev.millrace.broker.log.Scheduler;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.utils.Time;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;

/**
 * Append throughput of {@link PartitionLog#appendAsLeader} beside plain {@link FileChannel} writes of
 * the same bytes with the same fsync policy. One op appends one batch from {@link Batches} (16
 * records of 1 KiB, uncompressed); ops/s times {@link Batches#batchSizeInBytes()} is the write rate.
 *
 * <ul>
 *   <li>{@code appendNoFsync}, {@code rawWriteNoFsync}: one thread, no fsync (the data reaches
 *       the page cache only).</li>
 *   <li>{@code appendGroupCommit}, {@code rawWriteGroupCommit}: four threads, each op returns only
 *       once its bytes are fsynced; the log runs with {@code flush.messages=1}, the raw file writes
 *       under a lock and shares {@code force(true)} through the same {@link GroupCommit}.</li>
 * </ul>
 *
 * <p>Each iteration writes into a fresh temporary directory (1 GiB segments) that is deleted after
 * it. Threading: the log or file is shared by the benchmark's threads, each thread appends its own
 * copy of the batch (the log rewrites the batch header in place).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgs = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
public class LogAppendBenchmark {

    /** This thread's copy of the batch. */
    @State(Scope.Thread)
    public static class Batch {
        ByteBuffer bytes;

        @Setup(Level.Trial)
        public void build() {
            bytes = Batches.newBatch();
        }

        MemoryRecords records() {
            return MemoryRecords.readableRecords(bytes.duplicate());
        }
    }

    /** A log in a fresh directory per iteration, with the flush policy of the subclass. */
    public abstract static class LogState {
        PartitionLog log;

        abstract LogConfig config();

        @Setup(Level.Iteration)
        public void open() throws IOException {
            log = PartitionLog.open(BenchDirs.create("append").toFile(), config(), Time.SYSTEM, Scheduler.IMMEDIATE);
        }

        @TearDown(Level.Iteration)
        public void discard() {
            BenchDirs.discard(log);
        }
    }

    @State(Scope.Benchmark)
    public static class NoFsyncLog extends LogState {
        @Override
        LogConfig config() {
            return Batches.noFsyncConfig();
        }
    }

    @State(Scope.Benchmark)
    public static class GroupCommitLog extends LogState {
        @Override
        LogConfig config() {
            return Batches.groupCommitConfig();
        }
    }

    /**
     * A plain file in a fresh directory per iteration. {@link #append} writes under a lock, so
     * concurrent writers append whole batches; {@link #appendDurably} then waits for a shared fsync.
     */
    @State(Scope.Benchmark)
    public static class RawFile {
        private final Object lock = new Object();
        private Path dir;
        private FileChannel channel;
        private GroupCommit groupCommit;
        private volatile long written;

        @Setup(Level.Iteration)
        public void open() throws IOException {
            dir = BenchDirs.create("raw-write");
            channel = FileChannel.open(dir.resolve("raw.log"), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            written = 0;
            groupCommit = new GroupCommit(this::forceAll, 0);
        }

        /** The flusher: like the log's, it notes what was written before forcing and reports that. */
        private long forceAll() throws IOException {
            long upTo = written;
            channel.force(true);
            return upTo;
        }

        /** Appends the batch; returns the file size after it. */
        long append(ByteBuffer batch) throws IOException {
            ByteBuffer src = batch.duplicate();
            synchronized (lock) {
                while (src.hasRemaining()) {
                    channel.write(src);
                }
                long end = written + batch.remaining();
                written = end;
                return end;
            }
        }

        long appendDurably(ByteBuffer batch) throws IOException, InterruptedException {
            long end = append(batch);
            groupCommit.awaitDurable(end);
            return end;
        }

        @TearDown(Level.Iteration)
        public void discard() throws IOException {
            try {
                channel.truncate(0);
                channel.close();
            } finally {
                BenchDirs.delete(dir);
            }
        }
    }

    @Benchmark
    @Threads(1)
    public LogAppendInfo appendNoFsync(NoFsyncLog state, Batch batch) {
        return state.log.appendAsLeader(batch.records(), 0);
    }

    @Benchmark
    @Threads(4)
    public LogAppendInfo appendGroupCommit(GroupCommitLog state, Batch batch) {
        return state.log.appendAsLeader(batch.records(), 0);
    }

    @Benchmark
    @Threads(1)
    public long rawWriteNoFsync(RawFile file, Batch batch) throws IOException {
        return file.append(batch.bytes);
    }

    @Benchmark
    @Threads(4)
    public long rawWriteGroupCommit(RawFile file, Batch batch) throws IOException, InterruptedException {
        return file.appendDurably(batch.bytes);
    }
}
