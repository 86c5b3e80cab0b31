package dev.millrace.broker.share;

import java.util.Optional;

import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;

/**
 * What a share-partition needs of its partition's log: the readable range and reads. Implemented
 * over the broker's partition log by {@link ShareBroker}, and in memory by tests.
 *
 * <p>Implementations are thread-safe.
 */
public interface ShareLog {

    long logStartOffset();

    /** The end of what consumers may read (the high watermark). */
    long highWatermark();

    /** The end of the log, above the high watermark on a leader whose followers have not fetched everything yet. */
    default long logEndOffset() {
        return highWatermark();
    }

    /** Whether this broker leads the partition now (in-memory logs of tests always do). */
    default boolean isLeader() {
        return true;
    }

    /** The partition's current leader epoch on this broker; -1 where there is none (tests). */
    default int leaderEpoch() {
        return -1;
    }

    /** Batches from the one holding {@code offset}, up to {@code maxBytes} (at least one whole batch). */
    Records read(long offset, int maxBytes);

    /** The end of what read-committed consumers may read: no open transaction's records below it. */
    default long lastStableOffset() {
        return highWatermark();
    }

    /** Whether {@code batch} belongs to an aborted transaction. */
    default boolean isAborted(RecordBatch batch) {
        return false;
    }

    /**
     * Whether acquisition passes over {@code batch} (its offsets are archived, never delivered):
     * control batches (transaction markers) always.
     */
    default boolean skip(RecordBatch batch) {
        return batch.isControlBatch();
    }

    /** The topic's dead-letter topic ({@code millrace.share.dlq.topic}), if it has one. */
    Optional<String> deadLetterTopic();
}
