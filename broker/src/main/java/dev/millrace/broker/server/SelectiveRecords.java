package dev.millrace.broker.server;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.common.utils.internals.Crc32C;

import dev.millrace.broker.share.SelectorMatcher;
import dev.millrace.protocol.selector.Selector;

/**
 * Filters fetched record batches by a JMS selector, for consumers whose Fetch RackId carries one
 * ({@link dev.millrace.protocol.selector.MemberSelector}): JMS topic subscribers, so that messages they do not select
 * never cross the network.
 *
 * <p>The offsets must still advance over what was left out, or the consumer would fetch it again forever. So every
 * batch keeps its header fields (base offset, last offset, producer id and epoch, base sequence, transactional flag,
 * partition leader epoch, timestamp type) and loses only records:
 * <pre>
 *   every record matches  -> the batch as stored
 *   some records match    -> a new uncompressed batch holding them at their own offsets; its last offset delta and
 *                            max timestamp are set back to the stored batch's (CRC recomputed), so the next
 *                            fetch starts after it
 *   no record matches     -> an empty batch (header only, record count 0) spanning the same offsets, as log
 *                            compaction leaves them; consumers skip it and move past its last offset
 *   control batches       -> as stored (read_committed consumers need the markers)
 * </pre>
 * A record that is not a valid JMS message never matches. Zero-copy is lost for filtered fetches.
 *
 * <p>Not thread-safe: one per fetch.
 */
final class SelectiveRecords {

    // v2 batch header positions (KIP-98 layout): the CRC (CRC-32C) covers everything from the attributes on
    private static final int CRC = 17;
    private static final int ATTRIBUTES = 21;
    private static final int LAST_OFFSET_DELTA = 23;
    private static final int MAX_TIMESTAMP = 35;

    private final SelectorMatcher matcher = new SelectorMatcher();
    private final Selector selector;

    SelectiveRecords(Selector selector) {
        this.selector = selector;
    }

    MemoryRecords filter(Records records) {
        List<ByteBuffer> out = new ArrayList<>();
        int size = 0;
        for (RecordBatch batch : records.batches()) {
            ByteBuffer kept = filter(batch);
            out.add(kept);
            size += kept.remaining();
        }
        ByteBuffer all = ByteBuffer.allocate(size);
        out.forEach(all::put);
        return MemoryRecords.readableRecords(all.flip());
    }

    private ByteBuffer filter(RecordBatch batch) {
        if (batch.isControlBatch() || batch.magic() < RecordBatch.MAGIC_VALUE_V2) {
            return whole(batch);
        }
        List<Record> matching = new ArrayList<>();
        int total = 0;
        for (Record record : batch) {
            total++;
            if (matcher.matches(selector, record, 1)) {
                matching.add(record);
            }
        }
        if (matching.size() == total) {
            return whole(batch);
        }
        if (matching.isEmpty()) {
            ByteBuffer empty = ByteBuffer.allocate(DefaultRecordBatch.RECORD_BATCH_OVERHEAD);
            DefaultRecordBatch.writeEmptyHeader(empty, batch.magic(), batch.producerId(), batch.producerEpoch(),
                    batch.baseSequence(), batch.baseOffset(), batch.lastOffset(), batch.partitionLeaderEpoch(),
                    batch.timestampType(), batch.maxTimestamp(), batch.isTransactional(), false);
            return empty.flip();
        }
        ByteBuffer buffer = ByteBuffer.allocate(batch.sizeInBytes() + DefaultRecordBatch.RECORD_BATCH_OVERHEAD);
        long logAppendTime = batch.timestampType() == TimestampType.LOG_APPEND_TIME ? batch.maxTimestamp()
                : RecordBatch.NO_TIMESTAMP;
        MemoryRecordsBuilder builder = MemoryRecords.builder(buffer, batch.magic(), Compression.NONE,
                batch.timestampType(), batch.baseOffset(), logAppendTime, batch.producerId(), batch.producerEpoch(),
                batch.baseSequence(), batch.isTransactional(), batch.partitionLeaderEpoch());
        for (Record r : matching) {
            builder.appendWithOffset(r.offset(), r.timestamp(), r.key(), r.value(), r.headers());
        }
        ByteBuffer rebuilt = builder.build().buffer();
        rebuilt.putInt(LAST_OFFSET_DELTA, (int) (batch.lastOffset() - batch.baseOffset()));
        rebuilt.putLong(MAX_TIMESTAMP, batch.maxTimestamp());
        long crc = Crc32C.compute(rebuilt, ATTRIBUTES, rebuilt.remaining() - ATTRIBUTES);
        rebuilt.putInt(CRC, (int) crc);
        return rebuilt;
    }

    private static ByteBuffer whole(RecordBatch batch) {
        ByteBuffer copy = ByteBuffer.allocate(batch.sizeInBytes());
        batch.writeTo(copy);
        return copy.flip();
    }
}
