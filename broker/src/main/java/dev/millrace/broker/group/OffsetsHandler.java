package dev.millrace.broker.group;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitRequestData.OffsetCommitRequestPartition;
import org.apache.kafka.common.message.OffsetCommitRequestData.OffsetCommitRequestTopic;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetCommitResponseData.OffsetCommitResponsePartition;
import org.apache.kafka.common.message.OffsetCommitResponseData.OffsetCommitResponseTopic;
import org.apache.kafka.common.message.OffsetFetchRequestData.OffsetFetchRequestGroup;
import org.apache.kafka.common.message.OffsetFetchRequestData.OffsetFetchRequestTopics;
import org.apache.kafka.common.message.OffsetFetchResponseData.OffsetFetchResponseGroup;
import org.apache.kafka.common.message.OffsetFetchResponseData.OffsetFetchResponsePartitions;
import org.apache.kafka.common.message.OffsetFetchResponseData.OffsetFetchResponseTopics;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.OffsetCommitResponse;
import org.apache.kafka.common.requests.OffsetFetchResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * OffsetCommit and OffsetFetch for the groups of one shard.
 *
 * <p>A commit is checked against the group first: a member's commit needs its member id and the
 * current generation (and is refused with {@code REBALANCE_IN_PROGRESS} while the group completes a
 * rebalance); a commit with generation -1 and no member id (a "simple" consumer or an admin tool) is
 * accepted only while the group is Empty, and creates the group if it does not exist. Accepted
 * partitions are appended to the log as one batch and answered only after the append returned.
 * Version 10 names topics by id, resolved through {@link TopicIds}.
 *
 * <p>Threading: not thread-safe; runs on its {@link GroupShard}'s thread.
 */
final class OffsetsHandler {

    private static final Logger log = LoggerFactory.getLogger(OffsetsHandler.class);

    private final GroupShard shard;
    private final Rebalancer rebalancer;

    OffsetsHandler(GroupShard shard, Rebalancer rebalancer) {
        this.shard = shard;
        this.rebalancer = rebalancer;
    }

    void handleOffsetCommit(OffsetCommitRequestData request, short apiVersion,
                            CompletableFuture<OffsetCommitResponse> result) {
        String groupId = request.groupId();
        ClassicGroup group = null;
        boolean created = false;
        try {
            if (groupId == null) {
                throw Errors.INVALID_GROUP_ID.exception("The group id must not be null");
            }
            group = shard.group(groupId);
            if (group == null) {
                if (request.generationIdOrMemberEpoch() >= 0) {
                    Errors error = apiVersion >= 9 ? Errors.GROUP_ID_NOT_FOUND : Errors.ILLEGAL_GENERATION;
                    throw error.exception("Group " + groupId + " does not exist; member " + request.memberId()
                            + " cannot commit for generation " + request.generationIdOrMemberEpoch());
                }
                group = shard.createGroup(groupId);
                created = true;
            }
            GroupMember member = validateCommit(group, request);
            result.complete(new OffsetCommitResponse(commit(groupId, request, apiVersion)));
            if (member != null) {
                rebalancer.armSessionTimer(group, member);
            }
        } catch (ApiException e) {
            log.debug("OffsetCommit of member '{}' in group {} failed: {}", request.memberId(), groupId,
                    e.getMessage());
            result.complete(new OffsetCommitResponse(errorResponse(request, apiVersion, Errors.forException(e))));
        } finally {
            if (created) {
                shard.maybeRemoveUnusedGroup(group);
            }
        }
    }

    /** The member that commits, or null for a commit from outside the group (generation -1, Empty group). */
    private static GroupMember validateCommit(ClassicGroup group, OffsetCommitRequestData request) {
        if (group.isInState(GroupState.DEAD)) {
            throw Errors.COORDINATOR_NOT_AVAILABLE.exception("Group " + group.groupId() + " is being deleted");
        }
        int generationId = request.generationIdOrMemberEpoch();
        String memberId = request.memberId();
        if (generationId < 0 && group.isInState(GroupState.EMPTY)) {
            return null;
        }
        if (generationId < 0 && memberId.isEmpty() && request.groupInstanceId() == null) {
            throw Errors.UNKNOWN_MEMBER_ID.exception("Group " + group.groupId() + " has members (state "
                    + group.state() + "); a commit without member id and generation needs an Empty group");
        }
        GroupMember member = group.validateMember(memberId, request.groupInstanceId(), "OffsetCommit");
        group.validateGeneration(generationId, memberId, "OffsetCommit");
        if (group.isInState(GroupState.COMPLETING_REBALANCE)) {
            throw Errors.REBALANCE_IN_PROGRESS.exception("Group " + group.groupId() + " is completing the rebalance"
                    + " to generation " + group.generationId() + "; member " + memberId + " must sync first");
        }
        return member;
    }

