package dev.millrace.broker.share;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.Iterator;

import org.apache.kafka.common.record.internal.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Records;

/**
 * Reads a share-partition's log for a selective scan: up to {@code maxBytes} from an offset, as one buffer whose
 * batches the scan walks where they lie, where a file slice would be read batch by batch, two reads each. The last
 * batch is left out when it does not fit whole; a first batch larger than the read is walked from the file instead.
 * What a read returns is valid until the next.
 *
 * <p>A read of the log file maps the read's region of the segment (read-only) rather than copying it: a selective
 * scan looks only at each record's framing and headers, so the values it passes over (most of a JMS message's bytes)
 * are never touched, where {@code pread} copied all of them out of the page cache and the JDK copied them once more
 * from its temporary direct buffer into the heap (in a profile of the selective lookahead, the read was 57% of its
 * time, mostly those two copies). The region is one that the segment already holds, so nothing past the file's end is
 * ever mapped; a segment file shrinks only when recovery truncates a torn tail while the log loads, before anything
 * reads it (a mapped page cut off by a truncation would fail the access). A mapping is dropped by the garbage
 * collector once the next read has replaced it, as the log's index mappings are; a scan allocates little, but the
 * fetches that drive it allocate their responses, so young collections keep the number of live mappings to what was
 * read since the last one.
 *
 * <p>Not thread-safe: one per scanning thread (the share-partition's monitor, a lookahead thread).
 */
final class ScanReader {

    /** The buffer the last read's batches lie in, from position 0, or null when it returned the log's own records. */
    private ByteBuffer holder;

    Records read(ShareLog log, long offset, int maxBytes) {
        holder = null;
        Records records = log.read(offset, maxBytes);
        if (!(records instanceof FileRecords file)) {
            return records;
        }
        int size = Math.min(file.sizeInBytes(), maxBytes);
        if (size <= 0) {
            return records;
        }
        ByteBuffer mapped;
        try {
            Iterator<FileChannelRecordBatch> batches = file.batchIterator();
            if (!batches.hasNext()) {
                return records;
            }
            int start = batches.next().position();
            mapped = file.channel().map(FileChannel.MapMode.READ_ONLY, start, size);
        } catch (IOException e) {
            throw new UncheckedIOException("mapping " + size + " bytes of the log from offset " + offset, e);
        }
        MemoryRecords memory = MemoryRecords.readableRecords(mapped);
        if (!memory.batches().iterator().hasNext()) {
            return records; // the first batch is larger than the read
        }
        holder = mapped;
        return memory;
    }

    /**
     * The buffer the last {@link #read}'s batches lie in, one after another from position 0 (for {@link
     * dev.millrace.broker.log.BatchCursor#load(org.apache.kafka.common.record.internal.RecordBatch, ByteBuffer, int)}),
     * or null when that read returned the log's records as they were.
     */
    ByteBuffer holder() {
        return holder;
    }
}
