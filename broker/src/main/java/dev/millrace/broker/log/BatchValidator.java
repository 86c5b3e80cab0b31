package dev.millrace.broker.log;

import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.internals.CloseableIterator;

/**
 * Checks batches before they reach a segment, and assigns offsets to those a leader appends.
 *
 * <p>Validation never changes the input, so a rejected append leaves the log and the caller's
 * buffer as they were. Every error names the byte position of the offending batch in the request
 * and what was expected. The exceptions are kafka-clients' {@code ApiException}s so the network
 * layer maps them to wire error codes unchanged: {@link CorruptRecordException} (CRC, truncated
 * bytes), {@link InvalidRecordException} (magic, record count, ordering, missing key),
 * {@link RecordTooLargeException} ({@code max.message.bytes}) and {@link RecordBatchTooLargeException}
 * (larger than a segment).
 *
 * <p>Stateless and thread-safe.
 */
final class BatchValidator {

    private BatchValidator() {
    }

    /**
     * Batches that passed validation, in order, with their total record count and whether any has a
     * producer id (so that appends without one skip the producer state entirely).
     */
    record ValidBatches(MemoryRecords records, List<MutableRecordBatch> batches, int recordCount,
                        boolean hasProducerIds) {
    }

    /**
     * @param assignOffsets true for a leader append, whose batches get new consecutive offsets: each
     *                      must then hold exactly as many records as its offset deltas span. Batches
     *                      replicated from a compacted log may hold fewer.
     */
    static ValidBatches validate(MemoryRecords records, LogConfig config, boolean assignOffsets) {
        int total = records.sizeInBytes();
        if (total == 0) {
            throw new InvalidRecordException("The append holds no record batch");
        }
        if (total > config.segmentBytes()) {
            throw new RecordBatchTooLargeException("The append is " + total + " bytes, above segment.bytes="
                    + config.segmentBytes());
        }
        List<MutableRecordBatch> batches = new ArrayList<>();
        int position = 0;
        int recordCount = 0;
        boolean hasProducerIds = false;
        try {
            for (MutableRecordBatch batch : records.batches()) {
                recordCount += validateBatch(batch, position, config, assignOffsets);
                hasProducerIds |= batch.hasProducerId();
                batches.add(batch);
                position += batch.sizeInBytes();
            }
        } catch (CorruptRecordException | InvalidRecordException | RecordTooLargeException e) {
            throw e;
        } catch (KafkaException e) {
            throw new CorruptRecordException("Batch at byte " + position + " cannot be read: " + e.getMessage(), e);
        }
        if (position != total) {
            throw new CorruptRecordException("Truncated batch at byte " + position + ": " + (total - position)
                    + " trailing bytes do not form a whole batch");
        }
        return new ValidBatches(records, batches, recordCount, hasProducerIds);
    }

    private static int validateBatch(MutableRecordBatch batch, int position, LogConfig config,
                                     boolean assignOffsets) {
        if (batch.magic() != RecordBatch.MAGIC_VALUE_V2) {
            throw new InvalidRecordException("Batch at byte " + position + " has magic " + batch.magic()
                    + "; the log stores only magic " + RecordBatch.MAGIC_VALUE_V2 + " (RecordBatch v2)");
        }
        if (batch.sizeInBytes() > config.maxMessageBytes()) {
            throw new RecordTooLargeException("Batch at byte " + position + " is " + batch.sizeInBytes()
                    + " bytes, above max.message.bytes=" + config.maxMessageBytes());
        }
        try {
            batch.ensureValid();
        } catch (CorruptRecordException e) {
            throw new CorruptRecordException("Batch at byte " + position + " is corrupt: " + e.getMessage(), e);
        }
        Integer count = batch.countOrNull();
        long span = batch.lastOffset() - batch.baseOffset() + 1;
        if (count == null || count <= 0) {
            throw new InvalidRecordException("Batch at byte " + position + " holds no record");
        }
        if (assignOffsets ? count != span : count > span) {
            throw new InvalidRecordException("Batch at byte " + position + " claims " + count
                    + " records but its offset deltas span " + span);
        }
        if (config.compact()) {
            requireKeys(batch, position);
        }
        return count;
    }

