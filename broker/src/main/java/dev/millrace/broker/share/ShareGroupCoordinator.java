package dev.millrace.broker.share;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BiConsumer;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ListGroupsResponseData.ListedGroup;
import org.apache.kafka.common.message.ShareGroupDescribeResponseData;
import org.apache.kafka.common.message.ShareGroupDescribeResponseData.DescribedGroup;
import org.apache.kafka.common.message.ShareGroupHeartbeatRequestData;
import org.apache.kafka.common.message.ShareGroupHeartbeatResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ShareGroupHeartbeatResponse;
import org.apache.kafka.common.utils.Utils;

import dev.millrace.broker.coordinator.CoordinatorElection;
import dev.millrace.delay.Timer;
import dev.millrace.delay.TimerTask;
import dev.millrace.protocol.ext.ShareMember;
import dev.millrace.protocol.selector.MemberSelector;
import dev.millrace.protocol.selector.SelectorSyntaxException;

/**
 * The share-group coordinator: ShareGroupHeartbeat (join, stay, leave), session timeouts,
 * assignment, and ShareGroupDescribe / ListGroups for share groups.
 *
 * <p>Which groups: a share group is coordinated where its {@code __consumer_offsets} partition is led (the same
 * hash as consumer groups, {@code Utils.abs(groupId.hashCode()) % partitions}; FindCoordinator answers that
 * partition's leader). Once the broker calls {@link #followLeadership} the coordinator serves only the groups of the
 * partitions it is told it leads ({@link CoordinatorElection}) and answers the others' heartbeats and describes with
 * NOT_COORDINATOR; before that (a coordinator built alone, in tests) it serves every group. Nothing of a share group's
 * membership is in the log, so there is nothing to load: on election the partition's groups start empty and their
 * members, sent here by FindCoordinator after NOT_COORDINATOR from the old coordinator, get UNKNOWN_MEMBER_ID for
 * their first heartbeat and rejoin with epoch 0 (kafka-clients' {@code KafkaShareConsumer} does so with its member
 * id; it keeps fetching from the share-partition leaders meanwhile). On resignation the partition's groups are
 * forgotten at once: no member is removed from share-partitions, so the records members hold stay theirs (they
 * acknowledge them through the partition leaders, which do not depend on the coordinator). What survives a move:
 * nothing of membership, epochs or assignments (the group epoch starts again); share-partition state (records,
 * locks, delivery counts, acknowledgements) is kept by the share-partition leaders and is not this class's concern.
 *
 * <p>Membership seen by share-partition leaders ({@link #localView}, {@link #describeMember}): a share fetch goes to
 * the leader of the data partition, which may not be the group's coordinator. For a group coordinated here the
 * leader on this broker takes the members and their selector filters from here ({@link #localView}); for a group
 * coordinated elsewhere it asks that broker's coordinator with the ShareMember extension ({@link #describeMember} is
 * the answering side) and keeps the answer for a while ({@link RemoteMemberCache}, {@link MemberViews}), acquiring
 * nothing for the member until it knows. So a member's JMS selector applies on every partition leader. {@link
 * #isMember} and {@link #filterOf} are the older local-only views (a group coordinated elsewhere: any member id,
 * no selector), kept for tests and tools; fetches do not use them.
 *
 * <p>Assignment: every member gets every partition of every topic it subscribes to (KIP-932 lets
 * members outnumber partitions and share them; the share-partitions hand each record to one member
 * at a time). A member's epoch becomes the group's new epoch whenever its assignment changes, and
 * the heartbeat response carries the assignment only then (and on join).
 *
 * <pre>
 *   heartbeat epoch 0 ──▶ member created / re-joined, epoch = ++group epoch, assignment sent
 *   heartbeat epoch e ──▶ e must be the member's epoch (else FENCED_MEMBER_EPOCH; an unknown member
 *                         gets UNKNOWN_MEMBER_ID and re-joins with epoch 0)
 *   heartbeat epoch -1 ─▶ member leaves
 *   no heartbeat for group.share.session.timeout.ms ─▶ member removed
 * </pre>
 *
 * A member whose rack id starts with {@link MemberSelector#PREFIX} carries a JMS selector (a Millrace extension,
 * described there): it is compiled when the rack id first arrives or changes and kept on the member; an invalid one
 * fails the heartbeat with INVALID_REQUEST (the member is neither created nor changed).
 *
 * <p>A member that leaves or times out has its acquired records released through the
 * {@code onMemberRemoved} callback, called without the coordinator's monitor held. Membership is
 * kept in memory only: after a restart members re-join with epoch 0 (their first heartbeat gets
 * UNKNOWN_MEMBER_ID).
 *
 * <p>Threading: thread-safe; state is guarded by this object's monitor. Session timeouts run on the
 * timer's executor.
 */
