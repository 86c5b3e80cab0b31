package dev.millrace.broker.log;

import java.io.Closeable;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.Optional;

import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.record.internal.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.FileRecords.LogOffsetPosition;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One segment of a partition log: the batches from {@code baseOffset} up to the next segment's base
 * offset, in {@code <baseOffset>.log}, with its {@link OffsetIndex}, {@link TimeIndex} and
 * {@link TransactionIndex}.
 *
 * <pre>
 *  00000000000000001000.log        [batch][batch][batch]...   RecordBatch v2, back to back
 *  00000000000000001000.index      offsets -> positions, one entry per index.interval.bytes
 *  00000000000000001000.timeindex  max timestamp so far -> offset
 *  00000000000000001000.txnindex   aborted transactions whose abort marker is in this segment
 * </pre>
 *
 * <p>Threading: appends, truncation, recovery and roll-related calls come from the log's single
 * appender (under the log's lock); reads may run concurrently and are bounded by a position the
 * caller took from the published log end, so they never see a batch that is still being written.
 */
final class LogSegment implements Closeable {

    private static final Logger log = LoggerFactory.getLogger(LogSegment.class);

    private final FileRecords records;
    private final OffsetIndex offsetIndex;
    private final TimeIndex timeIndex;
    private final TransactionIndex txnIndex;
    private final long baseOffset;
    private final int indexIntervalBytes;
    private final long createdMs;
    private int bytesSinceLastIndexEntry;
    private volatile long maxTimestampSoFar = RecordBatch.NO_TIMESTAMP;
    private volatile long offsetOfMaxTimestampSoFar;
    private volatile long rollingBasedTimestamp = RecordBatch.NO_TIMESTAMP;

    LogSegment(FileRecords records, OffsetIndex offsetIndex, TimeIndex timeIndex, TransactionIndex txnIndex,
               long baseOffset, int indexIntervalBytes, long createdMs) {
        this.records = records;
        this.offsetIndex = offsetIndex;
        this.timeIndex = timeIndex;
        this.txnIndex = txnIndex;
        this.baseOffset = baseOffset;
        this.indexIntervalBytes = indexIntervalBytes;
        this.createdMs = createdMs;
        this.offsetOfMaxTimestampSoFar = baseOffset;
        TimeIndex.Entry last = timeIndex.lastEntry();
        if (last.timestamp() != RecordBatch.NO_TIMESTAMP) {
            maxTimestampSoFar = last.timestamp();
            offsetOfMaxTimestampSoFar = last.offset();
        }
    }

    /** Opens (or creates) the segment files for {@code baseOffset} in {@code dir}. */
    static LogSegment open(File dir, long baseOffset, LogConfig config, Time time, boolean fileAlreadyExists)
            throws IOException {
        return open(dir, baseOffset, config, time, fileAlreadyExists, "");
    }

    /** Opens the segment files for {@code baseOffset} with {@code suffix} (e.g. {@code .cleaned}) after their names. */
    static LogSegment open(File dir, long baseOffset, LogConfig config, Time time, boolean fileAlreadyExists,
                           String suffix) throws IOException {
        File logFile = LogFiles.withSuffix(LogFiles.logFile(dir, baseOffset), "", suffix);
        FileRecords records = FileRecords.open(logFile, fileAlreadyExists, 0, false);
        OffsetIndex offsetIndex = new OffsetIndex(LogFiles.withSuffix(LogFiles.offsetIndexFile(dir, baseOffset), "",
                suffix), baseOffset, config.segmentIndexBytes());
        TimeIndex timeIndex = new TimeIndex(LogFiles.withSuffix(LogFiles.timeIndexFile(dir, baseOffset), "", suffix),
                baseOffset, config.segmentIndexBytes());
        TransactionIndex txnIndex = new TransactionIndex(LogFiles.withSuffix(LogFiles.txnIndexFile(dir, baseOffset),
                "", suffix));
        return new LogSegment(records, offsetIndex, timeIndex, txnIndex, baseOffset, config.indexIntervalBytes(),
                time.milliseconds());
    }

    long baseOffset() {
        return baseOffset;
    }

    int size() {
        return records.sizeInBytes();
    }

    FileRecords records() {
        return records;
    }

    File file() {
        return records.file();
    }

    OffsetIndex offsetIndex() {
        return offsetIndex;
    }

    TimeIndex timeIndex() {
        return timeIndex;
    }

    TransactionIndex txnIndex() {
        return txnIndex;
    }

    long maxTimestampSoFar() {
        return maxTimestampSoFar;
    }

    /**
     * Appends batches whose offsets are already assigned and lie between this segment's base offset
     * and {@code baseOffset + Integer.MAX_VALUE}.
     */
    void append(long largestOffset, MemoryRecords batches) throws IOException {
        if (batches.sizeInBytes() == 0) {
            return;
        }
        if (largestOffset - baseOffset > Integer.MAX_VALUE || largestOffset < baseOffset) {
            throw new IllegalArgumentException("Offset " + largestOffset + " does not fit segment " + file()
                    + " with base offset " + baseOffset);
        }
        int position = records.sizeInBytes();
        records.append(batches);
        for (RecordBatch batch : batches.batches()) {
            indexBatch(batch, position);
            position += batch.sizeInBytes();
        }
    }

    private void indexBatch(RecordBatch batch, int position) {
        long batchMaxTimestamp = batch.maxTimestamp();
        if (rollingBasedTimestamp == RecordBatch.NO_TIMESTAMP && position == 0) {
            rollingBasedTimestamp = batchMaxTimestamp;
        }
        if (batchMaxTimestamp > maxTimestampSoFar) {
            maxTimestampSoFar = batchMaxTimestamp;
            offsetOfMaxTimestampSoFar = batch.lastOffset();
        }
        if (bytesSinceLastIndexEntry > indexIntervalBytes || position == 0 && indexIntervalBytes == 0) {
            offsetIndex.append(batch.lastOffset(), position);
            timeIndex.maybeAppend(maxTimestampSoFar, offsetOfMaxTimestampSoFar);
            bytesSinceLastIndexEntry = 0;
        }
        bytesSinceLastIndexEntry += batch.sizeInBytes();
    }

    /**
     * True if a batch of {@code sizeInBytes} ending at {@code largestOffset}, with largest timestamp
     * {@code batchMaxTimestamp}, needs a new segment: this one is full (bytes or an index), the offset
     * no longer fits its relative range, or it is older than {@code segment.ms}. Age is measured as
     * Kafka does: from the first batch's timestamp to the new batch's, or, for batches without
     * timestamps, from the segment's creation on the broker's clock.
     */
    boolean shouldRoll(int sizeInBytes, long largestOffset, long batchMaxTimestamp, long nowMs, LogConfig config) {
        if (size() == 0) {
            return false;
        }
        boolean full = size() > config.segmentBytes() - sizeInBytes;
        boolean indexFull = offsetIndex.isFull() || timeIndex.isNearlyFull();
        boolean offsetOverflow = largestOffset - baseOffset > Integer.MAX_VALUE;
        long waited = rollingBasedTimestamp >= 0 ? batchMaxTimestamp - rollingBasedTimestamp : nowMs - createdMs;
        return full || indexFull || offsetOverflow || waited > config.segmentMs();
    }

    /**
     * Finds where {@code targetOffset} starts: the first batch whose last offset is at or after it,
     * searching no further than {@code maxPosition}; null when this segment holds no such batch.
     */
    LogOffsetPosition translateOffset(long targetOffset, int maxPosition) {
        OffsetIndex.Entry start = offsetIndex.lookup(targetOffset);
        for (FileChannelRecordBatch batch : records.batchesFrom(start.position())) {
            if (batch.position() >= maxPosition) {
                return null;
            }
            if (batch.lastOffset() >= targetOffset) {
                return new LogOffsetPosition(batch.baseOffset(), batch.position(), batch.sizeInBytes());
            }
        }
        return null;
    }

    /**
     * Reads from the batch holding {@code startOffset}, up to {@code maxBytes} but no further than
     * {@code maxPosition}. With {@code minOneBatch} the first batch is returned whole even if it is
     * larger than {@code maxBytes}. Returns null if the offset is past this segment.
     */
    FetchDataInfo read(long startOffset, int maxBytes, int maxPosition, boolean minOneBatch) {
        LogOffsetPosition start = translateOffset(startOffset, maxPosition);
        if (start == null) {
            return null;
        }
        LogOffsetMetadata metadata = new LogOffsetMetadata(startOffset, baseOffset, start.position);
        int limit = minOneBatch ? Math.max(maxBytes, start.size) : maxBytes;
        int fetchSize = Math.min(maxPosition - start.position, limit);
        if (fetchSize <= 0) {
            return new FetchDataInfo(metadata, MemoryRecords.EMPTY);
        }
        return new FetchDataInfo(metadata, records.slice(start.position, fetchSize));
    }

    /** The first record at or after {@code startingOffset} whose timestamp is at least {@code timestamp}. */
    Optional<FileRecords.TimestampAndOffset> findOffsetByTimestamp(long timestamp, long startingOffset) {
        TimeIndex.Entry entry = timeIndex.lookupBelow(timestamp);
        int position = offsetIndex.lookup(Math.max(entry.offset(), startingOffset)).position();
        for (FileChannelRecordBatch batch : records.batchesFrom(position)) {
            if (batch.maxTimestamp() < timestamp || batch.lastOffset() < startingOffset) {
                continue;
            }
            for (Record record : batch) {
                if (record.timestamp() >= timestamp && record.offset() >= startingOffset) {
                    return Optional.of(new FileRecords.TimestampAndOffset(record.timestamp(), record.offset(),
                            Optional.of(batch.partitionLeaderEpoch())));
                }
            }
        }
        return Optional.empty();
    }

    /** The offset after the last batch in this segment, or the base offset if it is empty. */
    long readNextOffset() {
        long next = baseOffset;
        for (FileChannelRecordBatch batch : records.batchesFrom(offsetIndex.lastEntry().position())) {
            next = batch.nextOffset();
        }
        return next;
    }

    /**
     * Validates every batch (magic 2, CRC, offsets increasing inside this segment, contiguous when
     * {@code requireContiguous}), rebuilds both indexes, and truncates the file at the first batch
     * that fails.
     *
     * @return the number of bytes truncated; more than zero means data after this segment is suspect
     */
    int recover(boolean requireContiguous) throws IOException {
        offsetIndex.reset();
        timeIndex.reset();
        bytesSinceLastIndexEntry = 0;
        maxTimestampSoFar = RecordBatch.NO_TIMESTAMP;
        offsetOfMaxTimestampSoFar = baseOffset;
        rollingBasedTimestamp = RecordBatch.NO_TIMESTAMP;
        int validBytes = 0;
        long expectedNext = baseOffset;
        try {
            for (FileChannelRecordBatch batch : records.batches()) {
                String problem = BatchValidator.recoveryProblem(batch, baseOffset, expectedNext, requireContiguous);
                if (problem != null) {
                    log.warn("Truncating {} at position {}: {}", file(), validBytes, problem);
                    break;
                }
                indexBatch(batch, validBytes);
                validBytes += batch.sizeInBytes();
                expectedNext = batch.nextOffset();
            }
        } catch (KafkaException e) {
            log.warn("Truncating {} at position {}: unreadable batch: {}", file(), validBytes, e.getMessage());
        }
        int truncated = records.sizeInBytes() - validBytes;
        if (truncated > 0) {
            records.truncateTo(validBytes);
        }
        txnIndex.truncateTo(expectedNext);
        return truncated;
    }

    /**
     * Removes every batch whose last offset is at or after {@code offset}: a batch holding
     * {@code offset} goes whole, since batches are written and replicated whole. Cuts the file and the
     * three indexes and restores the in-memory index state (bytes since the last index entry, the
     * largest timestamp) from the batches that remain after the last offset-index entry.
     *
     * @return the base offset of the first batch removed (where appends may continue), or -1 if no
     *         batch of this segment reaches {@code offset}
     */
    long truncateTo(long offset) throws IOException {
        LogOffsetPosition cut = translateOffset(offset, size());
        if (cut == null) {
            return -1;
        }
        long cutBase = cut.offset;
        records.truncateTo(cut.position);
        offsetIndex.truncateTo(cutBase);
        timeIndex.truncateTo(cutBase);
        txnIndex.truncateTo(cutBase);
        TimeIndex.Entry lastTime = timeIndex.lastEntry();
        maxTimestampSoFar = lastTime.timestamp();
        offsetOfMaxTimestampSoFar = lastTime.offset();
        int bytes = 0;
        for (FileChannelRecordBatch batch : records.batchesFrom(offsetIndex.lastEntry().position())) {
            bytes += batch.sizeInBytes();
            if (batch.maxTimestamp() > maxTimestampSoFar) {
                maxTimestampSoFar = batch.maxTimestamp();
                offsetOfMaxTimestampSoFar = batch.lastOffset();
            }
        }
        bytesSinceLastIndexEntry = bytes;
        if (size() == 0) {
            rollingBasedTimestamp = RecordBatch.NO_TIMESTAMP;
        }
        return cutBase;
    }

    /** Checks both indexes against the segment file; throws {@link CorruptIndexException} if either is damaged. */
    void sanityCheckIndexes() {
        offsetIndex.sanityCheck(size());
        timeIndex.sanityCheck(size(), readNextOffset() - 1);
    }

    /** Called when a newer segment takes over appends: records the final max timestamp and trims the indexes. */
    void onBecomeInactive() throws IOException {
        if (maxTimestampSoFar != RecordBatch.NO_TIMESTAMP) {
            timeIndex.maybeAppend(maxTimestampSoFar, offsetOfMaxTimestampSoFar);
        }
        offsetIndex.trimToEntries();
        timeIndex.trimToEntries();
    }

    /** Re-opens the indexes for appends when this segment becomes the active one after a load. */
    void onBecomeActive() throws IOException {
        offsetIndex.resizeForAppends();
        timeIndex.resizeForAppends();
        if (size() > 0 && rollingBasedTimestamp == RecordBatch.NO_TIMESTAMP) {
            for (FileChannelRecordBatch first : records.batches()) {
                rollingBasedTimestamp = first.maxTimestamp();
                break;
            }
        }
    }

    /** Fsyncs the segment file only (the indexes are rebuilt by recovery if lost). */
    void flushRecords() throws IOException {
        records.flush();
    }

    /** Fsyncs the segment file and both indexes. */
    void flush() throws IOException {
        records.flush();
        offsetIndex.flush();
        timeIndex.flush();
        txnIndex.flush();
    }

    /** Renames all four files by appending {@code suffix} (e.g. {@code .deleted}). */
    void changeFileSuffixes(String oldSuffix, String newSuffix) throws IOException {
        records.renameTo(LogFiles.withSuffix(records.file(), oldSuffix, newSuffix));
        offsetIndex.renameTo(LogFiles.withSuffix(offsetIndex.file(), oldSuffix, newSuffix));
        timeIndex.renameTo(LogFiles.withSuffix(timeIndex.file(), oldSuffix, newSuffix));
        txnIndex.renameTo(LogFiles.withSuffix(txnIndex.file(), oldSuffix, newSuffix));
    }

    @Override
    public void close() throws IOException {
        if (maxTimestampSoFar != RecordBatch.NO_TIMESTAMP && !timeIndex.isFull()) {
            timeIndex.maybeAppend(maxTimestampSoFar, offsetOfMaxTimestampSoFar);
        }
        offsetIndex.close();
        timeIndex.close();
        txnIndex.close();
        records.close();
    }

    /** Closes the files without writing anything more, as a crash would leave them. */
    void closeHandles() throws IOException {
        offsetIndex.closeWithoutTrim();
        timeIndex.closeWithoutTrim();
        txnIndex.close();
        records.channel().close();
    }

    void closeAndDelete() throws IOException {
        offsetIndex.closeAndDelete();
        timeIndex.closeAndDelete();
        txnIndex.closeAndDelete();
        records.close();
        Files.deleteIfExists(records.file().toPath());
    }

    @Override
    public String toString() {
        return "LogSegment(file=" + file() + ", baseOffset=" + baseOffset + ", size=" + size() + ")";
    }
}
