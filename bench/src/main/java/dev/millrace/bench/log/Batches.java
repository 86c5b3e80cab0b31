package dev.millrace.bench.log;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Random;

import dev.millrace.broker.log.LogConfig;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;

/**
 * The record batch every storage benchmark writes: {@value #RECORDS_PER_BATCH} records with no key
 * and a {@value #VALUE_BYTES}-byte random value each, uncompressed, RecordBatch v2 (about 16.6 KiB).
 * Also holds the log settings the benchmarks share. Stateless and thread-safe.
 */
public final class Batches {

    public static final int RECORDS_PER_BATCH = 16;
    public static final int VALUE_BYTES = 1024;

    /** Segment size of every benchmark log: 1 GiB. */
    public static final String SEGMENT_BYTES = String.valueOf(1 << 30);

    private Batches() {
    }

    /**
     * A fresh copy of the batch in a direct buffer (position 0, limit at its end). The log assigns
     * offsets by rewriting the header in place, so each appending thread needs its own copy.
     */
    public static ByteBuffer newBatch() {
        ByteBuffer heap = ByteBuffer.allocate(RECORDS_PER_BATCH * (VALUE_BYTES + 64) + 256);
        MemoryRecordsBuilder builder = MemoryRecords.builder(heap, Compression.NONE, TimestampType.CREATE_TIME, 0L);
        Random random = new Random(42);
        long timestamp = System.currentTimeMillis();
        for (int i = 0; i < RECORDS_PER_BATCH; i++) {
            byte[] value = new byte[VALUE_BYTES];
            random.nextBytes(value);
            builder.append(timestamp, null, value);
        }
        ByteBuffer bytes = builder.build().buffer();
        ByteBuffer direct = ByteBuffer.allocateDirect(bytes.remaining());
        direct.put(bytes).flip();
        return direct;
    }

    /** Size of the batch in bytes: the bytes one append writes. */
    public static int batchSizeInBytes() {
        return newBatch().remaining();
    }

    /** Log settings without fsync on append (Kafka's default flush policy). */
    public static LogConfig noFsyncConfig() {
        return new LogConfig(Map.of(LogConfig.SEGMENT_BYTES, SEGMENT_BYTES));
    }

    /** Log settings that fsync before every append returns, shared by concurrent appenders. */
    public static LogConfig groupCommitConfig() {
        return new LogConfig(Map.of(LogConfig.SEGMENT_BYTES, SEGMENT_BYTES, LogConfig.FLUSH_MESSAGES, "1"));
    }
}
