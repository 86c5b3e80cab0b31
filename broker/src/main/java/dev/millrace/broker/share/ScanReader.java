package dev.millrace.broker.share;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;

import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Records;

/**
 * Reads a share-partition's log for a selective scan: up to {@code maxBytes} from an offset into a buffer it reuses,
 * with one read, where a file slice would be read batch by batch, two reads each, as the scan walks it. The last batch
 * is left out when it does not fit whole; a first batch larger than the read is walked from the file instead. What a
 * read returns is valid until the next.
 *
 * <p>Not thread-safe: one per scanning thread (the share-partition's monitor, a lookahead).
 */
final class ScanReader {

    private ByteBuffer buffer;
    /** The buffer the last read's batches lie in, from position 0, or null when it returned the log's own records. */
    private ByteBuffer holder;

    Records read(ShareLog log, long offset, int maxBytes) {
        holder = null;
        Records records = log.read(offset, maxBytes);
        if (!(records instanceof FileRecords file)) {
            return records;
        }
        int size = Math.min(file.sizeInBytes(), maxBytes);
        if (buffer == null || buffer.capacity() < size) {
            buffer = ByteBuffer.allocate(Math.max(size, 64 * 1024));
        }
        buffer.clear().limit(size);
        try {
            file.readInto(buffer, 0);
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + size + " bytes of the log from offset " + offset, e);
        }
        MemoryRecords memory = MemoryRecords.readableRecords(buffer);
        if (memory.sizeInBytes() > 0 && !memory.batches().iterator().hasNext()) {
            return records;
        }
        holder = buffer;
        return memory;
    }

    /**
     * The heap buffer the last {@link #read}'s batches lie in, one after another from position 0 (for {@link
     * dev.millrace.broker.log.BatchCursor#load(org.apache.kafka.common.record.internal.RecordBatch, ByteBuffer, int)}),
     * or null when that read returned the log's records as they were.
     */
    ByteBuffer holder() {
        return holder;
    }
}
