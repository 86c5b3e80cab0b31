package dev.millrace.bench.log;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;

import dev.millrace.broker.log.FetchDataInfo;
import dev.millrace.broker.log.PartitionLog;
import dev.millrace.broker.log.Scheduler;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Records;
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
 * Sequential reads from the page cache through {@link PartitionLog#read} beside plain
 * {@link FileChannel#read(ByteBuffer, long)} of the same segment file. One op copies
 * {@value #READ_BYTES} bytes into a direct buffer; ops/s times that is the read rate.
 *
 * <ul>
 *   <li>{@code read}: {@code log.read(offset, 1 MiB, true)}, copied out with
 *       {@link FileRecords#readInto}; the next read starts after the last whole batch copied (the
 *       partial batch the byte limit cut is read again), wrapping to offset 0 at the log end.</li>
 *   <li>{@code rawRead}: 1 MiB chunks of the log's {@code .log} file, back to back, wrapping to
 *       position 0 at the end of the file.</li>
 * </ul>
 *
 * <p>The trial setup appends {@value #LOG_BYTES} bytes of {@link Batches} batches (one 1 GiB
 * segment) and fsyncs them; the file stays in the page cache, so no disk I/O is measured. The
 * directory is deleted after the trial. Threading: one reader thread; the log and file are shared,
 * the buffer and read cursor are per thread.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgs = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
public class LogReadBenchmark {

    /** Bytes copied by one op. */
    public static final int READ_BYTES = 1 << 20;
    static final long LOG_BYTES = 256L << 20;

    /** The populated log and a plain read-only channel on its segment file. */
    @State(Scope.Benchmark)
    public static class LogState {
        PartitionLog log;
        FileChannel segment;
        long segmentSize;

        @Setup(Level.Trial)
        public void populate() throws IOException {
            log = PartitionLog.open(BenchDirs.create("read").toFile(), Batches.noFsyncConfig(), Time.SYSTEM,
                    Scheduler.IMMEDIATE);
            ByteBuffer batch = Batches.newBatch();
            while (log.size() < LOG_BYTES) {
                log.appendAsLeader(MemoryRecords.readableRecords(batch.duplicate()), 0);
            }
            log.flush();
            File[] files = log.dir().listFiles((dir, name) -> name.endsWith(".log"));
            if (files == null || files.length != 1) {
                throw new IllegalStateException("Expected one segment file in " + log.dir());
            }
            segment = FileChannel.open(files[0].toPath(), StandardOpenOption.READ);
            segmentSize = segment.size();
        }

        @TearDown(Level.Trial)
        public void discard() throws IOException {
            try {
                segment.close();
            } finally {
                BenchDirs.discard(log);
            }
        }
    }

    /** This thread's destination buffer and position: a log offset or a file position. */
    @State(Scope.Thread)
    public static class Cursor {
        ByteBuffer buffer;
        long next;

        @Setup(Level.Trial)
        public void allocate() {
            buffer = ByteBuffer.allocateDirect(READ_BYTES);
        }
    }

    @Benchmark
    @Threads(1)
    public long read(LogState state, Cursor cursor) throws IOException {
        FetchDataInfo info = state.log.read(cursor.next, READ_BYTES, true);
        Records records = info.records();
        if (!(records instanceof FileRecords file) || file.sizeInBytes() == 0) {
            cursor.next = 0;
            return 0;
        }
        if (file.sizeInBytes() > cursor.buffer.capacity()) {
            throw new IllegalStateException("A batch larger than " + READ_BYTES + " bytes at offset " + cursor.next);
        }
        ByteBuffer buffer = cursor.buffer;
        buffer.clear().limit(file.sizeInBytes());
        file.readInto(buffer, 0);
        long next = cursor.next;
        for (MutableRecordBatch batch : MemoryRecords.readableRecords(buffer).batches()) {
            next = batch.nextOffset();
        }
        cursor.next = next >= state.log.logEndOffset() ? 0 : next;
        return next;
    }

    @Benchmark
    @Threads(1)
    public int rawRead(LogState state, Cursor cursor) throws IOException {
        ByteBuffer buffer = cursor.buffer;
        buffer.clear();
        long position = cursor.next;
        while (buffer.hasRemaining() && position < state.segmentSize) {
            int n = state.segment.read(buffer, position);
            if (n < 0) {
                break;
            }
            position += n;
        }
        cursor.next = position >= state.segmentSize ? 0 : position;
        return buffer.position();
    }
}
