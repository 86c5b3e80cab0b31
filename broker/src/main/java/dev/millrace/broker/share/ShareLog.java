package dev.millrace.broker.share;

import java.util.Optional;

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

    /** Batches from the one holding {@code offset}, up to {@code maxBytes} (at least one whole batch). */
    Records read(long offset, int maxBytes);

    /** The topic's dead-letter topic ({@code millrace.share.dlq.topic}), if it has one. */
    Optional<String> deadLetterTopic();
}
