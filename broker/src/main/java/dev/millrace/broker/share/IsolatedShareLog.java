package dev.millrace.broker.share;

import java.util.Optional;
import java.util.function.BooleanSupplier;

import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;

/**
 * A share-partition's view of its log under the group's {@code share.isolation.level}: with
 * {@code read_committed} the readable end is the last stable offset (records of open transactions
 * wait for their outcome) and batches of aborted transactions are skipped (archived, never
 * delivered), as read-committed consumers of Kafka see them; with {@code read_uncommitted} (Kafka's
 * default) the view is the log as it is. The level is read at every acquisition, so a change takes
 * effect at the next fetch.
 */
final class IsolatedShareLog implements ShareLog {

    private final ShareLog log;
    private final BooleanSupplier readCommitted;

    IsolatedShareLog(ShareLog log, BooleanSupplier readCommitted) {
        this.log = log;
        this.readCommitted = readCommitted;
    }

    @Override
    public long logStartOffset() {
        return log.logStartOffset();
    }

    @Override
    public long highWatermark() {
        return readCommitted.getAsBoolean() ? log.lastStableOffset() : log.highWatermark();
    }

    @Override
    public long logEndOffset() {
        return log.logEndOffset();
    }

    @Override
    public boolean isLeader() {
        return log.isLeader();
    }

    @Override
    public int leaderEpoch() {
        return log.leaderEpoch();
    }

    @Override
    public Records read(long offset, int maxBytes) {
        return log.read(offset, maxBytes);
    }

    @Override
    public long lastStableOffset() {
        return log.lastStableOffset();
    }

    @Override
    public boolean isAborted(RecordBatch batch) {
        return log.isAborted(batch);
    }

    @Override
    public boolean skip(RecordBatch batch) {
        return batch.isControlBatch() || readCommitted.getAsBoolean() && log.isAborted(batch);
    }

    @Override
    public Optional<String> deadLetterTopic() {
        return log.deadLetterTopic();
    }
}
