package dev.millrace.broker.group;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.DeleteGroupsResponseData.DeletableGroupResult;
import org.apache.kafka.common.message.DescribeGroupsResponseData.DescribedGroup;
import org.apache.kafka.common.message.DescribeGroupsResponseData.DescribedGroupMember;
import org.apache.kafka.common.message.ListGroupsResponseData.ListedGroup;
import org.apache.kafka.common.protocol.Errors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * DescribeGroups, ListGroups and DeleteGroups for the groups of one shard.
 *
 * <p>Describe shows members' metadata (for the selected protocol) and assignments only while the
 * group is Stable, as Kafka does; an unknown group is reported Dead before version 6 and
 * {@code GROUP_ID_NOT_FOUND} from version 6. Delete needs an Empty group: it appends a tombstone for
 * every committed offset and for the group, then forgets the group (it turns Dead).
 *
 * <p>Threading: not thread-safe; runs on its {@link GroupShard}'s thread.
 */
final class GroupAdminHandler {

    /** ListGroups' and DescribeGroups' name for the groups this coordinator serves. */
    static final String GROUP_TYPE = "classic";

    private static final Logger log = LoggerFactory.getLogger(GroupAdminHandler.class);

    private final GroupShard shard;

    GroupAdminHandler(GroupShard shard) {
        this.shard = shard;
    }

    List<DescribedGroup> describe(List<String> groupIds, short apiVersion) {
        List<DescribedGroup> out = new ArrayList<>(groupIds.size());
        for (String groupId : groupIds) {
            out.add(describeOne(groupId, apiVersion));
        }
        return out;
    }

    private DescribedGroup describeOne(String groupId, short apiVersion) {
        ClassicGroup group = groupId == null ? null : shard.group(groupId);
        if (group == null || group.isInState(GroupState.DEAD)) {
            if (apiVersion >= 6) {
                return new DescribedGroup().setGroupId(groupId).setErrorCode(Errors.GROUP_ID_NOT_FOUND.code())
                        .setErrorMessage("Group " + groupId + " not found").setGroupState(GroupState.DEAD.toString())
                        .setProtocolType("").setProtocolData("");
            }
            return new DescribedGroup().setGroupId(groupId).setErrorCode(Errors.NONE.code())
                    .setGroupState(GroupState.DEAD.toString()).setProtocolType("").setProtocolData("");
        }
        boolean stable = group.isInState(GroupState.STABLE);
        List<DescribedGroupMember> members = new ArrayList<>(group.size());
        for (GroupMember member : group.members()) {
            members.add(new DescribedGroupMember()
                    .setMemberId(member.memberId())
                    .setGroupInstanceId(member.groupInstanceId())
                    .setClientId(member.clientId())
                    .setClientHost(member.clientHost())
                    .setMemberMetadata(stable ? member.metadataFor(group.protocolName()) : new byte[0])
                    .setMemberAssignment(stable ? member.assignment() : new byte[0]));
        }
        return new DescribedGroup()
                .setGroupId(groupId)
                .setErrorCode(Errors.NONE.code())
                .setGroupState(group.state().toString())
                .setProtocolType(group.protocolType() == null ? "" : group.protocolType())
                .setProtocolData(stable ? group.protocolName() : "")
                .setMembers(members);
    }

    /** The shard's groups in one of {@code states} (all when empty); Dead groups are never listed. */
    List<ListedGroup> list(Set<GroupState> states) {
        List<ListedGroup> out = new ArrayList<>();
        for (ClassicGroup group : shard.groups()) {
            if (group.isInState(GroupState.DEAD) || (!states.isEmpty() && !states.contains(group.state()))) {
                continue;
            }
            out.add(new ListedGroup()
                    .setGroupId(group.groupId())
                    .setProtocolType(group.protocolType() == null ? "" : group.protocolType())
                    .setGroupState(group.state().toString())
                    .setGroupType(GROUP_TYPE));
        }
        return out;
    }

    List<DeletableGroupResult> delete(List<String> groupIds) {
        List<DeletableGroupResult> out = new ArrayList<>(groupIds.size());
        for (String groupId : groupIds) {
            out.add(deleteOne(groupId));
        }
        return out;
    }

    private DeletableGroupResult deleteOne(String groupId) {
        DeletableGroupResult result = new DeletableGroupResult().setGroupId(groupId);
        ClassicGroup group = groupId == null ? null : shard.group(groupId);
        if (group == null || group.isInState(GroupState.DEAD)) {
            return error(result, Errors.GROUP_ID_NOT_FOUND, "Group " + groupId + " does not exist");
        }
        if (!group.isInState(GroupState.EMPTY)) {
            return error(result, Errors.NON_EMPTY_GROUP, "Group " + groupId + " has " + group.size()
                    + " members (state " + group.state() + "); only an Empty group can be deleted");
        }
        List<GroupRecord> tombstones = new ArrayList<>();
        for (TopicPartition partition : shard.offsets().all(groupId).keySet()) {
            tombstones.add(new GroupRecord.OffsetCommit(groupId, partition, null));
        }
        tombstones.add(new GroupRecord.GroupMetadata(groupId, null));
        try {
            shard.appendAndReplayInBatches(tombstones);
        } catch (RuntimeException e) {
            Errors error = GroupShard.appendError(e);
            log.warn("Could not delete group {}", groupId, e);
            return error(result, error, "Deleting group " + groupId + " failed: " + e.getMessage());
        }
        log.info("Deleted group {} and its {} committed offsets", groupId, tombstones.size() - 1);
        return result.setErrorCode(Errors.NONE.code());
    }

    private static DeletableGroupResult error(DeletableGroupResult result, Errors error, String message) {
        return result.setErrorCode(error.code()).setErrorMessage(message);
    }
}
