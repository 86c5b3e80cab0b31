package dev.millrace.broker.server;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;

import dev.millrace.broker.log.BatchSubset;
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
 *                            fetch starts after it ({@link BatchSubset})
 *   no record matches     -> an empty batch (header only, record count 0) spanning the same offsets, as log
 *                            compaction leaves them; consumers skip it and move past its last offset
 *   control batches       -> as stored (read_committed consumers need the markers)
 * </pre>
 * A record that is not a valid JMS message never matches. Zero-copy is lost for filtered fetches.
 *
 * <p>Not thread-safe: one per fetch.
 */
final class SelectiveRecords {

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
        for (Record record : batch) {
            if (matcher.matches(selector, record, 1)) {
                matching.add(record);
            }
        }
        if (matching.isEmpty()) {
            ByteBuffer empty = ByteBuffer.allocate(DefaultRecordBatch.RECORD_BATCH_OVERHEAD);
            DefaultRecordBatch.writeEmptyHeader(empty, batch.magic(), batch.producerId(), batch.producerEpoch(),
                    batch.baseSequence(), batch.baseOffset(), batch.lastOffset(), batch.partitionLeaderEpoch(),
                    batch.timestampType(), batch.maxTimestamp(), batch.isTransactional(), false);
            return empty.flip();
        }
        return BatchSubset.of(batch, matching, true);
    }

    private static ByteBuffer whole(RecordBatch batch) {
        ByteBuffer copy = ByteBuffer.allocate(batch.sizeInBytes());
        batch.writeTo(copy);
        return copy.flip();
    }
}
