package dev.millrace.broker.log;

import static dev.millrace.broker.log.BatchLayout.BASE_SEQUENCE;
import static dev.millrace.broker.log.BatchLayout.BASE_TIMESTAMP;
import static dev.millrace.broker.log.BatchLayout.MAX_TIMESTAMP;
import static dev.millrace.broker.log.BatchLayout.RECORDS;
import static dev.millrace.broker.log.BatchLayout.RECORD_COUNT;

import java.nio.ByteBuffer;

import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.DefaultRecord;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;

/**
 * Walks the records of an uncompressed v2 batch where they lie, reading only each record's offset, timestamp and
 * where its key and headers are, so that scanning many records to look at a few headers (JMS selectors) allocates
 * nothing per record. Kafka's own record iterator decodes every header key into a String and slices every value.
 *
 * <p>The batch is walked where it lies when the caller says where that is in a buffer ({@link #load(RecordBatch,
 * ByteBuffer, int)}: a selective scan's read, a mapping of the log file), else copied once into a buffer the cursor
 * reuses (a file-backed batch is read from its file then); records are found at their positions in it, as KIP-98 lays
 * them out:
 * <pre>
 *   batch    baseOffset int64 @0 | ... | baseTimestamp int64 @27 | maxTimestamp int64 @35 | ...
 *            baseSequence int32 @53 | recordCount int32 @57 | records @61
 *   record   length varint | attributes int8 | timestampDelta varlong | offsetDelta varint
 *            keyLength varint (-1 null) | key | valueLength varint (-1 null) | value
 *            headerCount varint | headers (see RecordSelectorContext's encoded reset)
 * </pre>
 * (varint and varlong are zigzag-encoded.) A record whose fields run past its length or the batch fails with
 * {@link IllegalStateException} naming the batch's base offset and the record's position.
 *
 * <p>Not thread-safe: one per scanning thread (a share-partition's, under its monitor).
 */
public final class BatchCursor {

    /** Where batches are copied to when they are not walked in place. */
    private ByteBuffer own = ByteBuffer.allocate(64 * 1024);
    /** The loaded batch, from its position 0: {@link #own}, or a slice of the (heap or direct) buffer it lies in. */
    private ByteBuffer buffer = own;
    /**
     * {@link #buffer}'s array and where the batch starts in it, read directly by the varint decoder; null for a batch
     * walked in a direct buffer, which the decoder reads through {@link #buffer}.
     */
    private byte[] bytes = own.array();
    private int base;
    /** How many batches were loaded so far: tells a {@link BatchCut} whether its picks are of the loaded batch. */
    private int loads;
    private long baseOffset;
    private long baseTimestamp;
    private Long logAppendTime;
    private int baseSequence;
    private int remaining;
    private int next;
    private int end;

    private long offset;
    private long timestamp;
    private int recordStart;
    private int keyPosition;
    private int keyLength;
    private int headersPosition;
    private int headerCount;
    private int pos;

    /** Whether {@link #load} can walk {@code batch}: a v2 batch without compression, not a control batch. */
    public static boolean canWalk(RecordBatch batch) {
        return batch.magic() >= RecordBatch.MAGIC_VALUE_V2 && !batch.isCompressed()
                && !batch.isControlBatch();
    }

    /** Points the cursor before the first record of {@code batch} (one {@link #canWalk} accepts), copying it. */
    public void load(RecordBatch batch) {
        if (own.capacity() < batch.sizeInBytes()) {
            own = ByteBuffer.allocate(Math.max(batch.sizeInBytes(), own.capacity() * 2));
        }
        own.clear();
        batch.writeTo(own);
        own.flip();
        buffer = own;
        bytes = own.array();
        base = 0;
        start(batch);
    }

