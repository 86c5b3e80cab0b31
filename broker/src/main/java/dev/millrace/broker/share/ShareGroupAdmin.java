package dev.millrace.broker.share;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.AlterShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.AlterShareGroupOffsetsResponseData;
import org.apache.kafka.common.message.DeleteShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.DeleteShareGroupOffsetsResponseData;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsResponseData;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseGroup;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponsePartition;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseTopic;
import org.apache.kafka.common.protocol.Errors;

/**
 * The share-group offset admin APIs and share-group deletion, over the coordinator's membership and
 * the share-partitions' state (live or only saved):
 *
 * <ul>
 *   <li>DescribeShareGroupOffsets: each share-partition's start offset and lag (records between the
 *       start offset and the high watermark not yet acknowledged or archived). All partitions the group
 *       has state for when no topics are named; a named partition without state has start offset -1.</li>
 *   <li>AlterShareGroupOffsets: moves a share-partition's start offset (dropping its in-flight state),
 *       creating the state if there is none yet. The group must have no members (NON_EMPTY_GROUP).</li>
 *   <li>DeleteShareGroupOffsets: forgets the group's state on every partition of the named topics; the
 *       group starts again by its {@code share.auto.offset.reset}. The group must have no members.</li>
 *   <li>DeleteGroups of a share group: forgets the group and all its share-partition state
 *       (NON_EMPTY_GROUP while it has members). Its group configs are kept.</li>
 * </ul>
 *
 * Every change is saved before it is answered. This class serves the share-partitions led by this broker; on a
 * cluster the broker passes the rest on to their leaders ({@code server/ShareOffsetsRouting}). Thread-safe; the
 * checks for members and the changes are not atomic against a member joining at the same moment (the same race Kafka
 * accepts).
 */
public final class ShareGroupAdmin {

    private final ShareGroupCoordinator coordinator;
    private final SharePartitionManager partitions;
    private final ShareStateStore store;
    private final ShareTopics topics;

    ShareGroupAdmin(ShareGroupCoordinator coordinator, SharePartitionManager partitions, ShareStateStore store,
                    ShareTopics topics) {
        this.coordinator = coordinator;
        this.partitions = partitions;
        this.store = store;
        this.topics = topics;
    }

    /** True if {@code groupId} is a share group here: known to the coordinator or with saved state. */
    public boolean isShareGroup(String groupId) {
        return coordinator.exists(groupId) || !store.partitionsOf(groupId).isEmpty()
                || !partitions.partitionsOf(groupId).isEmpty();
    }

    public DescribeShareGroupOffsetsResponseData describeOffsets(DescribeShareGroupOffsetsRequestData request) {
        DescribeShareGroupOffsetsResponseData response = new DescribeShareGroupOffsetsResponseData();
        for (DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestGroup group : request.groups()) {
            response.groups().add(describeGroup(group));
        }
        return response;
    }

