package dev.millrace.broker.group;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.common.protocol.Errors;

import dev.millrace.delay.TimerTask;

/**
 * The state of one classic group: its {@link GroupState}, generation, protocol type and selected
 * protocol, leader, members, the member ids handed out but not yet used (pending members) and the
 * members that still owe a SyncGroup in this generation. It holds no rebalance logic: {@link
 * Rebalancer} drives it, the handlers read and validate against it.
 *
 * <p>Invariants: the leader, when set, is a member; a static member's instance id maps to exactly
 * one member id; {@code protocolName} is set only in CompletingRebalance and Stable, and every member
 * supports it; the generation only grows, by one per completed join phase. State changes go through
 * the {@code transitionToX} methods, which throw {@link IllegalStateException} naming both states
 * when a transition is illegal. At most one group timer (join, initial delay or sync) is pending.
 *
 * <p>Threading: not thread-safe; confined to its {@link GroupShard}'s thread.
 */
final class ClassicGroup {

    private final String groupId;
    private final Map<String, GroupMember> members = new LinkedHashMap<>();
    private final Map<String, String> staticMembers = new HashMap<>();
    private final Map<String, TimerTask> pendingMembers = new HashMap<>();
    private final Set<String> pendingSyncMembers = new LinkedHashSet<>();
    private GroupState state = GroupState.EMPTY;
    private long stateTimestampMs;
    private int generationId;
    private String protocolType;
    private String protocolName;
    private String leaderId;
    private TimerTask groupTimer;
    private boolean initialDelayActive;
    private boolean newMemberAdded;

    ClassicGroup(String groupId, long nowMs) {
        this.groupId = groupId;
        this.stateTimestampMs = nowMs;
    }

    /**
     * A group rebuilt from a {@link GroupRecord.GroupSnapshot} of {@code __consumer_offsets}: Stable with the
     * snapshot's members, leader and assignments when it has members and a selected protocol (each member supports
     * just that protocol, with the subscription it had), otherwise Empty at its generation. No timers run yet: the
     * shard arms the members' sessions once the load is over.
     */
    static ClassicGroup restored(String groupId, GroupRecord.GroupSnapshot snapshot) {
        ClassicGroup group = new ClassicGroup(groupId, snapshot.stateTimestampMs());
        group.protocolType = snapshot.protocolType();
        group.generationId = snapshot.generationId();
        if (snapshot.members().isEmpty() || snapshot.protocolName() == null) {
            return group;
        }
        for (GroupRecord.MemberSnapshot m : snapshot.members()) {
            GroupMember member = new GroupMember(m.memberId(), m.groupInstanceId(), m.clientId(), m.clientHost(),
                    m.sessionTimeoutMs(), m.rebalanceTimeoutMs(),
                    List.of(new GroupMember.Protocol(snapshot.protocolName(), m.subscription())));
            member.assignment(m.assignment());
            group.addMember(member, snapshot.protocolType());
        }
        if (snapshot.leaderId() != null && group.members.containsKey(snapshot.leaderId())) {
            group.leaderId = snapshot.leaderId();
        }
        group.protocolName = snapshot.protocolName();
        group.state = GroupState.STABLE;
        return group;
    }

    /**
     * What a coordinator that loads this group needs: generation, protocol, leader and, once assignments are set
     * (CompletingRebalance ending, Stable), the members with their subscriptions and assignments.
     */
    GroupRecord.GroupSnapshot snapshot() {
        List<GroupRecord.MemberSnapshot> kept = new ArrayList<>();
        if (protocolName != null) {
            for (GroupMember m : members.values()) {
                kept.add(new GroupRecord.MemberSnapshot(m.memberId(), m.groupInstanceId(), m.clientId(),
                        m.clientHost(), m.rebalanceTimeoutMs(), m.sessionTimeoutMs(), m.metadataFor(protocolName),
                        m.assignment()));
            }
        }
        return new GroupRecord.GroupSnapshot(protocolType, generationId, protocolName, leaderId, stateTimestampMs,
                kept);
    }

    String groupId() {
        return groupId;
    }

    GroupState state() {
        return state;
    }

    boolean isInState(GroupState expected) {
        return state == expected;
    }

    long stateTimestampMs() {
        return stateTimestampMs;
    }

    int generationId() {
        return generationId;
    }

    /** The protocol type of the members ("consumer" for Kafka consumers), or null if none ever joined. */
    String protocolType() {
        return protocolType;
    }

    /** The selected protocol in CompletingRebalance and Stable, else null. */
    String protocolName() {
        return protocolName;
    }

    String leaderId() {
        return leaderId;
    }

