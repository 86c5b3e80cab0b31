package dev.millrace.broker.share;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.RetriableException;
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
 * Makes the dead-letter copies share-partitions owe ({@link DeadLetterCopies}): the topic config
 * {@code millrace.share.dlq.topic} names the dead-letter topic (unset: nothing is owed). The copy keeps the
 * original key, value and headers and adds the {@link ShareDeadLetterHeaders}; it goes to
 * partition {@code original partition % dead-letter partitions}, stamped with the time it is made, as an idempotent
 * batch (the share-partition's copy producer id, epoch and sequence). It is appended where that partition is led:
 * here, or with a Produce ({@code acks=all}) to the broker that leads it ({@link ShareTopics#appendToLeader}), and
 * counts as made once the partition's in-sync replicas have it.
 *
 * <p>Delivery to the dead-letter topic is exactly once across crashes of either broker: a copy is owed from the save
 * that archives its record until the save after the copy was written; a copy sent again after a crash in between is
 * answered as a duplicate by the dead-letter partition ({@link DeadLetterCopies}). Each share-partition's copies are
 * made one at a time, in archive order, on the given single-threaded executor; different share-partitions interleave.
 * An append that fails for a reason that may pass (no leader, no connection, not enough replicas, a timeout) is tried
 * again every {@value #RETRY_BACKOFF_MS} ms for as long as it fails, with a warning every {@value #WARN_EVERY}
 * attempts; the copies owed after it wait (<b>decision:</b> a dead-letter topic is kept whole and in order rather than
 * given up on after a while, as it was: a copy dropped during a long failover was a message lost). A copy whose
 * record left the log (retention), whose dead-letter topic does not exist, or that the dead-letter partition refuses
 * for good (too large, not authorised) is given up with a warning, and the record stays archived.
 *
 * <p>Thread-safe.
 */
public final class DeadLetterPublisher {

    private static final Logger log = LoggerFactory.getLogger(DeadLetterPublisher.class);
    private static final int MAX_READ_BYTES = 16 * 1024 * 1024;
    static final int WARN_EVERY = 40;
    static final long RETRY_BACKOFF_MS = 250;

    private final ShareTopics topics;
    private final Time time;
    private final ScheduledExecutorService executor;
    /** Share-partitions whose copies are being made: one chain of steps each, on {@link #executor}. */
    private final Set<SharePartition> draining = ConcurrentHashMap.newKeySet();

    public DeadLetterPublisher(ShareTopics topics, Time time, ScheduledExecutorService executor) {
        this.topics = Objects.requireNonNull(topics, "topics");
        this.time = Objects.requireNonNull(time, "time");
        this.executor = Objects.requireNonNull(executor, "executor");
    }

    /** Makes the copies {@code partition} owes, unless that is under way already. */
    public void drain(SharePartition partition) {
        if (draining.add(partition)) {
            run(() -> next(partition, 0));
        }
    }

    private void run(Runnable step) {
        try {
            executor.execute(step);
        } catch (RejectedExecutionException e) {
            log.debug("Dead-letter copies stop: the broker is shutting down");
        }
    }

    private void later(Runnable step) {
        try {
            executor.schedule(step, RETRY_BACKOFF_MS, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            log.debug("Dead-letter copies stop: the broker is shutting down");
        }
    }

    /**
     * Copies the head of what {@code partition} owes; {@code attempt} failed appends of it came before. A failure
     * reading it is tried again (unless the partition moved): the chain must not end with copies still owed.
     */
    private void next(SharePartition partition, int attempt) {
        try {
            copyHead(partition, attempt);
        } catch (RuntimeException e) {
            if (attempt % WARN_EVERY == 0) {
                log.warn("Dead-letter copy of {} failed ({}); trying again", partition.key(), e.toString());
            }
            stopOrRetry(partition, e, () -> next(partition, attempt + 1));
        }
    }

    private void copyHead(SharePartition partition, int attempt) {
        Optional<DeadLetterCopies.Copy> head = partition.nextDeadLetterCopy();
        if (head.isEmpty()) {
            draining.remove(partition);
            if (partition.nextDeadLetterCopy().isPresent()) {
                drain(partition); // owed between the look and the removal
            }
            return;
        }
        DeadLetterCopies.Copy copy = head.get();
        DeadLetter deadLetter = copy.deadLetter();
        TopicPartition source = deadLetter.source().topicPartition();
        Optional<ShareLog> sourceLog = topics.log(source);
        if (sourceLog.isEmpty()) {
            // no longer hosted here: the partition is being dropped, its new leader makes the copy
            stopOrRetry(partition, new IllegalStateException(source + " is not hosted here"),
                    () -> next(partition, attempt + 1));
            return;
        }
        Optional<String> target = sourceLog.get().deadLetterTopic().filter(t -> !t.isEmpty());
        if (target.isEmpty()) {
            log.warn("{} no longer has a dead-letter topic; offset {} is archived without a copy", source,
                    deadLetter.offset());
            confirm(partition, deadLetter.offset(), false, 0);
            return;
        }
        int partitions = topics.partitionCount(target.get());
        if (partitions == 0) {
            log.warn("Dead-letter topic {} of {} does not exist; offset {} is archived without a copy",
                    target.get(), source.topic(), deadLetter.offset());
            confirm(partition, deadLetter.offset(), false, 0);
            return;
        }
        Optional<Record> original = find(sourceLog.get(), deadLetter.offset());
        if (original.isEmpty()) {
            log.warn("Offset {} of {} is no longer in the log; it is archived without a dead-letter copy",
                    deadLetter.offset(), source);
            confirm(partition, deadLetter.offset(), false, 0);
            return;
        }
        TopicPartition destination = new TopicPartition(target.get(), source.partition() % partitions);
        MemoryRecords records = copyOf(original.get(), copy);
        CompletableFuture<Void> append;
        try {
            append = topics.appendToLeader(destination, records);
        } catch (RuntimeException e) {
            append = CompletableFuture.failedFuture(e);
        }
        append.whenCompleteAsync((done, failure) -> appended(partition, copy, destination, failure, attempt),
                executor);
    }

    private void appended(SharePartition partition, DeadLetterCopies.Copy copy, TopicPartition destination,
                          Throwable failure, int attempt) {
        long offset = copy.deadLetter().offset();
        if (failure == null) {
            confirm(partition, offset, true, 0);
            return;
        }
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                ? failure.getCause() : failure;
        if (cause instanceof OutOfOrderSequenceException || cause instanceof InvalidProducerEpochException) {
            log.warn("{} refused the dead-letter copy of offset {} of {} at producer epoch {}, sequence {} ({}); "
                    + "sending it with the next epoch", destination, offset, copy.deadLetter().source(),
                    copy.producerEpoch(), copy.sequence(), cause.toString());
            try {
                partition.deadLetterCopiesFenced();
            } catch (RuntimeException e) {
                stopOrRetry(partition, e, () -> next(partition, attempt + 1));
                return;
            }
            next(partition, 0);
            return;
        }
        if (cause instanceof RetriableException || cause instanceof java.io.IOException) {
            if ((attempt + 1) % WARN_EVERY == 1) {
                log.warn("Dead-letter copy of offset {} of {} to {} failed ({}); trying again every {} ms",
                        offset, copy.deadLetter().source(), destination, cause.toString(), RETRY_BACKOFF_MS);
            }
            if (partition.isClosed()) {
                draining.remove(partition);
                return;
            }
            later(() -> next(partition, attempt + 1));
            return;
        }
        log.warn("{} refused the dead-letter copy of offset {} of {} for good ({}); it is archived without a copy",
                destination, offset, copy.deadLetter().source(), cause.toString());
        confirm(partition, offset, false, 0);
    }

    /** Saves that the copy of {@code offset} is no longer owed, then goes on with the next one. */
    private void confirm(SharePartition partition, long offset, boolean written, int attempt) {
        try {
            partition.deadLetterCopied(offset, written);
        } catch (RuntimeException e) {
            if (attempt % WARN_EVERY == 0) {
                log.warn("Could not save that the dead-letter copy of offset {} of {} was made ({}); trying again",
                        offset, partition.key(), e.toString());
            }
            stopOrRetry(partition, e, () -> confirm(partition, offset, written, attempt + 1));
            return;
        }
        next(partition, 0);
    }

    /**
     * A save failed: a dropped partition's copies are its new leader's now; anything else (the share-state
     * coordinator moving, a timeout) is tried again.
     */
    private void stopOrRetry(SharePartition partition, RuntimeException failure, Runnable retry) {
        if (partition.isClosed()) {
            log.debug("{} moved to another leader; its dead-letter copies are made there ({})", partition.key(),
                    failure.toString());
            draining.remove(partition);
            return;
        }
        later(retry);
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

    private MemoryRecords copyOf(Record original, DeadLetterCopies.Copy copy) {
        DeadLetter deadLetter = copy.deadLetter();
        List<Header> headers = new ArrayList<>(Arrays.asList(original.headers()));
        SharePartitionKey source = deadLetter.source();
        headers.add(header(ShareDeadLetterHeaders.ORIGINAL_TOPIC, source.topicPartition().topic()));
        headers.add(header(ShareDeadLetterHeaders.ORIGINAL_PARTITION, String.valueOf(source.topicPartition().partition())));
        headers.add(header(ShareDeadLetterHeaders.ORIGINAL_OFFSET, String.valueOf(deadLetter.offset())));
        headers.add(header(ShareDeadLetterHeaders.DELIVERY_COUNT, String.valueOf(deadLetter.deliveryCount())));
        headers.add(header(ShareDeadLetterHeaders.REASON, deadLetter.reason()));
        headers.add(header(ShareDeadLetterHeaders.GROUP, source.groupId()));
        int size = 256 + original.sizeInBytes() + headers.size() * 64;
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(size), RecordBatch.CURRENT_MAGIC_VALUE,
                Compression.NONE, TimestampType.CREATE_TIME, 0L, RecordBatch.NO_TIMESTAMP, copy.producerId(),
                copy.producerEpoch(), copy.sequence());
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
