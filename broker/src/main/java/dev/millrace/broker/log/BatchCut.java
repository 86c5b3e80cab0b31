package dev.millrace.broker.log;

import static dev.millrace.broker.log.BatchLayout.ATTRIBUTES;
import static dev.millrace.broker.log.BatchLayout.BATCH_LENGTH;
import static dev.millrace.broker.log.BatchLayout.CRC;
import static dev.millrace.broker.log.BatchLayout.LAST_OFFSET_DELTA;
import static dev.millrace.broker.log.BatchLayout.LOG_OVERHEAD;
import static dev.millrace.broker.log.BatchLayout.MAX_TIMESTAMP;
import static dev.millrace.broker.log.BatchLayout.RECORDS;
import static dev.millrace.broker.log.BatchLayout.RECORD_COUNT;

import java.nio.ByteBuffer;
import java.util.Arrays;

import org.apache.kafka.common.utils.internals.Crc32C;

/**
 * Cuts the batch a {@link BatchCursor} walks down to the records picked while walking it, by copying those records'
 * bytes as they are stored: nothing is decoded or re-encoded ({@link BatchSubset#of} rebuilds each record through
 * Kafka's builder, which decodes every header key to a String and encodes it again).
 *
 * <p>A record's bytes hold its offset and timestamp as deltas from the batch's base offset and base timestamp, so the
 * cut keeps both from the stored header and the copied records read back at their own offsets and timestamps; offset
 * gaps inside a v2 batch are legal (log compaction leaves them). The cut batch:
 * <pre>
 *   v2 header (61 bytes)                     in the cut
 *   baseOffset         int64   @0            stored
 *   batchLength        int32   @8            recomputed
 *   partitionLeaderEp  int32   @12           stored
 *   magic              int8    @16           2
 *   crc                uint32  @17           recomputed (CRC-32C over attributes..end)
 *   attributes         int16   @21           stored (the cursor walks only uncompressed batches)
 *   lastOffsetDelta    int32   @23           stored (keepSpan) or the last picked record's
 *   baseTimestamp      int64   @27           stored
 *   maxTimestamp       int64   @35           stored (keepSpan, or log-append time) or the picked records' max
 *   producerId/Epoch/baseSequence            stored
 *   recordCount        int32   @57           picked records
 *   records            @61                   the picked records' stored bytes, in offset order
 * </pre>
 * With every record picked, the cut is a copy of the stored batch.
 *
 * <p>Use: {@link BatchCursor#load}, then for each record to keep, while the cursor is on it, {@link #pick}; then
 * {@link #take} (before the cursor loads another batch). Not thread-safe: one per cursor.
 */
public final class BatchCut {

    private final BatchCursor cursor;
    private int[] starts = new int[32];
    private int[] ends = new int[32];
    private int picked;
    private int bytes;
    private long lastOffset;
    private long maxTimestamp = Long.MIN_VALUE;
    /** The cursor's {@link BatchCursor#loads()} when the picks were made: picks of an earlier batch are dropped. */
    private int batch = -1;

    public BatchCut(BatchCursor cursor) {
        this.cursor = cursor;
    }

    /** Keeps the record the cursor is on. Picks left from an earlier batch (a walk that failed half-way) are dropped. */
    public void pick() {
        if (batch != cursor.loads()) {
            clear();
            batch = cursor.loads();
        }
        if (picked == starts.length) {
            starts = Arrays.copyOf(starts, picked * 2);
            ends = Arrays.copyOf(ends, picked * 2);
        }
        starts[picked] = cursor.recordStart();
        ends[picked] = cursor.recordEnd();
        bytes += ends[picked] - starts[picked];
        picked++;
        lastOffset = cursor.offset();
        maxTimestamp = Math.max(maxTimestamp, cursor.timestamp());
    }

    /** How many records of the cursor's batch are picked. */
    public int picked() {
        return batch == cursor.loads() ? picked : 0;
    }

    /**
     * The cursor's batch holding only the picked records (at least one), as the class comment draws it, in a buffer
     * of its own; then forgets them, ready for the next batch.
     *
     * @param keepSpan whether the cut ends where the stored batch ends (last offset delta and max timestamp stored),
     *                 so that a consumer moving past it skips what was left out
     */
    public ByteBuffer take(boolean keepSpan) {
        if (picked() == 0) {
            throw new IllegalStateException("no record picked in the batch at offset " + cursor.baseOffset());
        }
        ByteBuffer stored = cursor.buffer();
        ByteBuffer cut;
        if (picked == stored.getInt(RECORD_COUNT)) {
            cut = ByteBuffer.allocate(cursor.batchSize());
            cut.put(0, stored, 0, cursor.batchSize());
        } else {
            cut = ByteBuffer.allocate(RECORDS + bytes);
            cut.put(0, stored, 0, RECORDS);
            int at = RECORDS;
            for (int i = 0; i < picked; i++) {
                int length = ends[i] - starts[i];
                cut.put(at, stored, starts[i], length);
                at += length;
            }
            cut.putInt(BATCH_LENGTH, cut.capacity() - LOG_OVERHEAD);
            cut.putInt(RECORD_COUNT, picked);
            if (!keepSpan) {
                cut.putInt(LAST_OFFSET_DELTA, (int) (lastOffset - cursor.baseOffset()));
                if (!cursor.logAppendTime()) {
                    cut.putLong(MAX_TIMESTAMP, maxTimestamp);
                }
            }
            cut.putInt(CRC, (int) Crc32C.compute(cut, ATTRIBUTES, cut.capacity() - ATTRIBUTES));
        }
        clear();
        return cut;
    }

    private void clear() {
        picked = 0;
        bytes = 0;
        maxTimestamp = Long.MIN_VALUE;
    }
}
