package dev.millrace.broker.log;

import java.io.File;
import java.io.IOException;
import java.nio.MappedByteBuffer;

/**
 * Sparse map from offsets to byte positions in a segment file ({@code <baseOffset>.index}).
 *
 * <pre>
 *  entry (8 bytes, big-endian), one every ~index.interval.bytes of batches:
 *  +---------------------------+---------------------------+
 *  | relative offset (int32)   | position in .log (int32)  |
 *  +---------------------------+---------------------------+
 *  relative offset = lastOffset of the indexed batch - segment base offset
 *  position        = byte position of that batch in the segment file
 * </pre>
 *
 * Entries are strictly increasing in both fields. A lookup returns the last entry at or below the
 * target offset; the batch containing the target starts at or after that position, so a reader
 * scans forward from it. See {@link AbstractIndex} for sizing and threading.
 */
final class OffsetIndex extends AbstractIndex {

    static final int ENTRY_SIZE = 8;

    /** A position in the segment file at which to start scanning for an offset. */
    record Entry(long offset, int position) {
    }

    OffsetIndex(File file, long baseOffset, int maxIndexSize) throws IOException {
        super(file, baseOffset, maxIndexSize, ENTRY_SIZE);
    }

    /**
     * Adds an entry for a batch ending at {@code offset} that starts at {@code position}.
     *
     * @throws IllegalArgumentException if the entry does not come after the last one
     */
    synchronized void append(long offset, int position) {
        int n = entries();
        if (n > 0) {
            Entry last = entryAt(n - 1);
            if (offset <= last.offset() || position <= last.position()) {
                throw new IllegalArgumentException("Offset index " + file() + ": entry (offset " + offset + ", position "
                        + position + ") must come after the last entry (offset " + last.offset() + ", position "
                        + last.position() + ")");
            }
        }
        appendEntry(offset - baseOffset, position);
    }

    /** Removes the entries whose offset is at or above {@code offset} (their batches were truncated away). */
    synchronized void truncateTo(long offset) {
        truncateToEntries(largestSlotBelow(offset - baseOffset, true) + 1);
    }

    /** The last entry whose offset is at or below {@code targetOffset}, or (baseOffset, 0) when none is. */
    synchronized Entry lookup(long targetOffset) {
        int slot = largestSlotBelow(targetOffset - baseOffset, false);
        return slot < 0 ? new Entry(baseOffset, 0) : entryAt(slot);
    }

    /** The last entry, or (baseOffset, 0) when the index is empty. */
    synchronized Entry lastEntry() {
        int n = entries();
        return n == 0 ? new Entry(baseOffset, 0) : entryAt(n - 1);
    }

    private Entry entryAt(int slot) {
        MappedByteBuffer buf = buffer();
        return new Entry(baseOffset + buf.getInt(slot * ENTRY_SIZE), buf.getInt(slot * ENTRY_SIZE + 4));
    }

    @Override
    synchronized void sanityCheck(long segmentSizeBytes) {
        long previousOffset = -1;
        long previousPosition = -1;
        for (int slot = 0; slot < entries(); slot++) {
            Entry e = entryAt(slot);
            long relative = e.offset() - baseOffset;
            if (relative < 0 || relative <= previousOffset - baseOffset && slot > 0) {
                throw new CorruptIndexException("Offset index " + file() + " entry " + slot + " has offset " + e.offset()
                        + ", expected more than " + (slot == 0 ? baseOffset - 1 : previousOffset));
            }
            if (e.position() < 0 || e.position() <= previousPosition || e.position() >= segmentSizeBytes) {
                throw new CorruptIndexException("Offset index " + file() + " entry " + slot + " has position "
                        + e.position() + ", expected above " + previousPosition + " and below the segment size "
                        + segmentSizeBytes);
            }
            previousOffset = e.offset();
            previousPosition = e.position();
        }
    }

    @Override
    protected void writeEntry(MappedByteBuffer buffer, int position, long relativeOffset, int filePosition) {
        buffer.putInt(position, (int) relativeOffset);
        buffer.putInt(position + 4, filePosition);
    }

    @Override
    protected long keyAt(MappedByteBuffer buffer, int slot) {
        return buffer.getInt(slot * ENTRY_SIZE);
    }
}
