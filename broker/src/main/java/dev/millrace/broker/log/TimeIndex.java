package dev.millrace.broker.log;

import java.io.File;
import java.io.IOException;
import java.nio.MappedByteBuffer;

import org.apache.kafka.common.record.internal.RecordBatch;

/**
 * Sparse map from timestamps to offsets in a segment ({@code <baseOffset>.timeindex}).
 *
 * <pre>
 *  entry (12 bytes, big-endian):
 *  +--------------------------------------+---------------------------+
 *  | max timestamp so far (int64, ms)     | relative offset (int32)   |
 *  +--------------------------------------+---------------------------+
 * </pre>
 *
 * An entry records the largest timestamp seen in the segment up to that point and the offset of the
 * record that first carried it, so both fields only grow. A record before an entry's offset has a
 * timestamp below the entry's. When a segment stops being active its final maximum is appended, so
 * the last entry holds the segment's largest timestamp (used by time retention). See {@link
 * AbstractIndex} for sizing and threading.
 */
final class TimeIndex extends AbstractIndex {

    static final int ENTRY_SIZE = 12;

    /** A timestamp and the offset of the first record in the segment that carried it. */
    record Entry(long timestamp, long offset) {
    }

    TimeIndex(File file, long baseOffset, int maxIndexSize) throws IOException {
        super(file, baseOffset, maxIndexSize, ENTRY_SIZE);
    }

    /**
     * Appends an entry if {@code timestamp} is above the last entry's. {@code force} appends even to a
     * full index (used once, when the segment becomes inactive, with the slot kept free for it).
     */
    synchronized void maybeAppend(long timestamp, long offset) {
        int n = entries();
        if (n > 0) {
            Entry last = entryAt(n - 1);
            if (timestamp <= last.timestamp()) {
                return;
            }
            if (offset < last.offset()) {
                throw new IllegalArgumentException("Time index " + file() + ": offset " + offset
                        + " for timestamp " + timestamp + " is below the last entry's offset " + last.offset());
            }
        }
        appendEntry(timestamp, (int) (offset - baseOffset));
    }

    /** Removes the entries whose offset is at or above {@code offset} (their batches were truncated away). */
    synchronized void truncateTo(long offset) {
        int keep = entries();
        while (keep > 0 && entryAt(keep - 1).offset() >= offset) {
            keep--;
        }
        truncateToEntries(keep);
    }

    /** True when one slot is left: the segment must roll so its final entry still fits. */
    boolean isNearlyFull() {
        return entries() >= maxEntries() - 1;
    }

    /** The last entry whose timestamp is strictly below {@code targetTimestamp}, or (NO_TIMESTAMP, baseOffset). */
    synchronized Entry lookupBelow(long targetTimestamp) {
        int slot = largestSlotBelow(targetTimestamp, true);
        return slot < 0 ? new Entry(RecordBatch.NO_TIMESTAMP, baseOffset) : entryAt(slot);
    }

    /** The last entry, or (NO_TIMESTAMP, baseOffset) when empty. */
    synchronized Entry lastEntry() {
        int n = entries();
        return n == 0 ? new Entry(RecordBatch.NO_TIMESTAMP, baseOffset) : entryAt(n - 1);
    }

    private Entry entryAt(int slot) {
        MappedByteBuffer buf = buffer();
        return new Entry(buf.getLong(slot * ENTRY_SIZE), baseOffset + buf.getInt(slot * ENTRY_SIZE + 8));
    }

    /** @param lastOffsetInSegment the largest offset in the segment, for the bounds check */
    synchronized void sanityCheck(long segmentSizeBytes, long lastOffsetInSegment) {
        long previousTimestamp = Long.MIN_VALUE;
        long previousOffset = baseOffset;
        for (int slot = 0; slot < entries(); slot++) {
            Entry e = entryAt(slot);
            if (e.timestamp() <= previousTimestamp || e.offset() < previousOffset || e.offset() > lastOffsetInSegment) {
                throw new CorruptIndexException("Time index " + file() + " entry " + slot + " (timestamp "
                        + e.timestamp() + ", offset " + e.offset() + ") must follow (timestamp " + previousTimestamp
                        + ", offset " + previousOffset + ") and stay at or below the segment's last offset "
                        + lastOffsetInSegment);
            }
            previousTimestamp = e.timestamp();
            previousOffset = e.offset();
        }
    }

    @Override
    void sanityCheck(long segmentSizeBytes) {
        sanityCheck(segmentSizeBytes, Long.MAX_VALUE);
    }

    @Override
    protected void writeEntry(MappedByteBuffer buffer, int position, long timestamp, int relativeOffset) {
        buffer.putLong(position, timestamp);
        buffer.putInt(position + 8, relativeOffset);
    }

    @Override
    protected long keyAt(MappedByteBuffer buffer, int slot) {
        return buffer.getLong(slot * ENTRY_SIZE);
    }
}
