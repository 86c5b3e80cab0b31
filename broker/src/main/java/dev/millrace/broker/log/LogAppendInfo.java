package dev.millrace.broker.log;

/**
 * What an append wrote: the offsets given to the first and last record, the largest timestamp in
 * the appended batches and the offset that carried it, the number of records and bytes.
 *
 * <p>With {@code duplicate} set, the append was a retry of idempotent batches already in the log:
 * nothing was written, the offsets and timestamp are those of the original batches, and the record
 * and byte counts are 0.
 */
public record LogAppendInfo(long firstOffset, long lastOffset, long maxTimestamp, long offsetOfMaxTimestamp,
                            int recordCount, int sizeInBytes, boolean duplicate) {

    /** An append that wrote its batches. */
    public LogAppendInfo(long firstOffset, long lastOffset, long maxTimestamp, long offsetOfMaxTimestamp,
                         int recordCount, int sizeInBytes) {
        this(firstOffset, lastOffset, maxTimestamp, offsetOfMaxTimestamp, recordCount, sizeInBytes, false);
    }
}