    private static void requireKeys(MutableRecordBatch batch, int position) {
        try (CloseableIterator<Record> it = batch.streamingIterator(
                org.apache.kafka.common.utils.internals.BufferSupplier.NO_CACHING)) {
            int index = 0;
            while (it.hasNext()) {
                if (!it.next().hasKey()) {
                    throw new InvalidRecordException("Record " + index + " of batch at byte " + position
                            + " has no key; a log with cleanup.policy=compact needs a key on every record");
                }
                index++;
            }
        }
    }

    /**
     * Gives the validated batches consecutive offsets from {@code firstOffset}, stamps the leader
     * epoch and, for {@code LogAppendTime}, the broker's time.
     */
    static LogAppendInfo assignOffsets(ValidBatches valid, long firstOffset, int leaderEpoch, long nowMs,
                                       TimestampType timestampType) {
        long next = firstOffset;
        long maxTimestamp = RecordBatch.NO_TIMESTAMP;
        long offsetOfMaxTimestamp = firstOffset;
        for (MutableRecordBatch batch : valid.batches()) {
            long span = batch.lastOffset() - batch.baseOffset();
            batch.setLastOffset(next + span);
            batch.setPartitionLeaderEpoch(leaderEpoch);
            if (timestampType == TimestampType.LOG_APPEND_TIME) {
                batch.setMaxTimestamp(TimestampType.LOG_APPEND_TIME, nowMs);
            }
            if (batch.maxTimestamp() > maxTimestamp) {
                maxTimestamp = batch.maxTimestamp();
                offsetOfMaxTimestamp = batch.lastOffset();
            }
            next += span + 1;
        }
        return new LogAppendInfo(firstOffset, next - 1, maxTimestamp, offsetOfMaxTimestamp, valid.recordCount(),
                valid.records().sizeInBytes());
    }

    /**
     * Checks that batches which already carry offsets (replicated from a leader) start at or after
     * {@code logEndOffset} and increase.
     */
    static LogAppendInfo checkAssignedOffsets(ValidBatches valid, long logEndOffset) {
        long expectedAtLeast = logEndOffset;
        long maxTimestamp = RecordBatch.NO_TIMESTAMP;
        long offsetOfMaxTimestamp = -1;
        int position = 0;
        for (MutableRecordBatch batch : valid.batches()) {
            if (batch.baseOffset() < expectedAtLeast) {
                throw new InvalidRecordException("Batch at byte " + position + " starts at offset " + batch.baseOffset()
                        + ", expected at least " + expectedAtLeast + ": offsets must increase past the log end");
            }
            if (batch.maxTimestamp() > maxTimestamp) {
                maxTimestamp = batch.maxTimestamp();
                offsetOfMaxTimestamp = batch.lastOffset();
            }
            expectedAtLeast = batch.nextOffset();
            position += batch.sizeInBytes();
        }
        List<MutableRecordBatch> batches = valid.batches();
        return new LogAppendInfo(batches.get(0).baseOffset(), batches.get(batches.size() - 1).lastOffset(),
                maxTimestamp, offsetOfMaxTimestamp, valid.recordCount(), valid.records().sizeInBytes());
    }

    /**
     * Why a batch found in a segment file during recovery cannot be trusted, or null if it can.
     *
     * @param expectedNext      the offset after the previous valid batch (the segment's base offset at first)
     * @param requireContiguous true when the log never has offset gaps (it is not compacted)
     */
    static String recoveryProblem(RecordBatch batch, long segmentBaseOffset, long expectedNext,
                                  boolean requireContiguous) {
        if (batch.magic() != RecordBatch.MAGIC_VALUE_V2) {
            return "magic " + batch.magic() + " instead of " + RecordBatch.MAGIC_VALUE_V2;
        }
        try {
            batch.ensureValid();
        } catch (CorruptRecordException e) {
            return e.getMessage();
        }
        long base = batch.baseOffset();
        if (base < expectedNext || requireContiguous && base != expectedNext) {
            return "batch starts at offset " + base + ", expected " + (requireContiguous ? "" : "at least ")
                    + expectedNext;
        }
        if (batch.lastOffset() - segmentBaseOffset > Integer.MAX_VALUE) {
            return "batch ends at offset " + batch.lastOffset() + ", beyond the segment's range from "
                    + segmentBaseOffset;
        }
        Integer count = batch.countOrNull();
        long span = batch.lastOffset() - base + 1;
        if (count == null || count > span || requireContiguous && count != span) {
            return "batch claims " + count + " records for offsets " + base + ".." + batch.lastOffset();
        }
        return null;
    }
}