public final class ShareGroupCoordinator implements CoordinatorElection {

    /** The group type ListGroups reports for share groups. */
    public static final String GROUP_TYPE = "share";

    /** The assignor name ShareGroupDescribe reports. */
    public static final String ASSIGNOR_NAME = "all-partitions";

    private static final String OFFSETS_TOPIC = "__consumer_offsets";

    private final ShareGroupConfig config;
    private final ShareTopics topics;
    private final Timer timer;
    private final BiConsumer<String, String> onMemberRemoved;
    private final Map<String, ShareGroup> groups = new HashMap<>();
    /** The partition count of {@code __consumer_offsets} once following leadership; 0 serves every group. */
    private int offsetsPartitions;
    /** The partitions of {@code __consumer_offsets} led here (only while following leadership). */
    private final Set<Integer> ledPartitions = new HashSet<>();

    public ShareGroupCoordinator(ShareGroupConfig config, ShareTopics topics, Timer timer,
                                 BiConsumer<String, String> onMemberRemoved) {
        this.config = Objects.requireNonNull(config, "config");
        this.topics = Objects.requireNonNull(topics, "topics");
        this.timer = Objects.requireNonNull(timer, "timer");
        this.onMemberRemoved = Objects.requireNonNull(onMemberRemoved, "onMemberRemoved");
    }

    /**
     * From now on serves only the share groups whose partition of {@code __consumer_offsets} ({@code
     * offsetsPartitions} partitions) this broker is told it leads; returns this, to register with the elections.
     */
    public synchronized CoordinatorElection followLeadership(int offsetsPartitions) {
        if (offsetsPartitions < 1) {
            throw new IllegalArgumentException("__consumer_offsets must have at least one partition, got "
                    + offsetsPartitions);
        }
        this.offsetsPartitions = offsetsPartitions;
        ledPartitions.clear();
        List<String> unled = new ArrayList<>(groups.keySet());
        unled.forEach(this::forget);
        return this;
    }

    /** This broker now coordinates the share groups of {@code partition}; they start empty. */
    @Override
    public synchronized void onElected(int partition, int leaderEpoch) {
        ledPartitions.add(partition);
        List<String> stale = groups.keySet().stream().filter(g -> partitionFor(g) == partition).toList();
        stale.forEach(this::forget);
    }

    /** This broker no longer coordinates the share groups of {@code partition}: they are forgotten at once. */
    @Override
    public synchronized void onResigned(int partition, int leaderEpoch) {
        ledPartitions.remove(partition);
        List<String> moved = groups.keySet().stream().filter(g -> partitionFor(g) == partition).toList();
        moved.forEach(this::forget);
    }

    /** Drops a group and cancels its members' session timeouts, without releasing anything they hold. */
    private void forget(String groupId) {
        ShareGroup group = groups.remove(groupId);
        if (group != null) {
            group.members.values().forEach(m -> {
                if (m.sessionTimeout != null) {
                    m.sessionTimeout.cancel();
                }
            });
        }
    }

    private int partitionFor(String groupId) {
        return Utils.abs(groupId.hashCode()) % offsetsPartitions;
    }

    /** True if this broker coordinates {@code groupId}. Caller holds the monitor. */
    private boolean coordinates(String groupId) {
        return offsetsPartitions == 0 || ledPartitions.contains(partitionFor(groupId));
    }

    private String notCoordinatorMessage(String groupId) {
        return "This broker does not coordinate share group " + groupId + " (" + OFFSETS_TOPIC + "-"
                + partitionFor(groupId) + " is led elsewhere); find its coordinator again";
    }