    boolean isLeader(String memberId) {
        return memberId.equals(leaderId);
    }

    // ---- state transitions

    void transitionToPreparingRebalance(long nowMs) {
        transition(GroupState.PREPARING_REBALANCE, nowMs);
    }

    void transitionToCompletingRebalance(long nowMs) {
        transition(GroupState.COMPLETING_REBALANCE, nowMs);
    }

    void transitionToStable(long nowMs) {
        transition(GroupState.STABLE, nowMs);
    }

    void transitionToEmpty(long nowMs) {
        transition(GroupState.EMPTY, nowMs);
    }

    void transitionToDead(long nowMs) {
        transition(GroupState.DEAD, nowMs);
        cancelGroupTimer();
        pendingMembers.values().forEach(TimerTask::cancel);
        pendingMembers.clear();
    }

    private void transition(GroupState target, long nowMs) {
        if (!target.canFollow(state)) {
            throw new IllegalStateException("Group " + groupId + " cannot transition from " + state + " to "
                    + target);
        }
        state = target;
        stateTimestampMs = nowMs;
    }

    /**
     * Ends a join phase: the generation goes up by one; with members, the protocol is chosen and the
     * group completes the rebalance (every member then owes a SyncGroup), without, it becomes Empty.
     */
    void initNextGeneration(long nowMs) {
        generationId++;
        pendingSyncMembers.clear();
        if (members.isEmpty()) {
            protocolName = null;
            transitionToEmpty(nowMs);
        } else {
            protocolName = selectProtocol();
            if (leaderId == null) {
                leaderId = members.keySet().iterator().next();
            }
            pendingSyncMembers.addAll(members.keySet());
            transitionToCompletingRebalance(nowMs);
        }
    }

    // ---- members

    Collection<GroupMember> members() {
        return members.values();
    }

    int size() {
        return members.size();
    }

    boolean hasMembers() {
        return !members.isEmpty();
    }

    GroupMember member(String memberId) {
        return members.get(memberId);
    }

    /** The member id registered for a static member's instance id, or null. */
    String staticMemberId(String groupInstanceId) {
        return staticMembers.get(groupInstanceId);
    }

    /** Adds a member of {@code type}; the first member of a memberless group sets the group's protocol type. */
    void addMember(GroupMember member, String type) {
        if (members.isEmpty()) {
            protocolType = type;
        }
        members.put(member.memberId(), member);
        if (member.isStatic()) {
            staticMembers.put(member.groupInstanceId(), member.memberId());
        }
        if (leaderId == null) {
            leaderId = member.memberId();
        }
    }

    /** Removes the member; a departing leader hands over to the next member in join order. */
    void removeMember(GroupMember member) {
        members.remove(member.memberId());
        pendingSyncMembers.remove(member.memberId());
        if (member.isStatic() && member.memberId().equals(staticMembers.get(member.groupInstanceId()))) {
            staticMembers.remove(member.groupInstanceId());
        }
        if (member.memberId().equals(leaderId)) {
            leaderId = members.isEmpty() ? null : members.keySet().iterator().next();
        }
        member.sessionTimer(null);
    }

    boolean isPendingMember(String memberId) {
        return pendingMembers.containsKey(memberId);
    }

    int pendingMemberCount() {
        return pendingMembers.size();
    }

    /** Records a member id handed out with MEMBER_ID_REQUIRED, with the timer that forgets it. */
    void addPendingMember(String memberId, TimerTask expiry) {
        pendingMembers.put(memberId, expiry);
    }

    /** Forgets a pending member id, cancelling its timer; returns whether it was pending. */
    boolean removePendingMember(String memberId) {
        TimerTask expiry = pendingMembers.remove(memberId);
        if (expiry != null) {
            expiry.cancel();
            return true;
        }
        return false;
    }

    TimerTask pendingMemberTimer(String memberId) {
        return pendingMembers.get(memberId);
    }

    /** True when every member has a JoinGroup parked and no handed-out member id is still unused. */
    boolean hasAllMembersJoined() {
        for (GroupMember member : members.values()) {
            if (!member.awaitingJoin()) {
                return false;
            }
        }
        return pendingMembers.isEmpty();
    }

    /** The longest rebalance timeout among the members: how long a join phase may last. */
    int rebalanceTimeoutMs() {
        int max = 0;
        for (GroupMember member : members.values()) {
            max = Math.max(max, member.rebalanceTimeoutMs());
        }
        return max;
    }

    Set<String> pendingSyncMembers() {
        return pendingSyncMembers;
    }

    // ---- protocols

