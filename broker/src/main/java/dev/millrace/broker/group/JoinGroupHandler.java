package dev.millrace.broker.group;

import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * JoinGroup: admits new members (issuing their member id), takes back known ones, and parks each
 * join until the join phase completes ({@link Rebalancer}).
 *
 * <p>A member without a member id gets a fresh one: with version 4 and later (and no instance id)
 * only that, with {@code MEMBER_ID_REQUIRED}, and it joins by sending the id back; before version 4
 * it joins at once. A static member (with {@code group.instance.id}) that comes back with no member
 * id replaces its previous incarnation, whose parked requests are answered with {@code
 * FENCED_INSTANCE_ID}, and triggers a rebalance. A known member that rejoins with unchanged
 * protocols while the group is CompletingRebalance, or as a follower while it is Stable, gets the
 * current generation's answer back without a new rebalance.
 *
 * <p>Threading: not thread-safe; runs on its {@link GroupShard}'s thread.
 */
final class JoinGroupHandler {

    private static final Logger log = LoggerFactory.getLogger(JoinGroupHandler.class);

    private final GroupShard shard;
    private final Rebalancer rebalancer;

    JoinGroupHandler(GroupShard shard, Rebalancer rebalancer) {
        this.shard = shard;
        this.rebalancer = rebalancer;
    }

    /** Answers through {@code result}, now or when the group's join phase completes. */
    void handleJoinGroup(JoinGroupRequestData request, short apiVersion, String clientId, String clientHost,
                         CompletableFuture<JoinGroupResponse> result) {
        Consumer<JoinGroupResponseData> respond = data -> result.complete(new JoinGroupResponse(data, apiVersion));
        String groupId = request.groupId();
        String memberId = request.memberId();
        try {
            JoinParams params = JoinParams.from(request);
            validate(request, params);
            ClassicGroup group = shard.group(groupId);
            if (memberId.equals(JoinGroupRequest.UNKNOWN_MEMBER_ID)) {
                boolean created = group == null;
                if (created) {
                    group = shard.createGroup(groupId);
                }
                try {
                    joinNewMember(group, request, params, apiVersion, clientId, clientHost, respond);
                } finally {
                    if (created) {
                        shard.maybeRemoveUnusedGroup(group);
                    }
                }
            } else {
                if (group == null) {
                    throw Errors.UNKNOWN_MEMBER_ID.exception("Group " + groupId + " does not exist; member "
                            + memberId + " must join again without a member id");
                }
                joinKnownMember(group, request, params, clientId, clientHost, respond);
            }
        } catch (ApiException e) {
            log.debug("JoinGroup of member '{}' to group {} failed: {}", memberId, groupId, e.getMessage());
            respond.accept(GroupResponses.joinError(Errors.forException(e), memberId));
        }
    }

    private void validate(JoinGroupRequestData request, JoinParams params) {
        if (request.groupId() == null || request.groupId().isEmpty()) {
            throw Errors.INVALID_GROUP_ID.exception("The group id must not be empty");
        }
        GroupCoordinatorConfig config = shard.config();
        if (params.sessionTimeoutMs() < config.minSessionTimeoutMs()
                || params.sessionTimeoutMs() > config.maxSessionTimeoutMs()) {
            throw Errors.INVALID_SESSION_TIMEOUT.exception("Session timeout " + params.sessionTimeoutMs()
                    + " ms of member '" + request.memberId() + "' in group " + request.groupId()
                    + " is outside the allowed range " + config.minSessionTimeoutMs() + ".."
                    + config.maxSessionTimeoutMs() + " ms");
        }
        if (params.protocolType() == null || params.protocolType().isEmpty() || params.protocols().isEmpty()) {
            throw Errors.INCONSISTENT_GROUP_PROTOCOL.exception("Member '" + request.memberId() + "' of group "
                    + request.groupId() + " must name a protocol type and at least one protocol");
        }
    }