    public ShareGroupHeartbeatResponseData heartbeat(ShareGroupHeartbeatRequestData request, String clientId,
                                                     String clientHost) {
        String groupId = request.groupId();
        String memberId = request.memberId();
        if (groupId == null || groupId.isEmpty()) {
            return error(Errors.INVALID_REQUEST, "The group id must not be empty");
        }
        if (memberId == null || memberId.isEmpty()) {
            return error(Errors.INVALID_REQUEST, "The member id must not be empty");
        }
        synchronized (this) {
            if (!coordinates(groupId)) {
                return error(Errors.NOT_COORDINATOR, notCoordinatorMessage(groupId));
            }
        }
        if (request.memberEpoch() == -1) {
            leave(groupId, memberId);
            return new ShareGroupHeartbeatResponseData().setMemberId(memberId).setMemberEpoch(-1)
                    .setHeartbeatIntervalMs(config.heartbeatIntervalMs());
        }
        synchronized (this) {
            if (!coordinates(groupId)) { // resigned since the check above
                return error(Errors.NOT_COORDINATOR, notCoordinatorMessage(groupId));
            }
            ShareGroup group = groups.get(groupId);
            ShareGroupMember member = group == null ? null : group.members.get(memberId);
            boolean joining = request.memberEpoch() == 0;
            MemberFilter filter = null;
            boolean newRack = request.rackId() != null && (member == null || !request.rackId().equals(member.rackId));
            if (newRack) {
                try {
                    filter = MemberFilter.of(request.rackId());
                } catch (SelectorSyntaxException e) {
                    return error(Errors.INVALID_REQUEST, "Invalid message selector in the rack id of member "
                            + memberId + " of share group " + groupId + ": " + e.getMessage() + " [position "
                            + e.position() + ", token " + e.token() + "]");
                }
            }
            if (joining) {
                if (request.subscribedTopicNames() == null || request.subscribedTopicNames().isEmpty()) {
                    return error(Errors.INVALID_REQUEST, "A joining member must name the topics it subscribes to");
                }
                group = groups.computeIfAbsent(groupId, ShareGroup::new);
                if (member == null) {
                    member = new ShareGroupMember(memberId, clientId, clientHost);
                    group.members.put(memberId, member);
                }
            } else if (member == null) {
                return error(Errors.UNKNOWN_MEMBER_ID, "Member " + memberId + " is not in share group " + groupId);
            } else if (request.memberEpoch() != member.memberEpoch) {
                return error(Errors.FENCED_MEMBER_EPOCH, "Member " + memberId + " of share group " + groupId
                        + " sent epoch " + request.memberEpoch() + ", its epoch is " + member.memberEpoch);
            }
            if (request.subscribedTopicNames() != null) {
                member.subscribedTopics = List.copyOf(request.subscribedTopicNames());
            }
            if (newRack) {
                member.rackId = request.rackId();
                member.filter = filter;
            }
            Map<Uuid, Set<Integer>> assignment = assignmentFor(member.subscribedTopics);
            boolean changed = joining || !assignment.equals(member.assignment);
            if (changed) {
                group.groupEpoch++;
                member.memberEpoch = group.groupEpoch;
                member.assignment = assignment;
            }
            armSessionTimeout(groupId, member);
            ShareGroupHeartbeatResponseData response = new ShareGroupHeartbeatResponseData().setMemberId(memberId)
                    .setMemberEpoch(member.memberEpoch).setHeartbeatIntervalMs(config.heartbeatIntervalMs());
            if (changed) {
                response.setAssignment(ShareGroupHeartbeatResponse.createAssignment(assignment));
            }
            return response;
        }
    }

