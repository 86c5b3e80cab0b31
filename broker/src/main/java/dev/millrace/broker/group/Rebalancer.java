package dev.millrace.broker.group;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.JoinGroupResponseData.JoinGroupResponseMember;
import org.apache.kafka.common.protocol.Errors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drives the rebalances of one shard's groups: it opens a join phase when membership changes, ends
 * it when every member has rejoined or the rebalance timeout passes (removing members that did not
 * rejoin), hands out the new generation, and owns every membership timer.
 *
 * <pre>
 *   join / leave / expiry ──▶ prepareRebalance ──▶ PreparingRebalance ── all joined, or timer ──▶ completeJoin
 *        (CompletingRebalance: parked SyncGroups get REBALANCE_IN_PROGRESS)             │
 *                                  generation + 1, protocol chosen, JoinGroups answered ◀┘
 *                                  (leader with every member's metadata), sync timer started
 * </pre>
 *
 * <p>Timers (all {@link GroupTimeout}s on the shard): a member's session timer, re-armed by every
 * heartbeat, join, sync and commit and whenever a parked request of the member is answered, removes
 * the member when it fires, unless the member has a JoinGroup or SyncGroup parked (the coordinator
 * owes it an answer, so waiting does not count against its session); the group timer is the join
 * deadline (max rebalance timeout of the members), the initial delay of an empty group's first
 * rebalance ({@code group.initial.rebalance.delay.ms}, extended while members keep arriving, up to
 * the rebalance timeout) or the sync deadline, after which members that sent no SyncGroup are
 * removed; a pending member id is forgotten after the session timeout. A timer acts only if it is
 * still the one in force when it runs.
 *
 * <p>Threading: not thread-safe; runs on its {@link GroupShard}'s thread.
 */
final class Rebalancer {

    private static final Logger log = LoggerFactory.getLogger(Rebalancer.class);

    private final GroupShard shard;

    Rebalancer(GroupShard shard) {
        this.shard = shard;
    }

    /** Adds a member whose JoinGroup is parked with {@code callback}, then starts or advances a rebalance. */
    void addMemberAndRebalance(ClassicGroup group, GroupMember member, String protocolType,
                               Consumer<JoinGroupResponseData> callback, String reason) {
        member.parkJoin(callback);
        group.addMember(member, protocolType);
        armSessionTimer(group, member);
        if (group.initialDelayActive()) {
            group.markNewMemberAdded();
        }
        maybePrepareRebalance(group, reason);
    }

    /** Parks a known member's new JoinGroup with its new protocols, then starts or advances a rebalance. */
    void updateMemberAndRebalance(ClassicGroup group, GroupMember member, JoinParams params,
                                  Consumer<JoinGroupResponseData> callback, String reason) {
        member.update(params.sessionTimeoutMs(), params.rebalanceTimeoutMs(), params.protocols());
        Consumer<JoinGroupResponseData> replaced = member.parkJoin(callback);
        if (replaced != null) {
            replaced.accept(GroupResponses.joinError(Errors.REBALANCE_IN_PROGRESS, member.memberId()));
        }
        armSessionTimer(group, member);
        maybePrepareRebalance(group, reason);
    }

    void maybePrepareRebalance(ClassicGroup group, String reason) {
        switch (group.state()) {
            case EMPTY, STABLE, COMPLETING_REBALANCE -> prepareRebalance(group, reason);
            case PREPARING_REBALANCE -> tryCompleteJoin(group);
            case DEAD -> {
            }
        }
    }

    /** Opens a join phase: every member must rejoin before the group timer ends it. */
    void prepareRebalance(ClassicGroup group, String reason) {
        if (group.isInState(GroupState.COMPLETING_REBALANCE)) {
            for (GroupMember member : group.members()) {
                member.clearAssignment();
                if (member.completeSync(GroupResponses.syncError(Errors.REBALANCE_IN_PROGRESS))) {
                    armSessionTimer(group, member);
                }
            }
        }
        boolean firstRebalance = group.isInState(GroupState.EMPTY);
        log.info("Preparing to rebalance group {} in state {} with old generation {}: {}", group.groupId(),
                group.state(), group.generationId(), reason);
        group.transitionToPreparingRebalance(shard.nowMs());
        int rebalanceTimeoutMs = group.rebalanceTimeoutMs();
        int initialDelayMs = shard.config().initialRebalanceDelayMs();
        if (firstRebalance && initialDelayMs > 0) {
            group.initialDelayActive(true);
            long delayMs = Math.min(initialDelayMs, rebalanceTimeoutMs);
            scheduleInitialDelay(group, delayMs, rebalanceTimeoutMs - delayMs);
        } else {
            group.initialDelayActive(false);
            group.groupTimer(shard.schedule("join phase of group " + group.groupId(), rebalanceTimeoutMs,
                    timer -> onJoinDeadline(group, timer)));
            tryCompleteJoin(group);
        }
    }

    private void scheduleInitialDelay(ClassicGroup group, long delayMs, long remainingMs) {
        group.groupTimer(shard.schedule("initial rebalance delay of group " + group.groupId(), delayMs,
                timer -> onInitialDelay(group, timer, remainingMs)));
    }

    private void onInitialDelay(ClassicGroup group, GroupTimeout timer, long remainingMs) {
        if (!isCurrentGroupTimer(group, timer)) {
            return;
        }
        if (group.takeNewMemberAdded() && remainingMs > 0) {
            long delayMs = Math.min(shard.config().initialRebalanceDelayMs(), remainingMs);
            scheduleInitialDelay(group, delayMs, remainingMs - delayMs);
            return;
        }
        completeJoin(group);
    }

    private void onJoinDeadline(ClassicGroup group, GroupTimeout timer) {
        if (isCurrentGroupTimer(group, timer)) {
            completeJoin(group);
        }
    }

    /** Ends the join phase now if every member has rejoined and no issued member id is outstanding. */
    void tryCompleteJoin(ClassicGroup group) {
        if (group.isInState(GroupState.PREPARING_REBALANCE) && !group.initialDelayActive()
                && group.hasAllMembersJoined()) {
            completeJoin(group);
        }
    }

    private void completeJoin(ClassicGroup group) {
        if (!group.isInState(GroupState.PREPARING_REBALANCE)) {
            return;
        }
        group.cancelGroupTimer();
        group.initialDelayActive(false);
        for (GroupMember member : new ArrayList<>(group.members())) {
            if (!member.awaitingJoin()) {
                log.info("Removing member {} from group {}: it did not rejoin within the rebalance timeout of {} ms",
                        member.memberId(), group.groupId(), group.rebalanceTimeoutMs());
                member.completeSync(GroupResponses.syncError(Errors.UNKNOWN_MEMBER_ID));
                group.removeMember(member);
            }
        }
        group.initNextGeneration(shard.nowMs());
        if (group.isInState(GroupState.EMPTY)) {
            log.info("Group {} is empty at generation {}", group.groupId(), group.generationId());
            persistQuietly(group);
            return;
        }
        log.info("Group {} completed its join phase: generation {}, protocol {}, leader {}, {} members",
                group.groupId(), group.generationId(), group.protocolName(), group.leaderId(), group.size());
        for (GroupMember member : group.members()) {
            member.completeJoin(joinResponse(group, member));
            armSessionTimer(group, member);
        }
        int generationId = group.generationId();
        group.groupTimer(shard.schedule("sync phase of group " + group.groupId(), group.rebalanceTimeoutMs(),
                timer -> onSyncDeadline(group, timer, generationId)));
    }

    /** The JoinGroup answer for {@code member} in the current generation; the leader gets all members' metadata. */
    JoinGroupResponseData joinResponse(ClassicGroup group, GroupMember member) {
        JoinGroupResponseData response = new JoinGroupResponseData()
                .setErrorCode(Errors.NONE.code())
                .setGenerationId(group.generationId())
                .setProtocolType(group.protocolType())
                .setProtocolName(group.protocolName())
                .setLeader(group.leaderId())
                .setMemberId(member.memberId());
        if (group.isLeader(member.memberId())) {
            List<JoinGroupResponseMember> members = new ArrayList<>(group.size());
            for (GroupMember m : group.members()) {
                members.add(new JoinGroupResponseMember()
                        .setMemberId(m.memberId())
                        .setGroupInstanceId(m.groupInstanceId())
                        .setMetadata(m.metadataFor(group.protocolName())));
            }
            response.setMembers(members);
        }
        return response;
    }

    /** Notes that {@code memberId} sent its SyncGroup; once all have, the sync deadline is cancelled. */
    void onSyncReceived(ClassicGroup group, String memberId) {
        if (group.pendingSyncMembers().remove(memberId) && group.pendingSyncMembers().isEmpty()) {
            group.cancelGroupTimer();
        }
    }

    private void onSyncDeadline(ClassicGroup group, GroupTimeout timer, int generationId) {
        if (!isCurrentGroupTimer(group, timer) || group.generationId() != generationId
                || !(group.isInState(GroupState.COMPLETING_REBALANCE) || group.isInState(GroupState.STABLE))) {
            return;
        }
        List<String> missing = new ArrayList<>(group.pendingSyncMembers());
        if (missing.isEmpty()) {
            return;
        }
        for (String memberId : missing) {
            GroupMember member = group.member(memberId);
            if (member != null) {
                member.completeJoin(GroupResponses.joinError(Errors.UNKNOWN_MEMBER_ID, memberId));
                member.completeSync(GroupResponses.syncError(Errors.UNKNOWN_MEMBER_ID));
                group.removeMember(member);
            }
        }
        prepareRebalance(group, "members " + missing + " sent no SyncGroup for generation " + generationId
                + " within the rebalance timeout");
    }

    /** (Re)starts the member's session: it is removed if nothing re-arms this before the session timeout. */
    void armSessionTimer(ClassicGroup group, GroupMember member) {
        member.sessionTimer(shard.schedule("session of member " + member.memberId() + " in group "
                + group.groupId(), member.sessionTimeoutMs(), timer -> onSessionExpired(group, member, timer)));
    }

    private void onSessionExpired(ClassicGroup group, GroupMember member, GroupTimeout timer) {
        if (shard.group(group.groupId()) != group || group.member(member.memberId()) != member
                || member.sessionTimer() != timer) {
            return;
        }
        if (member.awaitingJoin() || member.awaitingSync()) {
            armSessionTimer(group, member);
            return;
        }
        removeMemberAndUpdateGroup(group, member, "member " + member.memberId() + " sent no heartbeat within its "
                + "session timeout of " + member.sessionTimeoutMs() + " ms");
    }

    /** Removes the member, answering its parked requests with UNKNOWN_MEMBER_ID, and rebalances what is left. */
    void removeMemberAndUpdateGroup(ClassicGroup group, GroupMember member, String reason) {
        log.info("Removing member {} from group {}: {}", member.memberId(), group.groupId(), reason);
        member.completeJoin(GroupResponses.joinError(Errors.UNKNOWN_MEMBER_ID, member.memberId()));
        member.completeSync(GroupResponses.syncError(Errors.UNKNOWN_MEMBER_ID));
        group.removeMember(member);
        switch (group.state()) {
            case STABLE, COMPLETING_REBALANCE -> prepareRebalance(group, reason);
            case PREPARING_REBALANCE -> tryCompleteJoin(group);
            case EMPTY, DEAD -> {
            }
        }
    }

    /** Records a member id issued with MEMBER_ID_REQUIRED; it is forgotten if not used within the session timeout. */
    void addPendingMember(ClassicGroup group, String memberId, int sessionTimeoutMs) {
        GroupTimeout expiry = shard.schedule("pending member " + memberId + " of group " + group.groupId(),
                sessionTimeoutMs, timer -> onPendingMemberExpired(group, memberId, timer));
        group.addPendingMember(memberId, expiry);
    }

    /** Forgets a pending member id (it left); a join phase waiting for it may now complete. */
    void removePendingMember(ClassicGroup group, String memberId) {
        if (group.removePendingMember(memberId)) {
            tryCompleteJoin(group);
        }
    }

    private void onPendingMemberExpired(ClassicGroup group, String memberId, GroupTimeout timer) {
        if (shard.group(group.groupId()) != group || group.pendingMemberTimer(memberId) != timer) {
            return;
        }
        log.info("Forgetting member id {} of group {}: it was issued but not used to join in time", memberId,
                group.groupId());
        removePendingMember(group, memberId);
        shard.maybeRemoveUnusedGroup(group);
    }

    /** The record that lets the group come back at its generation, and with its members when Stable, after a load. */
    static GroupRecord groupSnapshot(ClassicGroup group) {
        return new GroupRecord.GroupMetadata(group.groupId(), group.snapshot());
    }

    /** Starts the sessions of a group loaded Stable with its members: each must heartbeat as if it had just joined. */
    void resumeLoaded(ClassicGroup group) {
        for (GroupMember member : group.members()) {
            armSessionTimer(group, member);
        }
    }

    private void persistQuietly(ClassicGroup group) {
        try {
            shard.append(List.of(groupSnapshot(group)));
        } catch (RuntimeException e) {
            log.warn("Could not persist generation {} of group {}; it will come back at an older generation after "
                    + "a restart", group.generationId(), group.groupId(), e);
        }
    }

    /** Stops all timers of the group and answers its parked requests with {@code error}. */
    void abandon(ClassicGroup group, Errors error) {
        group.cancelGroupTimer();
        for (GroupMember member : group.members()) {
            member.completeJoin(GroupResponses.joinError(error, member.memberId()));
            member.completeSync(GroupResponses.syncError(error));
            member.sessionTimer(null);
        }
    }

    private boolean isCurrentGroupTimer(ClassicGroup group, GroupTimeout timer) {
        return shard.group(group.groupId()) == group && group.groupTimer() == timer;
    }
}
