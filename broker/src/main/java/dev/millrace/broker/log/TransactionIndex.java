package dev.millrace.broker.log;

import java.io.Closeable;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The aborted-transaction index of one segment, {@code <baseOffset>.txnindex}: one entry per
 * transaction whose abort marker lies in the segment, in marker order. Read-committed fetches use
 * it to tell consumers which producer's batches in a range they must drop. Fixed-size entries,
 * big-endian, back to back, no header:
 *
 * <pre>
 *  +-------------------+-------------------+-------------------+------------------------+
 *  | producerId  int64 | firstOffset int64 | lastOffset  int64 | lastStableOffset int64 |  32 bytes
 *  +-------------------+-------------------+-------------------+------------------------+
 *    firstOffset: the transaction's first batch on this partition
 *    lastOffset:  the offset of its abort marker (entries are in increasing lastOffset)
 * </pre>
 *
 * <p>The file is small (one entry per abort), so it is held in memory as well and read from there.
 * After a crash it may lack the last entries (the log re-adds them while it replays the producer
 * state) or hold entries past a truncated log end ({@link #truncateTo}); a torn trailing entry is
 * cut off when the file is opened. It is fsynced with its segment.
 *
 * <p>Thread-safety: appends and truncation come from the log's appender under its lock; reads may
 * run concurrently.
 */
final class TransactionIndex implements Closeable {

    static final int ENTRY_BYTES = 32;

    private static final Logger log = LoggerFactory.getLogger(TransactionIndex.class);

    private volatile File file;
    private final List<AbortedTxn> entries = new CopyOnWriteArrayList<>();
    private FileChannel channel;

    TransactionIndex(File file) throws IOException {
        this.file = file;
        if (file.exists()) {
            load();
        }
    }

    private void load() throws IOException {
        byte[] bytes = Files.readAllBytes(file.toPath());
        int whole = bytes.length - bytes.length % ENTRY_BYTES;
        ByteBuffer buffer = ByteBuffer.wrap(bytes, 0, whole);
        List<AbortedTxn> loaded = new ArrayList<>();
        while (buffer.remaining() >= ENTRY_BYTES) {
            loaded.add(new AbortedTxn(buffer.getLong(), buffer.getLong(), buffer.getLong(), buffer.getLong()));
        }
        entries.addAll(loaded);
        if (whole != bytes.length) {
            log.warn("Truncating {} from {} to {} bytes: torn entry at the end", file, bytes.length, whole);
            try (FileChannel ch = FileChannel.open(file.toPath(), StandardOpenOption.WRITE)) {
                ch.truncate(whole);
            }
        }
    }

    File file() {
        return file;
    }

    /** The entries, in marker order. */
    List<AbortedTxn> entries() {
        return List.copyOf(entries);
    }

    /** The marker offset of the last entry, or -1. */
    long lastMarkerOffset() {
        return entries.isEmpty() ? -1 : entries.get(entries.size() - 1).lastOffset();
    }

    void append(AbortedTxn txn) throws IOException {
        long last = lastMarkerOffset();
        if (txn.lastOffset() <= last) {
            throw new IllegalArgumentException("Aborted transaction with marker at " + txn.lastOffset()
                    + " does not follow the last entry of " + file + " (marker at " + last + ")");
        }
        ByteBuffer buffer = ByteBuffer.allocate(ENTRY_BYTES).putLong(txn.producerId()).putLong(txn.firstOffset())
                .putLong(txn.lastOffset()).putLong(txn.lastStableOffset()).flip();
        FileChannel ch = channel();
        long position = ch.size();
        while (buffer.hasRemaining()) {
            position += ch.write(buffer, position);
        }
        entries.add(txn);
    }

    /**
     * Adds to {@code out} the entries of transactions that overlap {@code [fetchOffset, upperBound)}:
     * marker at or after {@code fetchOffset}, first offset below {@code upperBound}.
     *
     * @return true if this index may hold nothing past {@code upperBound}, i.e. the search can stop
     */
    boolean collect(long fetchOffset, long upperBound, List<AbortedTxn> out) {
        for (AbortedTxn txn : entries) {
            if (txn.lastOffset() >= fetchOffset && txn.firstOffset() < upperBound) {
                out.add(txn);
            }
            // Entries are in marker order, but transactions overlap: one whose marker is past the window may be
            // followed by another that began inside it. Only once the last stable offset at a marker reaches the
            // window's end had every transaction begun before that end completed.
            if (txn.lastStableOffset() >= upperBound) {
                return true;
            }
        }
        return false;
    }

    /** Removes the entries whose marker is at or after {@code offset} (the log was cut there). */
    void truncateTo(long offset) throws IOException {
        int keep = 0;
        while (keep < entries.size() && entries.get(keep).lastOffset() < offset) {
            keep++;
        }
        if (keep == entries.size()) {
            return;
        }
        log.info("Truncating {} to {} entries: markers at or after offset {} are gone", file, keep, offset);
        entries.subList(keep, entries.size()).clear();
        channel().truncate((long) keep * ENTRY_BYTES);
    }

    /** Empties the index (its segment is being recovered from scratch). */
    void reset() throws IOException {
        truncateTo(Long.MIN_VALUE);
    }

    void flush() throws IOException {
        if (channel != null) {
            channel.force(true);
        }
    }

    void renameTo(File target) throws IOException {
        if (file.exists()) {
            Files.move(file.toPath(), target.toPath());
        }
        file = target;
    }

    private FileChannel channel() throws IOException {
        if (channel == null) {
            channel = FileChannel.open(file.toPath(), StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
        }
        return channel;
    }

    @Override
    public void close() throws IOException {
        if (channel != null) {
            channel.close();
            channel = null;
        }
    }

    void closeAndDelete() throws IOException {
        close();
        Files.deleteIfExists(file.toPath());
    }
}
