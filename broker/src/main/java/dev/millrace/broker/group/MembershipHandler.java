package dev.millrace.broker.group;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.HeartbeatResponseData;
import org.apache.kafka.common.message.LeaveGroupRequestData.MemberIdentity;
import org.apache.kafka.common.message.LeaveGroupResponseData.MemberResponse;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupRequestData.SyncGroupRequestAssignment;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.HeartbeatResponse;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.LeaveGroupResponse;
import org.apache.kafka.common.requests.SyncGroupResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SyncGroup, Heartbeat and LeaveGroup: what members do between and after joins.
 *
 * <p>SyncGroup in CompletingRebalance parks the member's request; the leader's request carries the
 * assignments, which are persisted with the generation and the members (a {@link GroupRecord.GroupSnapshot})
 * before every parked member gets its own and the group turns Stable; a coordinator that loads the partition later
 * serves the group Stable with those members. In Stable a SyncGroup returns the
 * member's assignment at once. Heartbeat re-arms the member's session and reports
 * {@code REBALANCE_IN_PROGRESS} while a join phase is open. LeaveGroup removes members one by one
 * (version 3 and later name several, by member id or instance id) and rebalances the rest.
 *
 * <p>Threading: not thread-safe; runs on its {@link GroupShard}'s thread.
 */
final class MembershipHandler {

    private static final Logger log = LoggerFactory.getLogger(MembershipHandler.class);

    private final GroupShard shard;
    private final Rebalancer rebalancer;

    MembershipHandler(GroupShard shard, Rebalancer rebalancer) {
        this.shard = shard;
        this.rebalancer = rebalancer;
    }

    /** Answers through {@code result}, now or when the leader's assignment arrives. */
    void handleSyncGroup(SyncGroupRequestData request, CompletableFuture<SyncGroupResponse> result) {
        Consumer<SyncGroupResponseData> respond = data -> result.complete(new SyncGroupResponse(data));
        try {
            ClassicGroup group = requireGroup(request.groupId(), request.memberId(), "SyncGroup");
            GroupMember member = group.validateMember(request.memberId(), request.groupInstanceId(), "SyncGroup");
            group.validateGeneration(request.generationId(), request.memberId(), "SyncGroup");
            checkProtocol(group, request);
            switch (group.state()) {
                case PREPARING_REBALANCE -> throw Errors.REBALANCE_IN_PROGRESS.exception("Group " + group.groupId()
                        + " is rebalancing; member " + request.memberId() + " must rejoin");
                case COMPLETING_REBALANCE -> {
                    Consumer<SyncGroupResponseData> replaced = member.parkSync(respond);
                    if (replaced != null) {
                        replaced.accept(GroupResponses.syncError(Errors.REBALANCE_IN_PROGRESS));
                    }
                    rebalancer.armSessionTimer(group, member);
                    rebalancer.onSyncReceived(group, member.memberId());
                    if (group.isLeader(member.memberId())) {
                        completeSyncPhase(group, request.assignments());
                    }
                }
                case STABLE -> {
                    rebalancer.armSessionTimer(group, member);
                    rebalancer.onSyncReceived(group, member.memberId());
                    respond.accept(syncResponse(group, member));
                }
                case EMPTY, DEAD -> throw Errors.UNKNOWN_MEMBER_ID.exception("Member " + request.memberId()
                        + " is not in group " + group.groupId() + " (state " + group.state() + ")");
            }
        } catch (ApiException e) {
            log.debug("SyncGroup of member {} in group {} failed: {}", request.memberId(), request.groupId(),
                    e.getMessage());
            respond.accept(GroupResponses.syncError(Errors.forException(e)));
        }
    }

    private void completeSyncPhase(ClassicGroup group, List<SyncGroupRequestAssignment> assignments) {
        Map<String, byte[]> byMember = new HashMap<>();
        for (SyncGroupRequestAssignment assignment : assignments) {
            byMember.put(assignment.memberId(), assignment.assignment());
        }
        for (GroupMember member : group.members()) {
            member.assignment(byMember.get(member.memberId()));
        }
        try {
            shard.append(List.of(Rebalancer.groupSnapshot(group)));
        } catch (RuntimeException e) {
            Errors error = GroupShard.appendError(e);
            log.warn("Could not persist generation {} of group {}; rebalancing again", group.generationId(),
                    group.groupId(), e);
            for (GroupMember member : group.members()) {
                member.clearAssignment();
                member.completeSync(GroupResponses.syncError(error));
            }
            rebalancer.prepareRebalance(group, "persisting generation " + group.generationId() + " failed");
            return;
        }
        group.transitionToStable(shard.nowMs());
        log.info("Group {} is stable at generation {} with {} members", group.groupId(), group.generationId(),
                group.size());
        for (GroupMember member : group.members()) {
            if (member.completeSync(syncResponse(group, member))) {
                rebalancer.armSessionTimer(group, member);
            }
        }
    }

    private static SyncGroupResponseData syncResponse(ClassicGroup group, GroupMember member) {
        return new SyncGroupResponseData()
                .setErrorCode(Errors.NONE.code())
                .setProtocolType(group.protocolType())
                .setProtocolName(group.protocolName())
                .setAssignment(member.assignment());
    }

