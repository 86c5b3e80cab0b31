package dev.millrace.broker.share;

import java.util.Optional;
import java.util.function.LongSupplier;

import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;

/**
 * A share log in one file, for tests: a read is a slice of the file from the batch holding the offset, at least that
 * batch whole, as a log segment's read is; no dead-letter topic.
 */
final class FileShareLog implements ShareLog {

    private final FileRecords file;
    private final LongSupplier highWatermark;

    FileShareLog(FileRecords file, LongSupplier highWatermark) {
        this.file = file;
        this.highWatermark = highWatermark;
    }

    @Override
    public long logStartOffset() {
        return 0;
    }

    @Override
    public long highWatermark() {
        return highWatermark.getAsLong();
    }

    @Override
    public Records read(long offset, int maxBytes) {
        int position = 0;
        int first = 0;
        for (RecordBatch batch : file.batches()) {
            if (batch.lastOffset() >= offset) {
                first = batch.sizeInBytes();
                break;
            }
            position += batch.sizeInBytes();
        }
        return file.slice(position, Math.max(maxBytes, first));
    }

    @Override
    public Optional<String> deadLetterTopic() {
        return Optional.empty();
    }
}