    private void joinNewMember(ClassicGroup group, JoinGroupRequestData request, JoinParams params, short apiVersion,
                               String clientId, String clientHost, Consumer<JoinGroupResponseData> respond) {
        checkNotDead(group);
        checkProtocols(group, params, null);
        String instanceId = request.groupInstanceId();
        if (instanceId != null && group.staticMemberId(instanceId) != null) {
            replaceStaticMember(group, instanceId, params, clientId, clientHost, respond);
            return;
        }
        if (group.size() + group.pendingMemberCount() >= shard.config().maxGroupSize()) {
            throw Errors.GROUP_MAX_SIZE_REACHED.exception("Group " + group.groupId() + " already has "
                    + shard.config().maxGroupSize() + " members, the maximum");
        }
        String memberId = newMemberId(instanceId != null ? instanceId : clientId);
        if (instanceId == null && JoinGroupRequest.requiresKnownMemberId(apiVersion)) {
            rebalancer.addPendingMember(group, memberId, params.sessionTimeoutMs());
            respond.accept(GroupResponses.joinError(Errors.MEMBER_ID_REQUIRED, memberId));
            return;
        }
        GroupMember member = new GroupMember(memberId, instanceId, clientId, clientHost, params.sessionTimeoutMs(),
                params.rebalanceTimeoutMs(), params.protocols());
        rebalancer.addMemberAndRebalance(group, member, params.protocolType(), respond,
                "member " + memberId + " joined");
    }

    private void replaceStaticMember(ClassicGroup group, String instanceId, JoinParams params, String clientId,
                                     String clientHost, Consumer<JoinGroupResponseData> respond) {
        GroupMember old = group.member(group.staticMemberId(instanceId));
        old.completeJoin(GroupResponses.joinError(Errors.FENCED_INSTANCE_ID, old.memberId()));
        old.completeSync(GroupResponses.syncError(Errors.FENCED_INSTANCE_ID));
        group.removeMember(old);
        String memberId = newMemberId(instanceId);
        GroupMember member = new GroupMember(memberId, instanceId, clientId, clientHost, params.sessionTimeoutMs(),
                params.rebalanceTimeoutMs(), params.protocols());
        rebalancer.addMemberAndRebalance(group, member, params.protocolType(), respond, "static member " + instanceId
                + " rejoined as " + memberId + ", replacing " + old.memberId());
    }

    private void joinKnownMember(ClassicGroup group, JoinGroupRequestData request, JoinParams params,
                                 String clientId, String clientHost, Consumer<JoinGroupResponseData> respond) {
        checkNotDead(group);
        String memberId = request.memberId();
        if (group.isPendingMember(memberId)) {
            checkProtocols(group, params, null);
            group.removePendingMember(memberId);
            GroupMember member = new GroupMember(memberId, null, clientId, clientHost, params.sessionTimeoutMs(),
                    params.rebalanceTimeoutMs(), params.protocols());
            rebalancer.addMemberAndRebalance(group, member, params.protocolType(), respond,
                    "member " + memberId + " joined");
            return;
        }
        GroupMember member = group.validateMember(memberId, request.groupInstanceId(), "JoinGroup");
        checkProtocols(group, params, memberId);
        String why = request.reason() == null ? "" : " (" + request.reason() + ")";
        switch (group.state()) {
            case PREPARING_REBALANCE -> rebalancer.updateMemberAndRebalance(group, member, params, respond,
                    "member " + memberId + " rejoined" + why);
            case COMPLETING_REBALANCE -> {
                if (member.sameProtocols(params.protocols())) {
                    rebalancer.armSessionTimer(group, member);
                    respond.accept(rebalancer.joinResponse(group, member));
                } else {
                    rebalancer.updateMemberAndRebalance(group, member, params, respond,
                            "member " + memberId + " changed its protocols" + why);
                }
            }
            case STABLE -> {
                if (group.isLeader(memberId) || !member.sameProtocols(params.protocols())) {
                    rebalancer.updateMemberAndRebalance(group, member, params, respond,
                            "member " + memberId + (group.isLeader(memberId) ? " (the leader)" : "")
                                    + " rejoined" + why);
                } else {
                    rebalancer.armSessionTimer(group, member);
                    respond.accept(rebalancer.joinResponse(group, member));
                }
            }
            case EMPTY, DEAD -> throw Errors.UNKNOWN_MEMBER_ID.exception("Member " + memberId + " is not in group "
                    + group.groupId() + " (state " + group.state() + ")");
        }
    }

    private static void checkNotDead(ClassicGroup group) {
        if (group.isInState(GroupState.DEAD)) {
            throw Errors.COORDINATOR_NOT_AVAILABLE.exception("Group " + group.groupId() + " is being deleted");
        }
    }

    private static void checkProtocols(ClassicGroup group, JoinParams params, String memberId) {
        if (!group.supportsProtocols(params.protocolType(), params.protocolNames(), memberId)) {
            throw Errors.INCONSISTENT_GROUP_PROTOCOL.exception("Member " + (memberId == null ? "(new)" : memberId)
                    + " of group " + group.groupId() + " with protocol type " + params.protocolType()
                    + " and protocols " + params.protocolNames() + " does not match the group's protocol type "
                    + group.protocolType() + " or shares no protocol with all other members");
        }
    }

    private static String newMemberId(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }
}
