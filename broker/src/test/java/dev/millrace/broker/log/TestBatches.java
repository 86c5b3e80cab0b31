package dev.millrace.broker.log;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;

/** Builds record batches for tests and reads records back out of a log. */
final class TestBatches {

    private TestBatches() {
    }

    /** One batch of {@code count} records with values "v0".."vN" and the given timestamp. */
    static MemoryRecords batch(int count, long timestamp) {
        return batch(count, timestamp, Compression.NONE, i -> null, i -> bytes("v" + i));
    }

    static MemoryRecords batch(int count, long timestamp, Compression compression,
                               java.util.function.IntFunction<byte[]> key,
                               java.util.function.IntFunction<byte[]> value) {
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(1024), compression,
                TimestampType.CREATE_TIME, 0L);
        for (int i = 0; i < count; i++) {
            builder.append(timestamp, key.apply(i), value.apply(i));
        }
        return builder.build();
    }

    /** A batch of one record with a key and value (null value = tombstone). */
    static MemoryRecords keyed(String key, String value, long timestamp) {
        return batch(1, timestamp, Compression.NONE, i -> bytes(key), i -> value == null ? null : bytes(value));
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String string(ByteBuffer buffer) {
        if (buffer == null) {
            return null;
        }
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** A copy of a record's offset, key, value and timestamp, readable after the log is closed. */
    record Read(long offset, String key, String value, long timestamp) {
    }

    /** Every whole record in {@code records}, validating each batch's CRC. */
    static List<Read> records(Records records) {
        List<Read> out = new ArrayList<>();
        for (RecordBatch batch : records.batches()) {
            batch.ensureValid();
            for (Record r : batch) {
                out.add(new Read(r.offset(), string(r.key()), string(r.value()), r.timestamp()));
            }
        }
        return out;
    }

    /** Every record in the log from {@code from} to the log end, reading {@code maxBytes} at a time. */
    static List<Read> readAll(PartitionLog log, long from, int maxBytes) {
        List<Read> out = new ArrayList<>();
        long next = from;
        while (next < log.logEndOffset()) {
            FetchDataInfo info = log.read(next, maxBytes, true);
            long before = next;
            for (Read r : records(info.records())) {
                if (r.offset() >= next) {
                    out.add(r);
                    next = r.offset() + 1;
                }
            }
            if (next == before) {
                // a batch with no records left after compaction: step past it
                next = nextBatchOffset(info.records(), next);
            }
        }
        return out;
    }

    private static long nextBatchOffset(Records records, long current) {
        for (RecordBatch batch : records.batches()) {
            if (batch.lastOffset() >= current) {
                return batch.nextOffset();
            }
        }
        throw new AssertionError("no progress reading at offset " + current);
    }
}