    /** ShareGroupDescribe: each group in request order, GROUP_ID_NOT_FOUND for unknown ones. */
    public synchronized List<DescribedGroup> describe(List<String> groupIds) {
        List<DescribedGroup> described = new ArrayList<>(groupIds.size());
        for (String groupId : groupIds) {
            if (!coordinates(groupId)) {
                described.add(new DescribedGroup().setGroupId(groupId).setErrorCode(Errors.NOT_COORDINATOR.code())
                        .setErrorMessage(notCoordinatorMessage(groupId)));
                continue;
            }
            ShareGroup group = groups.get(groupId);
            if (group == null) {
                described.add(new DescribedGroup().setGroupId(groupId).setErrorCode(Errors.GROUP_ID_NOT_FOUND.code())
                        .setErrorMessage("Share group " + groupId + " does not exist"));
                continue;
            }
            DescribedGroup out = new DescribedGroup().setGroupId(groupId).setGroupState(group.state())
                    .setGroupEpoch(group.groupEpoch).setAssignmentEpoch(group.groupEpoch)
                    .setAssignorName(ASSIGNOR_NAME);
            for (ShareGroupMember member : group.members.values()) {
                ShareGroupDescribeResponseData.Assignment assignment = new ShareGroupDescribeResponseData.Assignment();
                member.assignment.forEach((topicId, partitions) -> assignment.topicPartitions().add(
                        new ShareGroupDescribeResponseData.TopicPartitions().setTopicId(topicId)
                                .setTopicName(topics.nameOf(topicId).orElse(""))
                                .setPartitions(new ArrayList<>(new TreeSet<>(partitions)))));
                out.members().add(new ShareGroupDescribeResponseData.Member().setMemberId(member.memberId)
                        .setRackId(member.rackId).setMemberEpoch(member.memberEpoch).setClientId(member.clientId)
                        .setClientHost(member.clientHost).setSubscribedTopicNames(member.subscribedTopics)
                        .setAssignment(assignment));
            }
            described.add(out);
        }
        return described;
    }

    /** The share groups for ListGroups, filtered by state names (case-insensitive; empty = all). */
    public synchronized List<ListedGroup> list(List<String> statesFilter) {
        List<ListedGroup> listed = new ArrayList<>();
        for (ShareGroup group : groups.values()) {
            if (statesFilter.isEmpty() || statesFilter.stream().anyMatch(group.state()::equalsIgnoreCase)) {
                listed.add(new ListedGroup().setGroupId(group.groupId).setProtocolType("")
                        .setGroupState(group.state()).setGroupType(GROUP_TYPE));
            }
        }
        return listed;
    }

    /** True if {@code groupId} is a share group this coordinator knows. */
    public synchronized boolean exists(String groupId) {
        return groups.containsKey(groupId);
    }

    /**
     * True if {@code memberId} is a current member of share group {@code groupId}; also true for any member of a
     * group coordinated elsewhere, whose members this broker cannot know (see the class comment). A member of a group
     * coordinated here that has not rejoined since this broker was elected gets false (its fetches UNKNOWN_MEMBER_ID)
     * until its next heartbeat rejoins it: it may carry a selector, which this broker does not know yet.
     */
    public synchronized boolean isMember(String groupId, String memberId) {
        if (!coordinates(groupId)) {
            return true;
        }
        ShareGroup group = groups.get(groupId);
        return group != null && group.members.containsKey(memberId);
    }

    /**
     * What a share-partition leader on this broker acquires for {@code memberId} of {@code groupId}, in one step (so
     * that a resignation cannot fall between the membership and the selector): empty when the group is coordinated
     * elsewhere (ask its coordinator: {@link MemberViews}); else the member with its selector filter, or NOT_MEMBER.
     */
    synchronized Optional<MemberView> localView(String groupId, String memberId) {
        if (!coordinates(groupId)) {
            return Optional.empty();
        }
        ShareGroup group = groups.get(groupId);
        ShareGroupMember member = group == null ? null : group.members.get(memberId);
        return Optional.of(member == null ? MemberView.NOT_MEMBER : MemberView.member(member.filter));
    }