    private OffsetCommitResponseData commit(String groupId, OffsetCommitRequestData request, short apiVersion) {
        boolean byId = apiVersion >= 10;
        long nowMs = shard.nowMs();
        int maxMetadataBytes = shard.config().maxMetadataBytes();
        List<GroupRecord> records = new ArrayList<>();
        List<OffsetCommitResponsePartition> accepted = new ArrayList<>();
        OffsetCommitResponseData response = new OffsetCommitResponseData();
        for (OffsetCommitRequestTopic topic : request.topics()) {
            String name = byId ? shard.topicIds().nameOf(topic.topicId()).orElse(null) : topic.name();
            OffsetCommitResponseTopic out = new OffsetCommitResponseTopic().setName(topic.name())
                    .setTopicId(topic.topicId());
            for (OffsetCommitRequestPartition p : topic.partitions()) {
                OffsetCommitResponsePartition outPartition = new OffsetCommitResponsePartition()
                        .setPartitionIndex(p.partitionIndex());
                String metadata = p.committedMetadata() == null ? "" : p.committedMetadata();
                if (name == null) {
                    outPartition.setErrorCode(Errors.UNKNOWN_TOPIC_ID.code());
                } else if (metadata.length() > maxMetadataBytes) {
                    outPartition.setErrorCode(Errors.OFFSET_METADATA_TOO_LARGE.code());
                } else {
                    records.add(new GroupRecord.OffsetCommit(groupId, new TopicPartition(name, p.partitionIndex()),
                            new CommittedOffset(p.committedOffset(), p.committedLeaderEpoch(), metadata, nowMs)));
                    accepted.add(outPartition);
                }
                out.partitions().add(outPartition);
            }
            response.topics().add(out);
        }
        if (!records.isEmpty()) {
            try {
                shard.appendAndReplay(records);
            } catch (RuntimeException e) {
                Errors error = GroupShard.appendError(e);
                log.warn("Could not append {} offsets of group {}: answering {}", records.size(), groupId, error, e);
                accepted.forEach(p -> p.setErrorCode(error.code()));
            }
        }
        return response;
    }

    private static OffsetCommitResponseData errorResponse(OffsetCommitRequestData request, short apiVersion,
                                                          Errors error) {
        OffsetCommitResponseData response = new OffsetCommitResponseData();
        for (OffsetCommitRequestTopic topic : request.topics()) {
            OffsetCommitResponseTopic out = new OffsetCommitResponseTopic().setName(topic.name())
                    .setTopicId(topic.topicId());
            for (OffsetCommitRequestPartition p : topic.partitions()) {
                out.partitions().add(new OffsetCommitResponsePartition().setPartitionIndex(p.partitionIndex())
                        .setErrorCode(error.code()));
            }
            response.topics().add(out);
        }
        return response;
    }

    /** The committed offsets of one group: all of them when {@code request.topics()} is null. */
    OffsetFetchResponseGroup fetch(OffsetFetchRequestGroup request, short apiVersion) {
        return fetch(request, apiVersion, false);
    }

    /**
     * Like {@link #fetch(OffsetFetchRequestGroup, short)}; with {@code requireStable} (read-committed
     * consumers, KIP-447) a partition whose offset an open transaction is committing answers
     * UNSTABLE_OFFSET_COMMIT, which the client retries, instead of an offset that may change.
     */
    OffsetFetchResponseGroup fetch(OffsetFetchRequestGroup request, short apiVersion, boolean requireStable) {
        String groupId = request.groupId();
        if (groupId == null) {
            return groupError(groupId, Errors.INVALID_GROUP_ID);
        }
        boolean byId = apiVersion >= 10;
        OffsetFetchResponseGroup out = new OffsetFetchResponseGroup().setGroupId(groupId);
        OffsetsStore offsets = shard.offsets();
        if (request.topics() == null) {
            Map<String, OffsetFetchResponseTopics> byTopic = new LinkedHashMap<>();
            if (requireStable && offsets.hasPending(groupId)) {
                return groupError(groupId, Errors.UNSTABLE_OFFSET_COMMIT);
            }
            for (Map.Entry<TopicPartition, CommittedOffset> e : offsets.all(groupId).entrySet()) {
                String name = e.getKey().topic();
                Optional<Uuid> topicId = byId ? shard.topicIds().idOf(name) : Optional.of(Uuid.ZERO_UUID);
                if (topicId.isEmpty()) {
                    continue;
                }
                byTopic.computeIfAbsent(name, n -> new OffsetFetchResponseTopics().setName(n)
                        .setTopicId(topicId.get())).partitions().add(partition(e.getKey().partition(), e.getValue()));
            }
            out.setTopics(new ArrayList<>(byTopic.values()));
            return out;
        }
        for (OffsetFetchRequestTopics topic : request.topics()) {
            String name = byId ? shard.topicIds().nameOf(topic.topicId()).orElse(null) : topic.name();
            OffsetFetchResponseTopics outTopic = new OffsetFetchResponseTopics().setName(topic.name())
                    .setTopicId(topic.topicId());
            for (int index : topic.partitionIndexes()) {
                if (name == null) {
                    outTopic.partitions().add(partition(index, null).setErrorCode(Errors.UNKNOWN_TOPIC_ID.code()));
                } else if (requireStable && offsets.hasPending(groupId, new TopicPartition(name, index))) {
                    outTopic.partitions().add(partition(index, null)
                            .setErrorCode(Errors.UNSTABLE_OFFSET_COMMIT.code()));
                } else {
                    outTopic.partitions().add(partition(index, offsets.get(groupId, new TopicPartition(name, index))));
                }
            }
            out.topics().add(outTopic);
        }
        return out;
    }

    private static OffsetFetchResponsePartitions partition(int index, CommittedOffset committed) {
        OffsetFetchResponsePartitions out = new OffsetFetchResponsePartitions().setPartitionIndex(index);
        if (committed == null) {
            return out.setCommittedOffset(OffsetFetchResponse.INVALID_OFFSET)
                    .setCommittedLeaderEpoch(CommittedOffset.NO_LEADER_EPOCH)
                    .setMetadata(OffsetFetchResponse.NO_METADATA);
        }
        return out.setCommittedOffset(committed.offset())
                .setCommittedLeaderEpoch(committed.leaderEpoch())
                .setMetadata(committed.metadata());
    }

    static OffsetFetchResponseGroup groupError(String groupId, Errors error) {
        return new OffsetFetchResponseGroup().setGroupId(groupId).setErrorCode(error.code());
    }
}