    private DescribeShareGroupOffsetsResponseGroup describeGroup(
            DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestGroup request) {
        String groupId = request.groupId();
        DescribeShareGroupOffsetsResponseGroup out = new DescribeShareGroupOffsetsResponseGroup().setGroupId(groupId);
        Map<String, List<Integer>> wanted = new TreeMap<>();
        if (request.topics() == null) {
            if (!isShareGroup(groupId)) {
                return out.setErrorCode(Errors.GROUP_ID_NOT_FOUND.code())
                        .setErrorMessage("Share group " + groupId + " does not exist");
            }
            statePartitions(groupId).forEach(tp -> wanted.computeIfAbsent(tp.topic(), t -> new ArrayList<>())
                    .add(tp.partition()));
        } else {
            request.topics().forEach(t -> wanted.computeIfAbsent(t.topicName(), n -> new ArrayList<>())
                    .addAll(t.partitions()));
        }
        for (Map.Entry<String, List<Integer>> topic : wanted.entrySet()) {
            Optional<Uuid> topicId = topics.idOf(topic.getKey());
            DescribeShareGroupOffsetsResponseTopic t = new DescribeShareGroupOffsetsResponseTopic()
                    .setTopicName(topic.getKey()).setTopicId(topicId.orElse(Uuid.ZERO_UUID));
            for (int partition : topic.getValue()) {
                DescribeShareGroupOffsetsResponsePartition p = new DescribeShareGroupOffsetsResponsePartition()
                        .setPartitionIndex(partition).setLeaderEpoch(-1).setStartOffset(-1).setLag(-1);
                TopicPartition tp = new TopicPartition(topic.getKey(), partition);
                if (topicId.isEmpty() || partition < 0 || partition >= topics.partitionCount(topic.getKey())) {
                    p.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code())
                            .setErrorMessage("Unknown topic partition " + tp);
                } else if (hasState(groupId, topicId.get(), tp)) {
                    try {
                        partitions.getOrCreate(groupId, topicId.get(), tp).ifPresent(sp -> p
                                .setStartOffset(sp.startOffset()).setLag(sp.lag()));
                    } catch (org.apache.kafka.common.errors.ApiException e) {
                        // led by another broker (a cluster): that broker knows its share-partition
                        p.setErrorCode(Errors.forException(e).code()).setErrorMessage(e.getMessage());
                    }
                }
                t.partitions().add(p);
            }
            out.topics().add(t);
        }
        return out;
    }

    public AlterShareGroupOffsetsResponseData alterOffsets(AlterShareGroupOffsetsRequestData request) {
        return alterOffsets(request, true);
    }

    /**
     * AlterShareGroupOffsets for the share-partitions led here (the others are NOT_LEADER_OR_FOLLOWER); with {@code
     * checkMembers} false the group's membership is not looked at (the group's coordinator, which passed the request
     * on, checked it).
     */
    public AlterShareGroupOffsetsResponseData alterOffsets(AlterShareGroupOffsetsRequestData request,
                                                           boolean checkMembers) {
        String groupId = request.groupId();
        AlterShareGroupOffsetsResponseData response = new AlterShareGroupOffsetsResponseData();
        if (groupId == null || groupId.isEmpty()) {
            return response.setErrorCode(Errors.INVALID_GROUP_ID.code()).setErrorMessage("The group id must not be empty");
        }
        if (checkMembers && coordinator.hasMembers(groupId)) {
            return response.setErrorCode(Errors.NON_EMPTY_GROUP.code()).setErrorMessage("Share group " + groupId
                    + " has members; its offsets can be altered only when it has none");
        }
        for (AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestTopic topic : request.topics()) {
            Optional<Uuid> topicId = topics.idOf(topic.topicName());
            AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponseTopic t =
                    new AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponseTopic()
                            .setTopicName(topic.topicName()).setTopicId(topicId.orElse(Uuid.ZERO_UUID));
            for (AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestPartition partition
                    : topic.partitions()) {
                AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponsePartition p =
                        new AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponsePartition()
                                .setPartitionIndex(partition.partitionIndex());
                TopicPartition tp = new TopicPartition(topic.topicName(), partition.partitionIndex());
                Optional<SharePartition> sp;
                try {
                    sp = topicId.flatMap(id -> partitions.getOrCreate(groupId, id, tp));
                } catch (org.apache.kafka.common.errors.ApiException e) {
                    p.setErrorCode(Errors.forException(e).code()).setErrorMessage(e.getMessage());
                    t.partitions().add(p);
                    continue;
                }
                if (sp.isEmpty()) {
                    p.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code())
                            .setErrorMessage("Unknown topic partition " + tp + " (or not hosted here)");
                } else if (partition.startOffset() < 0) {
                    p.setErrorCode(Errors.INVALID_REQUEST.code())
                            .setErrorMessage("Start offset of " + tp + " must not be negative: " + partition.startOffset());
                } else {
                    sp.get().resetTo(partition.startOffset());
                }
                t.partitions().add(p);
            }
            response.responses().add(t);
        }
        return response;
    }

    public DeleteShareGroupOffsetsResponseData deleteOffsets(DeleteShareGroupOffsetsRequestData request) {
        return deleteOffsets(request, true);
    }

    /**
     * DeleteShareGroupOffsets: forgets the saved state and drops the share-partitions held here; with {@code
     * checkGroup} false neither the group's existence nor its membership is looked at (the group's coordinator, which
     * passed the request on, checked both and may have forgotten the saved state already).
     */
    public DeleteShareGroupOffsetsResponseData deleteOffsets(DeleteShareGroupOffsetsRequestData request,
                                                             boolean checkGroup) {
        String groupId = request.groupId();
        DeleteShareGroupOffsetsResponseData response = new DeleteShareGroupOffsetsResponseData();
        if (checkGroup && !isShareGroup(groupId)) {
            return response.setErrorCode(Errors.GROUP_ID_NOT_FOUND.code())
                    .setErrorMessage("Share group " + groupId + " does not exist");
        }
        if (checkGroup && coordinator.hasMembers(groupId)) {
            return response.setErrorCode(Errors.NON_EMPTY_GROUP.code()).setErrorMessage("Share group " + groupId
                    + " has members; its offsets can be deleted only when it has none");
        }
        List<TopicPartition> state = statePartitions(groupId);
        for (DeleteShareGroupOffsetsRequestData.DeleteShareGroupOffsetsRequestTopic topic : request.topics()) {
            Optional<Uuid> topicId = topics.idOf(topic.topicName());
            DeleteShareGroupOffsetsResponseData.DeleteShareGroupOffsetsResponseTopic t =
                    new DeleteShareGroupOffsetsResponseData.DeleteShareGroupOffsetsResponseTopic()
                            .setTopicName(topic.topicName()).setTopicId(topicId.orElse(Uuid.ZERO_UUID));
            if (topicId.isEmpty()) {
                t.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code())
                        .setErrorMessage("Topic " + topic.topicName() + " does not exist");
            } else {
                state.stream().filter(tp -> tp.topic().equals(topic.topicName()))
                        .forEach(tp -> partitions.delete(groupId, topicId.get(), tp));
            }
            response.responses().add(t);
        }
        return response;
    }

    /** DeleteGroups for one share group: NONE, NON_EMPTY_GROUP or GROUP_ID_NOT_FOUND. */
    public Errors deleteGroup(String groupId) {
        if (!isShareGroup(groupId)) {
            return Errors.GROUP_ID_NOT_FOUND;
        }
        Errors error = coordinator.delete(groupId);
        if (error != Errors.NONE) {
            return error;
        }
        for (TopicPartition tp : statePartitions(groupId)) {
            topics.idOf(tp.topic()).ifPresent(id -> partitions.delete(groupId, id, tp));
        }
        // state saved under a topic id that no longer resolves (a deleted topic) goes too
        store.partitionsOf(groupId).forEach(e -> store.delete(groupId, e.getKey(), e.getValue()));
        return Errors.NONE;
    }

    /** The topics the group has share-partition state on, live here or saved. */
    public java.util.Set<String> topicsWithState(String groupId) {
        java.util.Set<String> topics = new java.util.TreeSet<>();
        statePartitions(groupId).forEach(tp -> topics.add(tp.topic()));
        return topics;
    }

    /** The partitions the group has state for, live or saved, by topic name then partition. */
    private List<TopicPartition> statePartitions(String groupId) {
        Map<String, TopicPartition> out = new TreeMap<>();
        partitions.partitionsOf(groupId).forEach(sp -> out.put(sp.key().topicPartition().toString(),
                sp.key().topicPartition()));
        for (Map.Entry<Uuid, Integer> saved : store.partitionsOf(groupId)) {
            topics.nameOf(saved.getKey()).ifPresent(name -> {
                TopicPartition tp = new TopicPartition(name, saved.getValue());
                out.put(tp.toString(), tp);
            });
        }
        return new ArrayList<>(out.values());
    }

    private boolean hasState(String groupId, Uuid topicId, TopicPartition tp) {
        return partitions.get(groupId, tp).isPresent() || store.partitionsOf(groupId).stream()
                .anyMatch(e -> e.getKey().equals(topicId) && e.getValue() == tp.partition());
    }
}
