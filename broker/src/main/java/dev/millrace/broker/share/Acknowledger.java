package dev.millrace.broker.share;

import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.protocol.Errors;

/**
 * Applies one partition's acknowledgement batches from ShareFetch or ShareAcknowledge to its
 * share-partition. A partition the group never fetched holds no records, so acknowledging it
 * answers INVALID_RECORD_STATE.
 *
 * <p>Thread-safe.
 */
final class Acknowledger {

    private final SharePartitionManager partitions;

    Acknowledger(SharePartitionManager partitions) {
        this.partitions = partitions;
    }

    Errors acknowledge(String groupId, String memberId, TopicIdPartition tip, List<AcknowledgementBatch> batches) {
        if (batches.isEmpty()) {
            return Errors.NONE;
        }
        return partitions.get(groupId, tip.topicPartition())
                .map(p -> p.acknowledge(memberId, batches))
                .orElse(Errors.INVALID_RECORD_STATE);
    }

    /** The wire form (first, last, type ids) as an {@link AcknowledgementBatch}. */
    static AcknowledgementBatch batch(long firstOffset, long lastOffset, List<Byte> types) {
        byte[] ids = new byte[types.size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = types.get(i);
        }
        return new AcknowledgementBatch(firstOffset, lastOffset, ids);
    }

    static <T> List<AcknowledgementBatch> batches(List<T> wire, java.util.function.Function<T, AcknowledgementBatch> f) {
        List<AcknowledgementBatch> out = new ArrayList<>(wire.size());
        wire.forEach(b -> out.add(f.apply(b)));
        return out;
    }
}
