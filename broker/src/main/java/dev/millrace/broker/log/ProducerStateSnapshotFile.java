package dev.millrace.broker.log;

import java.io.File;
import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Reads and writes one producer-state snapshot, {@code <offset>.snapshot} in the partition directory
 * ({@link LogFiles#SNAPSHOT_SUFFIX}): every producer's entry as of that offset, meaning the state
 * after applying every batch below it. Big-endian:
 *
 * <pre>
 *  byte 0  +----------------+
 *          | version  int16 |  = 2 (version 1, without txnFirstOffset, is read as unreadable: the log replays)
 *       2  +----------------+
 *          | crc      int32 |  CRC-32C of every byte from 6 to the end of the file
 *       6  +----------------+
 *          | offset   int64 |  must equal the offset in the file name
 *      14  +----------------+
 *          | count    int32 |  number of producers N
 *      18  +----------------+------------------------------------------------------------+
 *          | N times: producerId int64 | epoch int16 | txnFirstOffset int64 (-1: none)  |
 *          |          batchCount int32 (0..5)                                           |
 *          |   batchCount times: firstSequence int32 | lastSequence int32 |              |
 *          |                     firstOffset int64 | lastOffset int64 | maxTimestamp int64 |
 *          +-----------------------------------------------------------------------------+
 *          22 bytes per producer plus 32 bytes per remembered batch (oldest batch first)
 * </pre>
 *
 * <p>A snapshot is written to {@code <offset>.snapshot.tmp} and renamed into place, so a reader sees
 * either the old file or the whole new one; it is not fsynced, because a file torn by a power loss
 * fails the CRC or length check and the loader then falls back to an older snapshot or the log.
 * A leftover {@code .tmp} is removed by {@link LogLoader}.
 *
 * <p>Stateless and thread-safe.
 */
final class ProducerStateSnapshotFile {

    static final short VERSION = 2;
    private static final int HEADER_BYTES = 18;
    private static final int CRC_START = 6;
    private static final int PRODUCER_BYTES = 22;
    private static final int BATCH_BYTES = 32;

    private ProducerStateSnapshotFile() {
    }

    static File file(File dir, long offset) {
        return new File(dir, LogFiles.filenamePrefix(offset) + LogFiles.SNAPSHOT_SUFFIX);
    }

    static boolean isSnapshot(File file) {
        String name = file.getName();
        return name.endsWith(LogFiles.SNAPSHOT_SUFFIX) && !name.isEmpty() && Character.isDigit(name.charAt(0));
    }

    static void write(File file, long offset, Collection<ProducerStateEntry> entries) throws IOException {
        int size = HEADER_BYTES;
        for (ProducerStateEntry entry : entries) {
            size += PRODUCER_BYTES + BATCH_BYTES * entry.batches().size();
        }
        ByteBuffer buffer = ByteBuffer.allocate(size);
        buffer.putShort(VERSION).putInt(0).putLong(offset).putInt(entries.size());
        for (ProducerStateEntry entry : entries) {
            buffer.putLong(entry.producerId()).putShort(entry.producerEpoch()).putLong(entry.currentTxnFirstOffset())
                    .putInt(entry.batches().size());
            for (ProducerStateEntry.BatchMetadata batch : entry.batches()) {
                buffer.putInt(batch.firstSequence()).putInt(batch.lastSequence()).putLong(batch.firstOffset())
                        .putLong(batch.lastOffset()).putLong(batch.maxTimestamp());
            }
        }
        buffer.putInt(2, crc(buffer.array(), size));
        File tmp = new File(file.getPath() + ".tmp");
        Files.write(tmp.toPath(), buffer.array());
        Files.move(tmp.toPath(), file.toPath(), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /**
     * Reads a snapshot.
     *
     * @throws IOException if it cannot be read, or is corrupt: wrong version, CRC, offset or length
     */
    static List<ProducerStateEntry> read(File file, long expectedOffset) throws IOException {
        byte[] bytes = Files.readAllBytes(file.toPath());
        if (bytes.length < HEADER_BYTES) {
            throw new IOException("Snapshot " + file + " is " + bytes.length + " bytes, shorter than its "
                    + HEADER_BYTES + "-byte header");
        }
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        short version = buffer.getShort();
        if (version != VERSION) {
            throw new IOException("Snapshot " + file + " has version " + version + ", expected " + VERSION);
        }
        int storedCrc = buffer.getInt();
        int actualCrc = crc(bytes, bytes.length);
        if (storedCrc != actualCrc) {
            throw new IOException("Snapshot " + file + " has CRC " + Integer.toUnsignedString(storedCrc)
                    + " but its content has CRC " + Integer.toUnsignedString(actualCrc));
        }
        long offset = buffer.getLong();
        if (offset != expectedOffset) {
            throw new IOException("Snapshot " + file + " holds offset " + offset + ", expected " + expectedOffset);
        }
        try {
            int count = buffer.getInt();
            if (count < 0 || (long) count * PRODUCER_BYTES > buffer.remaining()) {
                throw new IOException("Snapshot " + file + " claims " + count + " producers in "
                        + buffer.remaining() + " bytes");
            }
            List<ProducerStateEntry> entries = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                entries.add(readEntry(buffer, file));
            }
            if (buffer.hasRemaining()) {
                throw new IOException("Snapshot " + file + " has " + buffer.remaining() + " trailing bytes");
            }
            return entries;
        } catch (BufferUnderflowException e) {
            throw new IOException("Snapshot " + file + " is truncated", e);
        }
    }

    private static ProducerStateEntry readEntry(ByteBuffer buffer, File file) throws IOException {
        long producerId = buffer.getLong();
        short epoch = buffer.getShort();
        long txnFirstOffset = buffer.getLong();
        int batchCount = buffer.getInt();
        if (batchCount < 0 || batchCount > ProducerStateEntry.MAX_BATCHES) {
            throw new IOException("Snapshot " + file + " gives producer " + producerId + " " + batchCount
                    + " batches, expected 0.." + ProducerStateEntry.MAX_BATCHES);
        }
        ProducerStateEntry entry = new ProducerStateEntry(producerId, epoch);
        entry.currentTxnFirstOffset(txnFirstOffset < 0 ? -1 : txnFirstOffset);
        for (int b = 0; b < batchCount; b++) {
            entry.add(epoch, new ProducerStateEntry.BatchMetadata(buffer.getInt(), buffer.getInt(),
                    buffer.getLong(), buffer.getLong(), buffer.getLong()));
        }
        return entry;
    }

    private static int crc(byte[] bytes, int length) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, CRC_START, length - CRC_START);
        return (int) crc.getValue();
    }
}
