package dev.millrace.broker.share;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;

import dev.millrace.protocol.ext.ShareSettle;

/**
 * The ShareSettle extension ({@link ShareSettle}): a member's acknowledgements outside its share session, so that a
 * client may send them while its ShareFetch is parked on another connection. GAP, ACCEPT, RELEASE, REJECT and RENEW are
 * applied exactly as ShareAcknowledge applies them; RETURN gives back records acquired but never delivered, also
 * those whose lock was lost with an earlier leader ({@link SharePartition#returnAcquired}). A member that is not (or no longer) in the group holds nothing, so its
 * offsets are answered INVALID_RECORD_STATE.
 *
 * <p>Thread-safe; called on request threads.
 */
public final class ShareSettleHandler {

    private final SharePartitionManager partitions;

    ShareSettleHandler(SharePartitionManager partitions) {
        this.partitions = partitions;
    }

    public ShareSettle.Response handle(ShareSettle.Request request) {
        if (request.groupId().isEmpty() || request.memberId().isEmpty()) {
            return new ShareSettle.Response(Errors.INVALID_REQUEST.code(), "group_id and member_id must be set",
                    List.of());
        }
        for (ShareSettle.PartitionBatches p : request.partitions()) {
            for (ShareSettle.Batch b : p.batches()) {
                if (b.lastOffset() < b.firstOffset() || b.firstOffset() < 0) {
                    return new ShareSettle.Response(Errors.INVALID_REQUEST.code(), "batch " + b.firstOffset()
                            + ".." + b.lastOffset() + " of " + p.topic() + "-" + p.partition() + " is not a range",
                            List.of());
                }
                if (b.type() < ShareSettle.GAP || b.type() > ShareSettle.RETURN) {
                    return new ShareSettle.Response(Errors.INVALID_REQUEST.code(), "unknown settle type " + b.type()
                            + " for " + p.topic() + "-" + p.partition() + " offsets " + b.firstOffset() + ".."
                            + b.lastOffset(), List.of());
                }
            }
        }
        List<ShareSettle.PartitionResult> out = new ArrayList<>(request.partitions().size());
        for (ShareSettle.PartitionBatches p : request.partitions()) {
            TopicPartition tp = new TopicPartition(p.topic(), p.partition());
            Errors error;
            try {
                // a RETURN may reach a new leader before any fetch has loaded the partition's state there
                boolean returns = p.batches().stream().anyMatch(b -> b.type() == ShareSettle.RETURN);
                Optional<SharePartition> partition = returns ? partitions.load(request.groupId(), tp)
                        : partitions.get(request.groupId(), tp);
                error = partition.map(sp -> settle(sp, request.memberId(), p.batches())).orElse(
                        partitions.notLeader(tp) ? Errors.NOT_LEADER_OR_FOLLOWER : Errors.UNKNOWN_TOPIC_OR_PARTITION);
            } catch (org.apache.kafka.common.errors.ApiException e) {
                error = Errors.forException(e); // not saved: not applied
            }
            out.add(new ShareSettle.PartitionResult(p.topic(), p.partition(), error.code()));
        }
        return new ShareSettle.Response(Errors.NONE.code(), null, out);
    }

    private static Errors settle(SharePartition partition, String memberId, List<ShareSettle.Batch> batches) {
        List<AcknowledgementBatch> acknowledgements = new ArrayList<>();
        Errors result = Errors.NONE;
        for (ShareSettle.Batch b : batches) {
            if (b.type() == ShareSettle.RETURN) {
                Errors e = partition.returnAcquired(memberId, b.firstOffset(), b.lastOffset());
                result = e != Errors.NONE ? e : result;
            } else {
                acknowledgements.add(new AcknowledgementBatch(b.firstOffset(), b.lastOffset(), new byte[] {b.type()}));
            }
        }
        if (!acknowledgements.isEmpty()) {
            Errors e = partition.acknowledge(memberId, acknowledgements);
            result = e != Errors.NONE ? e : result;
        }
        return result;
    }
}
