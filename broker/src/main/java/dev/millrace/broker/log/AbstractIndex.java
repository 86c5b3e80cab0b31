package dev.millrace.broker.log;

import java.io.Closeable;
import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;

import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.utils.internals.ByteBufferUnmapper;

/**
 * A memory-mapped file of fixed-size entries sorted by a key, the common part of {@link OffsetIndex}
 * and {@link TimeIndex}.
 *
 * <p>While a segment is active its index file is pre-sized to {@code maxIndexSize} (rounded down to
 * a whole number of entries) so appends never remap; when the segment becomes inactive or the index
 * is closed the file is trimmed to its entries. An index opened on an existing file counts every
 * whole entry in it, so a file left pre-sized by a crash holds trailing zero entries; {@link
 * #sanityCheck(long)} finds those and the loader then rebuilds the index from its segment.
 *
 * <p>Threading: one appender and any number of readers. Every access uses absolute positions on the
 * mapping; the entry count is published after the entry is written. Resizing and closing take the
 * same monitor as lookups and appends, so no reader ever touches an unmapped buffer.
 */
abstract class AbstractIndex implements Closeable {

    protected final long baseOffset;
    private final int maxIndexSize;
    private final int entrySize;
    private volatile File file;
    private MappedByteBuffer mmap;
    private volatile int entries;
    private int maxEntries;
    private boolean closed;

    AbstractIndex(File file, long baseOffset, int maxIndexSize, int entrySize) throws IOException {
        this.file = file;
        this.baseOffset = baseOffset;
        this.maxIndexSize = maxIndexSize;
        this.entrySize = entrySize;
        boolean existed = file.exists() && file.length() > 0;
        try (RandomAccessFile raf = new RandomAccessFile(file, "rw")) {
            long length = existed ? roundDown(raf.length()) : roundDown(maxIndexSize);
            raf.setLength(length);
            this.mmap = raf.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, length);
            this.entries = existed ? (int) (length / entrySize) : 0;
            this.maxEntries = (int) (length / entrySize);
        }
    }

    private long roundDown(long size) {
        return size - size % entrySize;
    }

    /** Number of entries. */
    int entries() {
        return entries;
    }

    boolean isFull() {
        return entries >= maxEntries;
    }

    int maxEntries() {
        return maxEntries;
    }

    File file() {
        return file;
    }

    long sizeInBytes() {
        return (long) entries * entrySize;
    }

    /**
     * Checks that every entry is ordered after the one before it and points inside the segment.
     *
     * @param segmentSizeBytes the size of the segment file the index belongs to
     * @throws CorruptIndexException naming the file, the entry and what is wrong
     */
    abstract void sanityCheck(long segmentSizeBytes);

    /** Sets the file's size back to the pre-sized maximum so the active segment can append. */
    synchronized void resizeForAppends() throws IOException {
        resize(roundDown(maxIndexSize));
    }

    /** Cuts the file to exactly its entries; called when the segment stops being active. */
    synchronized void trimToEntries() throws IOException {
        resize(sizeInBytes());
    }

    private void resize(long newLength) throws IOException {
        checkOpen();
        if (newLength == mmap.limit()) {
            return;
        }
        ByteBufferUnmapper.unmap(file.getAbsolutePath(), mmap);
        try (RandomAccessFile raf = new RandomAccessFile(file, "rw")) {
            raf.setLength(newLength);
            mmap = raf.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, newLength);
            maxEntries = (int) (newLength / entrySize);
        }
    }

    /** Removes every entry (before a rebuild). */
    synchronized void reset() throws IOException {
        checkOpen();
        entries = 0;
        resize(0);
        resize(roundDown(maxIndexSize));
    }

    /** Removes the entries at and after slot {@code newEntries}. */
    synchronized void truncateToEntries(int newEntries) {
        entries = Math.min(entries, newEntries);
    }

    synchronized void flush() {
        if (!closed) {
            mmap.force();
        }
    }

    synchronized void renameTo(File target) throws IOException {
        Files.move(file.toPath(), target.toPath(), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        file = target;
    }

    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        trimToEntries();
        ByteBufferUnmapper.unmap(file.getAbsolutePath(), mmap);
        closed = true;
    }

    /** Unmaps without trimming, leaving the file as a crash would. */
    synchronized void closeWithoutTrim() throws IOException {
        if (!closed) {
            ByteBufferUnmapper.unmap(file.getAbsolutePath(), mmap);
            closed = true;
        }
    }

    synchronized void closeAndDelete() throws IOException {
        if (!closed) {
            ByteBufferUnmapper.unmap(file.getAbsolutePath(), mmap);
            closed = true;
        }
        Files.deleteIfExists(file.toPath());
    }

    /** A reader racing with the log's close gets a storage error, never a touch of an unmapped buffer. */
    protected void checkOpen() {
        if (closed) {
            throw new KafkaStorageException("Index " + file + " is closed");
        }
    }

    /** Writes one entry at the next slot and publishes it; the caller holds the monitor. */
    protected void appendEntry(long key, int value) {
        checkOpen();
        int slot = entries;
        if (slot >= maxEntries) {
            throw new IllegalStateException("Index " + file + " is full: " + slot + " of " + maxEntries + " entries");
        }
        writeEntry(mmap, slot * entrySize, key, value);
        entries = slot + 1;
    }

    protected abstract void writeEntry(MappedByteBuffer buffer, int position, long key, int value);

    protected abstract long keyAt(MappedByteBuffer buffer, int slot);

    /** The buffer, for subclasses that read fields; callers hold the monitor. */
    protected MappedByteBuffer buffer() {
        checkOpen();
        return mmap;
    }

    /**
     * Binary search for the last slot whose key is below {@code target} ({@code strict}) or at or
     * below it; -1 when there is none. The caller holds the monitor.
     */
    protected int largestSlotBelow(long target, boolean strict) {
        MappedByteBuffer buf = buffer();
        int lo = 0;
        int hi = entries - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            long key = keyAt(buf, mid);
            if (key < target || (!strict && key == target)) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found;
    }
}