    /**
     * The ShareMember extension's answer about {@code memberId} of {@code groupId} ({@link ShareMember}): its epoch
     * and rack id, or NOT_COORDINATOR, GROUP_ID_NOT_FOUND, UNKNOWN_MEMBER_ID.
     */
    public synchronized ShareMember.Response describeMember(String groupId, String memberId) {
        if (!coordinates(groupId)) {
            return ShareMember.Response.error(Errors.NOT_COORDINATOR.code(), notCoordinatorMessage(groupId));
        }
        ShareGroup group = groups.get(groupId);
        if (group == null) {
            return ShareMember.Response.error(Errors.GROUP_ID_NOT_FOUND.code(), "Share group " + groupId
                    + " does not exist at its coordinator");
        }
        ShareGroupMember member = group.members.get(memberId);
        if (member == null) {
            return ShareMember.Response.error(Errors.UNKNOWN_MEMBER_ID.code(), "Member " + memberId
                    + " is not a current member of share group " + groupId);
        }
        return ShareMember.Response.member(member.memberEpoch, member.rackId);
    }

    /** The ids of the members of {@code groupId} whose client id is {@code clientId}. */
    public synchronized java.util.List<String> membersWithClientId(String groupId, String clientId) {
        ShareGroup group = groups.get(groupId);
        if (group == null) {
            return java.util.List.of();
        }
        return group.members.values().stream().filter(m -> clientId.equals(m.clientId)).map(m -> m.memberId)
                .toList();
    }

    /**
     * The selector filter of member {@code memberId} of {@code groupId} ({@link MemberSelector}), or null when it has none
     * or is not a member; null for a group coordinated elsewhere (see the class comment).
     */
    public synchronized MemberFilter filterOf(String groupId, String memberId) {
        ShareGroup group = groups.get(groupId);
        ShareGroupMember member = group == null ? null : group.members.get(memberId);
        return member == null ? null : member.filter;
    }

    /** True if {@code groupId} has at least one member. */
    public synchronized boolean hasMembers(String groupId) {
        ShareGroup group = groups.get(groupId);
        return group != null && !group.members.isEmpty();
    }

    /**
     * Forgets the empty share group {@code groupId}.
     *
     * @return NONE (also when it was not known here), or NON_EMPTY_GROUP when it has members
     */
    public synchronized Errors delete(String groupId) {
        ShareGroup group = groups.get(groupId);
        if (group != null && !group.members.isEmpty()) {
            return Errors.NON_EMPTY_GROUP;
        }
        groups.remove(groupId);
        return Errors.NONE;
    }

    private Map<Uuid, Set<Integer>> assignmentFor(List<String> subscribedTopics) {
        Map<Uuid, Set<Integer>> assignment = new HashMap<>();
        for (String topic : subscribedTopics) {
            int partitions = topics.partitionCount(topic);
            if (partitions == 0) {
                continue;
            }
            topics.idOf(topic).ifPresent(id -> {
                Set<Integer> all = new TreeSet<>();
                for (int p = 0; p < partitions; p++) {
                    all.add(p);
                }
                assignment.put(id, all);
            });
        }
        return assignment;
    }

    private void armSessionTimeout(String groupId, ShareGroupMember member) {
        if (member.sessionTimeout != null) {
            member.sessionTimeout.cancel();
        }
        TimerTask timeout = new TimerTask(config.sessionTimeoutMs()) {
            @Override
            public void run() {
                expire(groupId, member.memberId, this);
            }
        };
        member.sessionTimeout = timeout;
        timer.add(timeout);
    }

    private void expire(String groupId, String memberId, TimerTask task) {
        synchronized (this) {
            ShareGroup group = groups.get(groupId);
            if (group == null || !coordinates(groupId)) {
                return;
            }
            ShareGroupMember member = group == null ? null : group.members.get(memberId);
            if (member == null || member.sessionTimeout != task) {
                return;
            }
            group.members.remove(memberId);
        }
        onMemberRemoved.accept(groupId, memberId);
    }

    private void leave(String groupId, String memberId) {
        synchronized (this) {
            ShareGroup group = groups.get(groupId);
            ShareGroupMember member = group == null ? null : group.members.remove(memberId);
            if (member == null) {
                return;
            }
            if (member.sessionTimeout != null) {
                member.sessionTimeout.cancel();
            }
        }
        onMemberRemoved.accept(groupId, memberId);
    }

    private static ShareGroupHeartbeatResponseData error(Errors error, String message) {
        return new ShareGroupHeartbeatResponseData().setErrorCode(error.code()).setErrorMessage(message);
    }
}
