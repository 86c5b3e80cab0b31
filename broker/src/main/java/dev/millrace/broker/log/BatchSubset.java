package dev.millrace.broker.log;

import static dev.millrace.broker.log.BatchLayout.ATTRIBUTES;
import static dev.millrace.broker.log.BatchLayout.CRC;
import static dev.millrace.broker.log.BatchLayout.LAST_OFFSET_DELTA;
import static dev.millrace.broker.log.BatchLayout.MAX_TIMESTAMP;

import java.nio.ByteBuffer;
import java.util.List;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.internals.Crc32C;

/**
 * A v2 record batch cut down to some of its records, for responses that must not carry records the reader
 * did not select (JMS selectors: selective fetches of topic subscribers, selective share acquisition).
 *
 * <p>The cut batch keeps the stored batch's header fields (base offset, producer id and epoch, base sequence,
 * transactional flag, partition leader epoch, timestamp type) and holds the kept records at their own offsets,
 * uncompressed, with a recomputed CRC; offset gaps inside a v2 batch are legal (log compaction leaves them), so
 * Kafka consumers read it as they read a compacted batch. With {@code keepSpan} its last offset delta and max
 * timestamp are set back to the stored batch's, so a consumer that moves its position past the batch's last
 * offset skips what was left out; without it the batch ends at its last kept record.
 * <pre>
 *   v2 header (61 bytes)                     after the cut
 *   baseOffset         int64   @0            stored
 *   batchLength        int32   @8            recomputed
 *   partitionLeaderEp  int32   @12           stored
 *   magic              int8    @16           2
 *   crc                uint32  @17           recomputed (CRC-32C over attributes..end)
 *   attributes         int16   @21           stored, compression none
 *   lastOffsetDelta    int32   @23           stored (keepSpan) or the last kept record's
 *   baseTimestamp      int64   @27           first kept record's
 *   maxTimestamp       int64   @35           stored (keepSpan) or the kept records' max
 *   producerId/Epoch/baseSequence            stored
 *   recordCount        int32   @57           kept records
 * </pre>
 */
public final class BatchSubset {

    private BatchSubset() {
    }

    /**
     * The bytes of {@code batch} holding only {@code kept} (records of that batch, in offset order, at least
     * one): the stored batch itself when it has no other record, else a rebuilt batch as the class comment says.
     */
    public static ByteBuffer of(RecordBatch batch, List<Record> kept, boolean keepSpan) {
        Integer count = batch.countOrNull();
        if (count != null && count == kept.size()) {
            ByteBuffer copy = ByteBuffer.allocate(batch.sizeInBytes());
            batch.writeTo(copy);
            return copy.flip();
        }
        int size = DefaultRecordBatch.RECORD_BATCH_OVERHEAD;
        for (Record r : kept) {
            size += r.sizeInBytes();
        }
        long logAppendTime = batch.timestampType() == TimestampType.LOG_APPEND_TIME ? batch.maxTimestamp()
                : RecordBatch.NO_TIMESTAMP;
        // a size estimate: timestamp deltas from the first kept record may differ; the builder grows its buffer
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(size), batch.magic(),
                Compression.NONE, batch.timestampType(), batch.baseOffset(), logAppendTime, batch.producerId(),
                batch.producerEpoch(), batch.baseSequence(), batch.isTransactional(), batch.partitionLeaderEpoch());
        for (Record r : kept) {
            builder.appendWithOffset(r.offset(), r.timestamp(), r.key(), r.value(), r.headers());
        }
        ByteBuffer rebuilt = builder.build().buffer();
        if (keepSpan) {
            rebuilt.putInt(LAST_OFFSET_DELTA, (int) (batch.lastOffset() - batch.baseOffset()));
            rebuilt.putLong(MAX_TIMESTAMP, batch.maxTimestamp());
            rebuilt.putInt(CRC, (int) Crc32C.compute(rebuilt, ATTRIBUTES, rebuilt.remaining() - ATTRIBUTES));
        }
        return rebuilt;
    }
}
