package dev.millrace.broker.share;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;

import dev.millrace.protocol.ext.ShareBrowse;
import dev.millrace.protocol.ext.ShareBrowse.OffsetRange;

/**
 * Serves ShareBrowse ({@link ShareBrowse}): one share-partition's records still on the queue, read without
 * acquiring anything. The share-partition is created if no member fetched it yet (from its persisted state, or at
 * the start its {@code share.auto.offset.reset} gives), exactly as a first fetch would, so a browser sees what a
 * first consumer would get.
 *
 * <p>What is hidden: offsets whose in-flight state is ACKNOWLEDGED or ARCHIVED, taken from one snapshot of the
 * share-partition; batches of aborted transactions and control batches are not returned; the end is the
 * share-partition's readable end (the last stable offset for a read_committed group). The snapshot and the read
 * are not atomic: a record accepted between them is shown (a browser's enumeration is not a static snapshot,
 * JMS 3.1 §4.1.6 allows that).
 *
 * <p>Thread-safe.
 */
public final class ShareBrowseHandler {

    private final ShareTopics topics;
    private final SharePartitionManager partitions;

    ShareBrowseHandler(ShareTopics topics, SharePartitionManager partitions) {
        this.topics = Objects.requireNonNull(topics, "topics");
        this.partitions = Objects.requireNonNull(partitions, "partitions");
    }

    public ShareBrowse.Response browse(ShareBrowse.Request request) {
        if (request.groupId().isEmpty()) {
            return ShareBrowse.Response.error(Errors.INVALID_REQUEST.code(), "group_id must not be empty");
        }
        if (request.maxBytes() <= 0) {
            return ShareBrowse.Response.error(Errors.INVALID_REQUEST.code(), "max_bytes must be positive, was "
                    + request.maxBytes());
        }
        Optional<Uuid> topicId = topics.idOf(request.topic());
        if (topicId.isEmpty() || request.partition() < 0
                || request.partition() >= topics.partitionCount(request.topic())) {
            return ShareBrowse.Response.error(Errors.UNKNOWN_TOPIC_OR_PARTITION.code(), "no partition "
                    + request.partition() + " of topic " + request.topic());
        }
        TopicPartition tp = new TopicPartition(request.topic(), request.partition());
        Optional<SharePartition> partition;
        try {
            partition = partitions.getOrCreate(request.groupId(), topicId.get(), tp);
        } catch (org.apache.kafka.common.errors.ApiException e) {
            return ShareBrowse.Response.error(Errors.forException(e).code(), e.getMessage());
        }
        if (partition.isEmpty()) {
            return ShareBrowse.Response.error(Errors.NOT_LEADER_OR_FOLLOWER.code(), tp + " is not hosted here");
        }
        return read(partition.get(), request);
    }

    private static ShareBrowse.Response read(SharePartition partition, ShareBrowse.Request request) {
        SharePartitionSnapshot snapshot = partition.snapshot();
        ShareLog log = partition.log();
        long end = log.highWatermark();
        long from = Math.max(request.fetchOffset(), snapshot.startOffset());
        if (from >= end) {
            return new ShareBrowse.Response(Errors.NONE.code(), null, snapshot.startOffset(), end, end, List.of(),
                    null);
        }
        Records records = log.read(from, request.maxBytes());
        List<RecordBatch> shown = new ArrayList<>();
        int size = 0;
        long next = from;
        for (RecordBatch batch : records.batches()) {
            if (batch.baseOffset() >= end) {
                break;
            }
            if (batch.lastOffset() < from) {
                continue;
            }
            next = Math.min(batch.lastOffset() + 1, end);
            if (!batch.isControlBatch() && !log.isAborted(batch)) {
                shown.add(batch);
                size += batch.sizeInBytes();
            }
        }
        ByteBuffer bytes = ByteBuffer.allocate(size);
        shown.forEach(b -> b.writeTo(bytes));
        bytes.flip();
        return new ShareBrowse.Response(Errors.NONE.code(), null, snapshot.startOffset(), end, next,
                hidden(snapshot, from, next), bytes.hasRemaining() ? bytes : null);
    }

    /** Settled offsets in [from, to), merged into ascending ranges. */
    private static List<OffsetRange> hidden(SharePartitionSnapshot snapshot, long from, long to) {
        List<OffsetRange> out = new ArrayList<>();
        long first = -1;
        long last = -1;
        for (SharePartitionSnapshot.Entry e : snapshot.entries()) {
            if (e.offset() < from || e.offset() >= to || !e.state().isTerminal()) {
                continue;
            }
            if (first >= 0 && e.offset() == last + 1) {
                last = e.offset();
            } else {
                if (first >= 0) {
                    out.add(new OffsetRange(first, last));
                }
                first = e.offset();
                last = e.offset();
            }
        }
        if (first >= 0) {
            out.add(new OffsetRange(first, last));
        }
        return out;
    }
}
