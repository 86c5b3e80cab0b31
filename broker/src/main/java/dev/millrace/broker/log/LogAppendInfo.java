package dev.millrace.broker.log;

/**
 * What an append wrote: the offsets given to the first and last record, the largest timestamp in
 * the appended batches and the offset that carried it, the number of records and bytes.
 */
public record LogAppendInfo(long firstOffset, long lastOffset, long maxTimestamp, long offsetOfMaxTimestamp,
                            int recordCount, int sizeInBytes) {
}