    /**
     * Whether a member of {@code type} supporting {@code names} may join: the first member sets the
     * type; later ones must match it and support a protocol that every other member supports.
     */
    boolean supportsProtocols(String type, List<String> names, String exceptMemberId) {
        if (type == null || type.isEmpty() || names.isEmpty()) {
            return false;
        }
        if (members.isEmpty() || (members.size() == 1 && members.containsKey(exceptMemberId))) {
            return true;
        }
        if (!type.equals(protocolType)) {
            return false;
        }
        Set<String> candidates = candidateProtocols(exceptMemberId);
        return names.stream().anyMatch(candidates::contains);
    }

    /** The protocols that every member (but {@code exceptMemberId}, when not null) supports. */
    private Set<String> candidateProtocols(String exceptMemberId) {
        Set<String> candidates = null;
        for (GroupMember member : members.values()) {
            if (member.memberId().equals(exceptMemberId)) {
                continue;
            }
            if (candidates == null) {
                candidates = new LinkedHashSet<>(member.protocolNames());
            } else {
                candidates.retainAll(member.protocolNames());
            }
        }
        return candidates == null ? Set.of() : candidates;
    }

    /** The candidate protocol with the most votes; ties go to the one the leader prefers. */
    private String selectProtocol() {
        Set<String> candidates = candidateProtocols(null);
        if (candidates.isEmpty()) {
            throw new IllegalStateException("Group " + groupId + " has no protocol that all members support");
        }
        Map<String, Integer> votes = new HashMap<>();
        for (GroupMember member : members.values()) {
            votes.merge(member.vote(candidates), 1, Integer::sum);
        }
        GroupMember tieBreaker = leaderId != null && members.containsKey(leaderId)
                ? members.get(leaderId) : members.values().iterator().next();
        String best = null;
        for (String name : tieBreaker.protocolNames()) {
            if (votes.getOrDefault(name, 0) > votes.getOrDefault(best, 0)) {
                best = name;
            }
        }
        return best;
    }

    // ---- validation

    /**
     * Checks that the caller is the member it claims to be.
     *
     * @throws org.apache.kafka.common.errors.UnknownMemberIdException  no such member
     * @throws org.apache.kafka.common.errors.FencedInstanceIdException the instance id belongs to another member id
     */
    GroupMember validateMember(String memberId, String groupInstanceId, String operation) {
        if (groupInstanceId != null) {
            String registered = staticMembers.get(groupInstanceId);
            if (registered == null) {
                throw Errors.UNKNOWN_MEMBER_ID.exception("Static member " + groupInstanceId + " (member id "
                        + memberId + ") of group " + groupId + " is unknown; " + operation + " rejected");
            }
            if (!registered.equals(memberId)) {
                throw Errors.FENCED_INSTANCE_ID.exception("Static member " + groupInstanceId + " of group "
                        + groupId + " is now member " + registered + ", not " + memberId + "; " + operation
                        + " rejected");
            }
        }
        GroupMember member = members.get(memberId);
        if (member == null) {
            throw Errors.UNKNOWN_MEMBER_ID.exception("Member " + memberId + " is not in group " + groupId + " (state "
                    + state + ", generation " + generationId + "); " + operation + " rejected");
        }
        return member;
    }

    void validateGeneration(int requestGenerationId, String memberId, String operation) {
        if (requestGenerationId != generationId) {
            throw Errors.ILLEGAL_GENERATION.exception("Member " + memberId + " of group " + groupId + " sent "
                    + operation + " for generation " + requestGenerationId + " but the group is at generation "
                    + generationId);
        }
    }

    // ---- timers

    /** Replaces the group's join, initial-delay or sync timer, cancelling the previous one. */
    void groupTimer(TimerTask timer) {
        cancelGroupTimer();
        groupTimer = timer;
    }

    TimerTask groupTimer() {
        return groupTimer;
    }

    void cancelGroupTimer() {
        if (groupTimer != null) {
            groupTimer.cancel();
            groupTimer = null;
        }
    }

    boolean initialDelayActive() {
        return initialDelayActive;
    }

    void initialDelayActive(boolean active) {
        this.initialDelayActive = active;
        this.newMemberAdded = false;
    }

    /** Notes (during the initial delay) that a member joined, so the delay is extended once more. */
    void markNewMemberAdded() {
        newMemberAdded = true;
    }

    /** Whether a member joined since the last call; clears the mark. */
    boolean takeNewMemberAdded() {
        boolean added = newMemberAdded;
        newMemberAdded = false;
        return added;
    }

    @Override
    public String toString() {
        return "ClassicGroup[" + groupId + ", state=" + state + ", generation=" + generationId + ", members="
                + members.keySet() + ", leader=" + leaderId + "]";
    }
}
