package dev.millrace.broker.share;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.delay.Time;

/**
 * Copies archived records to their topic's dead-letter topic: the topic config
 * {@code millrace.share.dlq.topic} names it (unset: nothing is copied). The copy keeps the
 * original key, value and headers and adds the {@link ShareDeadLetterHeaders}; it goes to
 * partition {@code original partition % dead-letter partitions}, stamped with the time of
 * dead-lettering. It is appended where that partition is led: here, or with a Produce ({@code acks=all}) to the
 * broker that leads it ({@link ShareTopics#appendToLeader}; on a cluster the dead-letter partition is often led
 * elsewhere than the source partition, and such copies used to be dropped). An append that fails for want of a
 * leader or a connection is tried again every {@value #RETRY_BACKOFF_MS} ms, up to {@value #ATTEMPTS} times (a
 * failover takes a few seconds); a dead-letter topic that does not exist, or an append that keeps failing, drops
 * the copy with a warning (the record stays archived either way).
 *
 * <p>Copies are made in the order records were archived, on the given executor (one thread keeps
 * that order; it waits for each copy, retries included). Delivery to the dead-letter topic is at most once across a
 * crash of this broker: the copy is not made transactionally with the archive.
 *
 * <p>Thread-safe.
 */
public final class DeadLetterPublisher {

    private static final Logger log = LoggerFactory.getLogger(DeadLetterPublisher.class);
    private static final int MAX_READ_BYTES = 16 * 1024 * 1024;
    static final int ATTEMPTS = 40;
    static final long RETRY_BACKOFF_MS = 250;

    private final ShareTopics topics;
    private final Time time;
    private final Executor executor;

    public DeadLetterPublisher(ShareTopics topics, Time time, Executor executor) {
        this.topics = Objects.requireNonNull(topics, "topics");
        this.time = Objects.requireNonNull(time, "time");
        this.executor = Objects.requireNonNull(executor, "executor");
    }

    /** Schedules the copy of {@code deadLetter}'s record. */
    public void publish(DeadLetter deadLetter) {
        executor.execute(() -> {
            try {
                copy(deadLetter);
            } catch (RuntimeException e) {
                log.warn("Could not dead-letter offset {} of {}: {}", deadLetter.offset(), deadLetter.source(),
                        e.toString());
            }
        });
    }

    private void copy(DeadLetter deadLetter) {
        TopicPartition source = deadLetter.source().topicPartition();
        Optional<ShareLog> sourceLog = topics.log(source);
        Optional<String> target = sourceLog.flatMap(ShareLog::deadLetterTopic).filter(t -> !t.isEmpty());
        if (target.isEmpty()) {
            return;
        }
        int partitions = topics.partitionCount(target.get());
        if (partitions == 0) {
            log.warn("Dead-letter topic {} of {} does not exist; offset {} is archived without a copy",
                    target.get(), source.topic(), deadLetter.offset());
            return;
        }
        Optional<Record> original = find(sourceLog.get(), deadLetter.offset());
        if (original.isEmpty()) {
            log.warn("Offset {} of {} is no longer in the log; it is archived without a dead-letter copy",
                    deadLetter.offset(), source);
            return;
        }
        TopicPartition destination = new TopicPartition(target.get(), source.partition() % partitions);
        MemoryRecords copy = copyOf(original.get(), deadLetter);
        for (int attempt = 1; ; attempt++) {
            try {
                topics.appendToLeader(destination, MemoryRecords.readableRecords(copy.buffer().duplicate())).join();
                return;
            } catch (java.util.concurrent.CompletionException | org.apache.kafka.common.errors.RetriableException e) {
                Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null
                        ? e.getCause() : e;
                boolean retriable = cause instanceof org.apache.kafka.common.errors.RetriableException
                        || cause instanceof java.io.IOException;
                if (!retriable || attempt >= ATTEMPTS) {
                    throw cause instanceof RuntimeException r ? r : new IllegalStateException(cause.toString(), cause);
                }
                // a failover of the dead-letter partition: its new leader is known within a few seconds
                java.util.concurrent.locks.LockSupport.parkNanos(RETRY_BACKOFF_MS * 1_000_000L);
            }
        }
    }

    private static Optional<Record> find(ShareLog log, long offset) {
        Records records = log.read(offset, MAX_READ_BYTES);
        for (RecordBatch batch : records.batches()) {
            if (batch.lastOffset() < offset || batch.isControlBatch()) {
                continue;
            }
            for (Record record : batch) {
                if (record.offset() == offset) {
                    return Optional.of(record);
                }
            }
            break;
        }
        return Optional.empty();
    }

    private MemoryRecords copyOf(Record original, DeadLetter deadLetter) {
        List<Header> headers = new ArrayList<>(Arrays.asList(original.headers()));
        SharePartitionKey source = deadLetter.source();
        headers.add(header(ShareDeadLetterHeaders.ORIGINAL_TOPIC, source.topicPartition().topic()));
        headers.add(header(ShareDeadLetterHeaders.ORIGINAL_PARTITION, String.valueOf(source.topicPartition().partition())));
        headers.add(header(ShareDeadLetterHeaders.ORIGINAL_OFFSET, String.valueOf(deadLetter.offset())));
        headers.add(header(ShareDeadLetterHeaders.DELIVERY_COUNT, String.valueOf(deadLetter.deliveryCount())));
        headers.add(header(ShareDeadLetterHeaders.REASON, deadLetter.reason()));
        headers.add(header(ShareDeadLetterHeaders.GROUP, source.groupId()));
        int size = 256 + original.sizeInBytes() + headers.size() * 64;
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(size), Compression.NONE,
                TimestampType.CREATE_TIME, 0L);
        builder.append(time.milliseconds(), copy(original.key()), copy(original.value()), headers.toArray(new Header[0]));
        return builder.build();
    }

    private static ByteBuffer copy(ByteBuffer buffer) {
        return buffer == null ? null : buffer.duplicate();
    }

    private static Header header(String key, String value) {
        return new RecordHeader(key, value.getBytes(StandardCharsets.UTF_8));
    }
}