    private static void checkProtocol(ClassicGroup group, SyncGroupRequestData request) {
        boolean typeMismatch = request.protocolType() != null && !request.protocolType().equals(group.protocolType());
        boolean nameMismatch = request.protocolName() != null && !request.protocolName().equals(group.protocolName());
        if (typeMismatch || nameMismatch) {
            throw Errors.INCONSISTENT_GROUP_PROTOCOL.exception("Member " + request.memberId() + " of group "
                    + group.groupId() + " synced with protocol type " + request.protocolType() + " and protocol "
                    + request.protocolName() + " but the group uses " + group.protocolType() + " and "
                    + group.protocolName());
        }
    }

    void handleHeartbeat(HeartbeatRequestData request, CompletableFuture<HeartbeatResponse> result) {
        Errors error = Errors.NONE;
        try {
            ClassicGroup group = requireGroup(request.groupId(), request.memberId(), "Heartbeat");
            GroupMember member = group.validateMember(request.memberId(), request.groupInstanceId(), "Heartbeat");
            if (group.isInState(GroupState.EMPTY)) {
                throw Errors.UNKNOWN_MEMBER_ID.exception("Group " + group.groupId() + " is empty");
            }
            group.validateGeneration(request.generationId(), request.memberId(), "Heartbeat");
            rebalancer.armSessionTimer(group, member);
            if (group.isInState(GroupState.PREPARING_REBALANCE)) {
                error = Errors.REBALANCE_IN_PROGRESS;
            }
        } catch (ApiException e) {
            log.debug("Heartbeat of member {} in group {} failed: {}", request.memberId(), request.groupId(),
                    e.getMessage());
            error = Errors.forException(e);
        }
        result.complete(new HeartbeatResponse(new HeartbeatResponseData().setErrorCode(error.code())));
    }

    /** Removes each named member; per-member errors for v3+, folded into the top level before. */
    void handleLeaveGroup(String groupId, List<MemberIdentity> leaving, short apiVersion,
                          CompletableFuture<LeaveGroupResponse> result) {
        if (groupId == null || groupId.isEmpty()) {
            result.complete(new LeaveGroupResponse(List.of(), Errors.INVALID_GROUP_ID, 0, apiVersion));
            return;
        }
        ClassicGroup group = shard.group(groupId);
        if (group != null && group.isInState(GroupState.DEAD)) {
            result.complete(new LeaveGroupResponse(List.of(), Errors.COORDINATOR_NOT_AVAILABLE, 0, apiVersion));
            return;
        }
        List<MemberResponse> responses = new ArrayList<>(leaving.size());
        for (MemberIdentity identity : leaving) {
            Errors error = group == null ? Errors.UNKNOWN_MEMBER_ID : leaveOne(group, identity);
            responses.add(new MemberResponse()
                    .setMemberId(identity.memberId())
                    .setGroupInstanceId(identity.groupInstanceId())
                    .setErrorCode(error.code()));
        }
        result.complete(new LeaveGroupResponse(responses, Errors.NONE, 0, apiVersion));
    }

    private Errors leaveOne(ClassicGroup group, MemberIdentity identity) {
        String memberId = identity.memberId();
        String instanceId = identity.groupInstanceId();
        String reason = identity.reason() == null ? "" : " (" + identity.reason() + ")";
        if (instanceId == null && group.isPendingMember(memberId)) {
            rebalancer.removePendingMember(group, memberId);
            return Errors.NONE;
        }
        GroupMember member;
        if (instanceId != null) {
            String registered = group.staticMemberId(instanceId);
            if (registered == null) {
                log.debug("LeaveGroup: static member {} is not in group {}", instanceId, group.groupId());
                return Errors.UNKNOWN_MEMBER_ID;
            }
            if (!memberId.equals(JoinGroupRequest.UNKNOWN_MEMBER_ID) && !memberId.equals(registered)) {
                log.debug("LeaveGroup: static member {} of group {} is {}, not {}", instanceId, group.groupId(),
                        registered, memberId);
                return Errors.FENCED_INSTANCE_ID;
            }
            member = group.member(registered);
        } else {
            member = group.member(memberId);
            if (member == null) {
                log.debug("LeaveGroup: member {} is not in group {}", memberId, group.groupId());
                return Errors.UNKNOWN_MEMBER_ID;
            }
        }
        rebalancer.removeMemberAndUpdateGroup(group, member, "member " + member.memberId() + " left" + reason);
        return Errors.NONE;
    }

    private ClassicGroup requireGroup(String groupId, String memberId, String operation) {
        if (groupId == null || groupId.isEmpty()) {
            throw Errors.INVALID_GROUP_ID.exception("The group id must not be empty");
        }
        ClassicGroup group = shard.group(groupId);
        if (group == null) {
            throw Errors.UNKNOWN_MEMBER_ID.exception("Group " + groupId + " does not exist; " + operation
                    + " of member " + memberId + " rejected");
        }
        if (group.isInState(GroupState.DEAD)) {
            throw Errors.COORDINATOR_NOT_AVAILABLE.exception("Group " + groupId + " is being deleted");
        }
        return group;
    }
}
