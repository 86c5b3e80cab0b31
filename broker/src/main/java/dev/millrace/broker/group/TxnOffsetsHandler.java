package dev.millrace.broker.group;

import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic;
import org.apache.kafka.common.message.TxnOffsetCommitResponseData;
import org.apache.kafka.common.message.TxnOffsetCommitResponseData.TxnOffsetCommitResponsePartition;
import org.apache.kafka.common.message.TxnOffsetCommitResponseData.TxnOffsetCommitResponseTopic;
import org.apache.kafka.common.protocol.Errors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.log.TxnVerification;

/**
 * TxnOffsetCommit: offsets committed inside a producer's transaction (what
 * {@code sendOffsetsToTransaction} sends). They are written to the group's partition as a
 * transactional batch of the producer (its id and epoch; sequence 0, which the log does not check
 * for coordinator writes) and stay pending until the
 * transaction coordinator's marker reaches the partition ({@link GroupCoordinator#onTransactionMarker}).
 *
 * <p>Group checks: with a generation (consumer group metadata passed by the producer, v3+) the
 * member and generation must be current, so a producer whose consumer was rebalanced away cannot
 * commit for partitions it no longer owns; without one (generation -1) the group must be Empty or
 * absent, as for OffsetCommit. A producer fenced on this partition gets its epoch error.
 *
 * <p>Threading: confined to the shard's thread.
 */
final class TxnOffsetsHandler {

    private static final Logger log = LoggerFactory.getLogger(TxnOffsetsHandler.class);

    private final GroupShard shard;

    TxnOffsetsHandler(GroupShard shard) {
        this.shard = shard;
    }

    /**
     * @param guard the guard of the transaction's verification ({@link TxnVerification}), or null when the append is
     *              not checked for one
     */
    TxnOffsetCommitResponseData handle(TxnOffsetCommitRequestData request, TxnVerification.Guard guard) {
        String groupId = request.groupId();
        ClassicGroup group = shard.group(groupId);
        boolean created = false;
        try {
            if (groupId == null || groupId.isEmpty()) {
                throw Errors.INVALID_GROUP_ID.exception("The group id must not be empty");
            }
            if (group == null) {
                if (request.generationIdOrMemberEpoch() >= 0) {
                    throw Errors.ILLEGAL_GENERATION.exception("Group " + groupId + " does not exist; member "
                            + request.memberId() + " cannot commit for generation " + request.generationIdOrMemberEpoch());
                }
                group = shard.createGroup(groupId);
                created = true;
            } else if (request.generationIdOrMemberEpoch() >= 0) {
                group.validateMember(request.memberId(), request.groupInstanceId(), "TxnOffsetCommit");
                group.validateGeneration(request.generationIdOrMemberEpoch(), request.memberId(), "TxnOffsetCommit");
            } else if (!group.isInState(GroupState.EMPTY)) {
                throw Errors.UNKNOWN_MEMBER_ID.exception("Group " + groupId + " has members (state " + group.state()
                        + "); a transactional commit without member id and generation needs an Empty group");
            }
            return commit(request, guard);
        } catch (ApiException e) {
            log.debug("TxnOffsetCommit of producer {} for group {} failed: {}", request.producerId(), groupId,
                    e.getMessage());
            return errorResponse(request, Errors.forException(e));
        } finally {
            if (created) {
                shard.maybeRemoveUnusedGroup(group);
            }
        }
    }

    private TxnOffsetCommitResponseData commit(TxnOffsetCommitRequestData request, TxnVerification.Guard guard) {
        long nowMs = shard.nowMs();
        int maxMetadataBytes = shard.config().maxMetadataBytes();
        List<GroupRecord.OffsetCommit> records = new ArrayList<>();
        List<TxnOffsetCommitResponsePartition> accepted = new ArrayList<>();
        TxnOffsetCommitResponseData response = new TxnOffsetCommitResponseData();
        for (TxnOffsetCommitRequestTopic topic : request.topics()) {
            TxnOffsetCommitResponseTopic out = new TxnOffsetCommitResponseTopic().setName(topic.name());
            for (TxnOffsetCommitRequestPartition p : topic.partitions()) {
                TxnOffsetCommitResponsePartition outPartition = new TxnOffsetCommitResponsePartition()
                        .setPartitionIndex(p.partitionIndex());
                String metadata = p.committedMetadata() == null ? "" : p.committedMetadata();
                if (metadata.length() > maxMetadataBytes) {
                    outPartition.setErrorCode(Errors.OFFSET_METADATA_TOO_LARGE.code());
                } else {
                    records.add(new GroupRecord.OffsetCommit(request.groupId(),
                            new TopicPartition(topic.name(), p.partitionIndex()),
                            new CommittedOffset(p.committedOffset(), p.committedLeaderEpoch(), metadata, nowMs)));
                    accepted.add(outPartition);
                }
                out.partitions().add(outPartition);
            }
            response.topics().add(out);
        }
        if (!records.isEmpty()) {
            try {
                shard.appendTransactional(records, request.producerId(), request.producerEpoch(), guard);
            } catch (RuntimeException e) {
                Errors error = e instanceof org.apache.kafka.common.errors.InvalidProducerEpochException
                        ? Errors.PRODUCER_FENCED : GroupShard.appendError(e);
                log.warn("Could not append {} transactional offsets of group {}: answering {}", records.size(),
                        request.groupId(), error, e);
                accepted.forEach(p -> p.setErrorCode(error.code()));
            }
        }
        return response;
    }

    static TxnOffsetCommitResponseData errorResponse(TxnOffsetCommitRequestData request, Errors error) {
        TxnOffsetCommitResponseData response = new TxnOffsetCommitResponseData();
        for (TxnOffsetCommitRequestTopic topic : request.topics()) {
            TxnOffsetCommitResponseTopic out = new TxnOffsetCommitResponseTopic().setName(topic.name());
            for (TxnOffsetCommitRequestPartition p : topic.partitions()) {
                out.partitions().add(new TxnOffsetCommitResponsePartition().setPartitionIndex(p.partitionIndex())
                        .setErrorCode(error.code()));
            }
            response.topics().add(out);
        }
        return response;
    }
}
