package dev.millrace.broker.share;

import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.protocol.Errors;

/**
 * Applies one partition's acknowledgement batches from ShareFetch or ShareAcknowledge to its
 * share-partition. A partition the group never fetched holds no records, so acknowledging it
 * answers INVALID_RECORD_STATE; one this broker does not lead (its leadership moved, and the share-partition with it)
 * answers NOT_LEADER_OR_FOLLOWER, and so does one whose acknowledgement could not be saved because it moved meanwhile:
 * an acknowledgement answered NONE is saved.
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
        java.util.Optional<SharePartition> partition = partitions.get(groupId, tip.topicPartition());
        if (partition.isEmpty()) {
            // not led here (any more): the client refreshes its metadata; else the group never fetched it
            return partitions.notLeader(tip.topicPartition()) ? Errors.NOT_LEADER_OR_FOLLOWER
                    : Errors.INVALID_RECORD_STATE;
        }
        try {
            return partition.get().acknowledge(memberId, batches);
        } catch (org.apache.kafka.common.errors.ApiException e) {
            // not saved (the partition moved, or the share-state coordinator could not be reached): not applied
            return Errors.forException(e);
        }
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
