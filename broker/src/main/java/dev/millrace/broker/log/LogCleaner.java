package dev.millrace.broker.log;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.BooleanSupplier;

import org.apache.kafka.common.record.internal.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecords.RecordFilter;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.internals.BufferSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Compaction for logs with {@code cleanup.policy=compact}: keeps the latest record of every key,
 * never changes an offset.
 *
 * <p>One pass:
 * <ol>
 *   <li>flush the log, so every segment the pass rewrites lies below the recovery point and is never
 *       re-validated with the contiguity rule of non-compacted logs;</li>
 *   <li>scan the inactive segments (the active one is never cleaned) that lie below the first
 *       unstable offset (no open transaction's data is compacted) into a map from key to the offset
 *       of its latest record; batches of aborted transactions are left out of the map and dropped
 *       from the output, transaction markers are always kept, and the cleaned segment keeps the
 *       aborted-transaction index entries of the segments it replaces;</li>
 *   <li>group consecutive segments whose cleaned data fits one segment, and rewrite each group into
 *       {@code <base>.log.cleaned}, keeping a record only if it is the latest for its key. A
 *       tombstone (null value) survives until {@code delete.retention.ms} after the first pass that
 *       saw it: that pass stamps its batch with a delete horizon (KIP-534), a later pass past the
 *       horizon drops it;</li>
 *   <li>swap the cleaned segment in ({@link PartitionLog#replaceSegments}).</li>
 * </ol>
 *
 * <p>The key map holds every distinct key of the cleaned range in memory (a copy of each key and an
 * offset). That bounds the key count a pass can handle by the heap; a fixed-size hashed map as in
 * Kafka's cleaner is left for later. Not thread-safe: run one pass per log at a time (the log
 * maintenance thread does).
 */
public final class LogCleaner {

    private static final Logger log = LoggerFactory.getLogger(LogCleaner.class);
    private static final int READ_CHUNK_BYTES = 1024 * 1024;

    /** What a pass did; all zero when it was skipped. */
    public record Result(int segmentsBefore, int segmentsAfter, long bytesBefore, long bytesAfter) {
        static final Result SKIPPED = new Result(0, 0, 0, 0);
    }

    /**
     * Where the last pass of a log ended and when a tombstone it kept becomes removable: a pass with
     * no new inactive segment before that time would change nothing.
     */
    private record LastPass(long cleanedUpTo, long nextTombstoneHorizonMs) {
    }

    private final Map<PartitionLog, LastPass> lastPasses = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Runs one compaction pass on {@code partitionLog} if its policy includes compact and something
     * changed since the last pass: a segment became inactive, or a kept tombstone's horizon passed.
     */
    public Result clean(PartitionLog partitionLog) throws IOException {
        return clean(partitionLog, () -> false);
    }

    /**
     * As {@link #clean(PartitionLog)}, but stops before the next segment group once {@code stop}
     * answers true (the log is leaving: {@link LogMaintenance#unregister} waits for the pass); the
     * groups already swapped in stay, the next pass of a log still there starts over.
     */
    public Result clean(PartitionLog partitionLog, BooleanSupplier stop) throws IOException {
        LogConfig config = partitionLog.config();
        if (!config.compact()) {
            return Result.SKIPPED;
        }
        long truncationsAtStart = partitionLog.truncationCount();
        List<LogSegment> cleanable = stableSegments(partitionLog, partitionLog.inactiveSegments());
        if (cleanable.isEmpty()) {
            return Result.SKIPPED;
        }
        long cleanableEnd = partitionLog.nextSegmentBaseOffset(cleanable.get(cleanable.size() - 1));
        long nowMs = partitionLog.time().milliseconds();
        LastPass last = lastPasses.get(partitionLog);
        if (last != null && last.cleanedUpTo() == cleanableEnd && nowMs < last.nextTombstoneHorizonMs()) {
            return Result.SKIPPED;
        }
        partitionLog.flush();
        AbortedRanges aborted = new AbortedRanges(partitionLog.collectAbortedTransactions(
                cleanable.get(0).baseOffset(), cleanableEnd));
        Map<ByteBuffer, Long> latest = buildOffsetMap(cleanable, aborted);
        LatestValueFilter filter = new LatestValueFilter(latest, aborted, nowMs, config.deleteRetentionMs());
        long bytesBefore = 0;
        long bytesAfter = 0;
        int groups = 0;
        for (List<LogSegment> group : groupSegments(partitionLog, cleanable, config)) {
            if (stop.getAsBoolean()) {
                lastPasses.remove(partitionLog);
                log.debug("Stopped cleaning {}: the log is leaving", partitionLog.dir().getName());
                return new Result(cleanable.size(), groups, bytesBefore, bytesAfter);
            }
            LogSegment cleaned = cleanGroup(partitionLog, group, filter, config);
            for (LogSegment old : group) {
                bytesBefore += old.size();
            }
            if (partitionLog.replaceSegments(group, cleaned, truncationsAtStart)) {
                bytesAfter += cleaned.size();
                groups++;
            }
        }
        List<LogSegment> after = partitionLog.inactiveSegments();
        if (groupSegments(partitionLog, after, config).size() < after.size()) {
            // segments shrunk by this pass fit together now: the next pass merges them
            lastPasses.remove(partitionLog);
        } else {
            lastPasses.put(partitionLog, new LastPass(cleanableEnd, filter.nextTombstoneHorizonMs));
        }
        log.info("Cleaned {}: {} segments ({} bytes) into {} ({} bytes)", partitionLog.dir().getName(),
                cleanable.size(), bytesBefore, groups, bytesAfter);
        return new Result(cleanable.size(), groups, bytesBefore, bytesAfter);
    }

    /**
     * The leading inactive segments that lie wholly below the first unstable offset: data of an open
     * transaction is not compacted, since whether it counts is not decided yet.
     */
    private static List<LogSegment> stableSegments(PartitionLog partitionLog, List<LogSegment> inactive) {
        long firstUnstable = partitionLog.firstUnstableOffset();
        if (firstUnstable < 0) {
            return inactive;
        }
        int stable = 0;
        while (stable < inactive.size() && partitionLog.nextSegmentBaseOffset(inactive.get(stable)) <= firstUnstable) {
            stable++;
        }
        return inactive.subList(0, stable);
    }

    private static Map<ByteBuffer, Long> buildOffsetMap(List<LogSegment> segments, AbortedRanges aborted) {
        Map<ByteBuffer, Long> latest = new HashMap<>();
        for (LogSegment segment : segments) {
            for (FileChannelRecordBatch batch : segment.records().batches()) {
                if (batch.isControlBatch() || aborted.contains(batch)) {
                    continue;
                }
                for (Record record : batch) {
                    if (record.hasKey()) {
                        latest.put(copy(record.key()), record.offset());
                    }
                }
            }
        }
        return latest;
    }

    private static ByteBuffer copy(ByteBuffer key) {
        ByteBuffer copy = ByteBuffer.allocate(key.remaining());
        copy.put(key.duplicate()).flip();
        return copy;
    }

    /** Consecutive segments whose combined size, index sizes and offset span fit one segment. */
    private static List<List<LogSegment>> groupSegments(PartitionLog partitionLog, List<LogSegment> segments,
                                                        LogConfig config) {
        List<List<LogSegment>> groups = new ArrayList<>();
        List<LogSegment> current = new ArrayList<>();
        long bytes = 0;
        long indexBytes = 0;
        long timeIndexBytes = 0;
        for (LogSegment segment : segments) {
            long lastOffset = partitionLog.nextSegmentBaseOffset(segment) - 1;
            boolean fits = !current.isEmpty()
                    && bytes + segment.size() <= config.segmentBytes()
                    && indexBytes + segment.offsetIndex().sizeInBytes() <= config.segmentIndexBytes()
                    && timeIndexBytes + segment.timeIndex().sizeInBytes() + TimeIndex.ENTRY_SIZE
                        <= config.segmentIndexBytes()
                    && lastOffset - current.get(0).baseOffset() <= Integer.MAX_VALUE;
            if (!fits && !current.isEmpty()) {
                groups.add(current);
                current = new ArrayList<>();
                bytes = 0;
                indexBytes = 0;
                timeIndexBytes = 0;
            }
            current.add(segment);
            bytes += segment.size();
            indexBytes += segment.offsetIndex().sizeInBytes();
            timeIndexBytes += segment.timeIndex().sizeInBytes();
        }
        if (!current.isEmpty()) {
            groups.add(current);
        }
        return groups;
    }

    /** Drops what this cleaner remembers of a log that was closed or removed. */
    public void forget(PartitionLog partitionLog) {
        lastPasses.remove(partitionLog);
    }

    private static LogSegment cleanGroup(PartitionLog partitionLog, List<LogSegment> group, RecordFilter filter,
                                         LogConfig config) throws IOException {
        long baseOffset = group.get(0).baseOffset();
        LogSegment cleaned = LogSegment.open(partitionLog.dir(), baseOffset, config, partitionLog.time(), false,
                LogFiles.CLEANED_SUFFIX);
        try {
            for (LogSegment segment : group) {
                copyRetained(segment, cleaned, filter, config);
                for (AbortedTxn txn : segment.txnIndex().entries()) {
                    cleaned.txnIndex().append(txn);
                }
            }
            cleaned.onBecomeInactive();
            cleaned.flush();
            return cleaned;
        } catch (IOException | RuntimeException e) {
            cleaned.closeAndDelete();
            throw e;
        }
    }

    /** Reads the segment in chunks of whole batches, filters each chunk and appends what is kept. */
    private static void copyRetained(LogSegment source, LogSegment target, RecordFilter filter, LogConfig config)
            throws IOException {
        ByteBuffer chunk = ByteBuffer.allocate(READ_CHUNK_BYTES);
        for (FileChannelRecordBatch batch : source.records().batches()) {
            if (batch.sizeInBytes() > chunk.remaining()) {
                filterAndAppend(chunk, target, filter, config);
                if (batch.sizeInBytes() > chunk.capacity()) {
                    chunk = ByteBuffer.allocate(batch.sizeInBytes());
                }
            }
            batch.writeTo(chunk);
        }
        filterAndAppend(chunk, target, filter, config);
    }

    private static void filterAndAppend(ByteBuffer chunk, LogSegment target, RecordFilter filter, LogConfig config)
            throws IOException {
        chunk.flip();
        if (chunk.hasRemaining()) {
            MemoryRecords.FilterResult result = MemoryRecords.readableRecords(chunk).filterTo(filter,
                    ByteBuffer.allocate(chunk.remaining()), BufferSupplier.NO_CACHING, config.maxMessageBytes());
            ByteBuffer out = result.outputBuffer();
            out.flip();
            MemoryRecords retained = MemoryRecords.readableRecords(out);
            long lastOffset = -1;
            for (MutableRecordBatch batch : retained.batches()) {
                lastOffset = batch.lastOffset();
            }
            if (lastOffset >= 0) {
                target.append(lastOffset, retained);
            }
        }
        chunk.clear();
    }

    /**
     * Keeps the latest record of each key; keeps a tombstone until its batch's delete horizon, and
     * notes the earliest horizon among the tombstones it kept.
     */
    private static final class LatestValueFilter extends RecordFilter {
        private final Map<ByteBuffer, Long> latest;
        private final AbortedRanges aborted;
        private long nextTombstoneHorizonMs = Long.MAX_VALUE;

        LatestValueFilter(Map<ByteBuffer, Long> latest, AbortedRanges aborted, long nowMs, long deleteRetentionMs) {
            super(nowMs, deleteRetentionMs);
            this.latest = latest;
            this.aborted = aborted;
        }

        @Override
        protected BatchRetentionResult checkBatchRetention(RecordBatch batch) {
            if (aborted.contains(batch)) {
                return new BatchRetentionResult(BatchRetention.DELETE, false);
            }
            return new BatchRetentionResult(BatchRetention.DELETE_EMPTY, false);
        }

        @Override
        protected boolean shouldRetainRecord(RecordBatch batch, Record record) {
            if (batch.isControlBatch() || !record.hasKey()) {
                return true;
            }
            Long latestOffset = latest.get(record.key());
            if (latestOffset != null && record.offset() < latestOffset) {
                return false;
            }
            if (!record.hasValue()) {
                OptionalLong stamped = batch.deleteHorizonMs();
                long horizon = stamped.isPresent() ? stamped.getAsLong() : currentTime + deleteRetentionMs;
                if (currentTime >= horizon) {
                    return false;
                }
                nextTombstoneHorizonMs = Math.min(nextTombstoneHorizonMs, horizon);
            }
            return true;
        }
    }

    /**
     * Data batches of aborted transactions: never visible to read-committed consumers, so compaction
     * drops them and does not let them hide an older committed value of their keys. Markers are kept.
     */
    private static final class AbortedRanges {
        private final Map<Long, List<AbortedTxn>> byProducer = new HashMap<>();

        AbortedRanges(List<AbortedTxn> txns) {
            for (AbortedTxn txn : txns) {
                byProducer.computeIfAbsent(txn.producerId(), id -> new java.util.ArrayList<>()).add(txn);
            }
        }

        boolean contains(RecordBatch batch) {
            List<AbortedTxn> txns = byProducer.get(batch.producerId());
            return txns != null && AbortedTxn.anyCovers(txns, batch);
        }
    }
}