    /**
     * As {@link #load(RecordBatch)}, walking the batch where it lies: at absolute {@code position} of {@code holder}, a
     * heap buffer or a direct one such as a mapping of the log file (the batches of a read, one after another). Falls
     * back to a copy when {@code holder} does not hold the batch there. {@code holder} must not change while the cursor
     * is on the batch.
     */
    public void load(RecordBatch batch, ByteBuffer holder, int position) {
        int size = batch.sizeInBytes();
        if (holder == null || position < 0 || position + size > holder.limit()
                || holder.getLong(position) != batch.baseOffset()) {
            load(batch);
            return;
        }
        buffer = holder.slice(position, size);
        if (holder.hasArray()) {
            bytes = holder.array();
            base = holder.arrayOffset() + position;
        } else {
            bytes = null; // a direct (mapped) buffer: read through the slice
            base = 0;
        }
        start(batch);
    }

    private void start(RecordBatch batch) {
        loads++;
        end = buffer.limit();
        baseOffset = batch.baseOffset();
        baseTimestamp = buffer.getLong(BASE_TIMESTAMP);
        logAppendTime = batch.timestampType() == TimestampType.LOG_APPEND_TIME ? buffer.getLong(MAX_TIMESTAMP)
                : null;
        baseSequence = buffer.getInt(BASE_SEQUENCE);
        remaining = buffer.getInt(RECORD_COUNT);
        next = RECORDS;
    }

    /** Moves to the next record; false after the last. */
    public boolean next() {
        if (remaining <= 0) {
            return false;
        }
        remaining--;
        recordStart = next;
        pos = next;
        int length = varint();
        int bodyStart = pos;
        next = bodyStart + length;
        if (length < 0 || next > end) {
            throw malformed("its length " + length + " runs past the batch");
        }
        pos++; // attributes
        long timestampDelta = varlong();
        offset = baseOffset + varint();
        timestamp = logAppendTime != null ? logAppendTime : baseTimestamp + timestampDelta;
        keyLength = varint();
        keyPosition = pos;
        pos += Math.max(0, keyLength);
        int valueLength = varint();
        pos += Math.max(0, valueLength);
        headerCount = varint();
        headersPosition = pos;
        if (pos > next || headerCount < 0) {
            throw malformed("its fields run past its length");
        }
        return true;
    }

    public long offset() {
        return offset;
    }

    public long timestamp() {
        return timestamp;
    }

    int loads() {
        return loads;
    }

    /** Where the current record starts (its length varint) in {@link #buffer()}. */
    int recordStart() {
        return recordStart;
    }

    /** Where the current record ends (exclusive) in {@link #buffer()}. */
    int recordEnd() {
        return next;
    }

    /** The loaded batch's size in bytes: {@link #buffer()} holds it from position 0. */
    int batchSize() {
        return end;
    }

    /** The loaded batch's timestamp type and base offset, as its header has them. */
    long baseOffset() {
        return baseOffset;
    }

    boolean logAppendTime() {
        return logAppendTime != null;
    }

    /** The batch's bytes; positions below are absolute in it. Valid until the next {@link #load}. */
    public ByteBuffer buffer() {
        return buffer;
    }

    public int headersPosition() {
        return headersPosition;
    }

    public int headerCount() {
        return headerCount;
    }

    /** A copy of the record's key, or null. */
    public byte[] key() {
        if (keyLength < 0) {
            return null;
        }
        byte[] key = new byte[keyLength];
        buffer.get(keyPosition, key);
        return key;
    }

    /** The current record as Kafka reads it (its key, value and headers slices of {@link #buffer()}). */
    public Record record() {
        ByteBuffer at = buffer.duplicate();
        at.position(recordStart);
        return DefaultRecord.readFrom(at, baseOffset, baseTimestamp, baseSequence, logAppendTime);
    }

    private int varint() {
        return (int) varlong();
    }

    private long varlong() {
        long raw = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            if (pos >= end) {
                throw malformed("a varint runs past the batch");
            }
            byte b = bytes != null ? bytes[base + pos++] : buffer.get(pos++);
            raw |= (long) (b & 0x7f) << shift;
            if (b >= 0) {
                return (raw >>> 1) ^ -(raw & 1);
            }
        }
        throw malformed("a varint is longer than 10 bytes");
    }

    private IllegalStateException malformed(String problem) {
        return new IllegalStateException("record at byte " + recordStart + " of the batch at offset " + baseOffset
                + ": " + problem);
    }
}
