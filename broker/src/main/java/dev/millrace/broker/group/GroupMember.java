package dev.millrace.broker.group;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.SyncGroupResponseData;

import dev.millrace.delay.TimerTask;

/**
 * One member of a classic group: its identity, the protocols it supports (in its order of
 * preference, each with its metadata), its timeouts, its assignment for the current generation and
 * the requests it has parked with the coordinator.
 *
 * <p>Invariants: {@code memberId} is issued by the coordinator and never changes; a static member
 * (with a {@code groupInstanceId}) keeps its instance id across member ids. At most one JoinGroup
 * and one SyncGroup are parked at a time ({@link #awaitingJoin()}, {@link #awaitingSync()}); a
 * parked request is answered exactly once, through {@link #completeJoin} or {@link #completeSync}.
 *
 * <p>Threading: not thread-safe; confined to its {@link GroupShard}'s thread.
 */
final class GroupMember {

    /** One protocol the member supports, with the metadata it sends for it. */
    record Protocol(String name, byte[] metadata) {
        Protocol {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(metadata, "metadata");
        }
    }

    private static final byte[] NO_ASSIGNMENT = new byte[0];

    private final String memberId;
    private final String groupInstanceId;
    private final String clientId;
    private final String clientHost;
    private int sessionTimeoutMs;
    private int rebalanceTimeoutMs;
    private List<Protocol> protocols;
    private byte[] assignment = NO_ASSIGNMENT;
    private Consumer<JoinGroupResponseData> pendingJoin;
    private Consumer<SyncGroupResponseData> pendingSync;
    private TimerTask sessionTimer;

    GroupMember(String memberId, String groupInstanceId, String clientId, String clientHost, int sessionTimeoutMs,
                int rebalanceTimeoutMs, List<Protocol> protocols) {
        this.memberId = Objects.requireNonNull(memberId, "memberId");
        this.groupInstanceId = groupInstanceId;
        this.clientId = Objects.requireNonNull(clientId, "clientId");
        this.clientHost = Objects.requireNonNull(clientHost, "clientHost");
        update(sessionTimeoutMs, rebalanceTimeoutMs, protocols);
    }

    String memberId() {
        return memberId;
    }

    /** The static member's instance id, or null for a dynamic member. */
    String groupInstanceId() {
        return groupInstanceId;
    }

    boolean isStatic() {
        return groupInstanceId != null;
    }

    String clientId() {
        return clientId;
    }

    String clientHost() {
        return clientHost;
    }

    int sessionTimeoutMs() {
        return sessionTimeoutMs;
    }

    int rebalanceTimeoutMs() {
        return rebalanceTimeoutMs;
    }

    List<Protocol> protocols() {
        return protocols;
    }

    /** Replaces the timeouts and protocols with those of a new JoinGroup. */
    void update(int sessionTimeoutMs, int rebalanceTimeoutMs, List<Protocol> protocols) {
        if (protocols.isEmpty()) {
            throw new IllegalArgumentException("Member " + memberId + " must support at least one protocol");
        }
        this.sessionTimeoutMs = sessionTimeoutMs;
        this.rebalanceTimeoutMs = rebalanceTimeoutMs;
        this.protocols = List.copyOf(protocols);
    }

    boolean supports(String protocolName) {
        return metadataFor(protocolName) != null;
    }

    /** The metadata sent for {@code protocolName}, or null if the member does not support it. */
    byte[] metadataFor(String protocolName) {
        for (Protocol protocol : protocols) {
            if (protocol.name().equals(protocolName)) {
                return protocol.metadata();
            }
        }
        return null;
    }

    /** Whether {@code other} lists the same protocols, in the same order, with the same metadata. */
    boolean sameProtocols(List<Protocol> other) {
        if (other.size() != protocols.size()) {
            return false;
        }
        for (int i = 0; i < other.size(); i++) {
            Protocol mine = protocols.get(i);
            Protocol theirs = other.get(i);
            if (!mine.name().equals(theirs.name()) || !Arrays.equals(mine.metadata(), theirs.metadata())) {
                return false;
            }
        }
        return true;
    }

    /** The member's most preferred protocol among {@code candidates}; it must support one of them. */
    String vote(Collection<String> candidates) {
        for (Protocol protocol : protocols) {
            if (candidates.contains(protocol.name())) {
                return protocol.name();
            }
        }
        throw new IllegalStateException("Member " + memberId + " supports none of the candidate protocols "
                + candidates);
    }

    List<String> protocolNames() {
        List<String> names = new ArrayList<>(protocols.size());
        protocols.forEach(p -> names.add(p.name()));
        return names;
    }

    byte[] assignment() {
        return assignment;
    }

    void assignment(byte[] newAssignment) {
        this.assignment = newAssignment == null ? NO_ASSIGNMENT : newAssignment;
    }

    void clearAssignment() {
        assignment = NO_ASSIGNMENT;
    }

    boolean awaitingJoin() {
        return pendingJoin != null;
    }

    boolean awaitingSync() {
        return pendingSync != null;
    }

    /** Parks a JoinGroup; returns the one it replaces (which the caller must answer), or null. */
    Consumer<JoinGroupResponseData> parkJoin(Consumer<JoinGroupResponseData> callback) {
        Consumer<JoinGroupResponseData> previous = pendingJoin;
        pendingJoin = Objects.requireNonNull(callback, "callback");
        return previous;
    }

    /** Parks a SyncGroup; returns the one it replaces (which the caller must answer), or null. */
    Consumer<SyncGroupResponseData> parkSync(Consumer<SyncGroupResponseData> callback) {
        Consumer<SyncGroupResponseData> previous = pendingSync;
        pendingSync = Objects.requireNonNull(callback, "callback");
        return previous;
    }

    /** Answers the parked JoinGroup, if any; returns whether there was one. */
    boolean completeJoin(JoinGroupResponseData response) {
        Consumer<JoinGroupResponseData> callback = pendingJoin;
        pendingJoin = null;
        if (callback == null) {
            return false;
        }
        callback.accept(response);
        return true;
    }

    /** Answers the parked SyncGroup, if any; returns whether there was one. */
    boolean completeSync(SyncGroupResponseData response) {
        Consumer<SyncGroupResponseData> callback = pendingSync;
        pendingSync = null;
        if (callback == null) {
            return false;
        }
        callback.accept(response);
        return true;
    }

    TimerTask sessionTimer() {
        return sessionTimer;
    }

    /** Replaces the session timer, cancelling the previous one. */
    void sessionTimer(TimerTask timer) {
        if (sessionTimer != null) {
            sessionTimer.cancel();
        }
        sessionTimer = timer;
    }

    @Override
    public String toString() {
        return "GroupMember[memberId=" + memberId + (groupInstanceId == null ? "" : ", instance=" + groupInstanceId)
                + ", clientId=" + clientId + ", protocols=" + protocolNames() + "]";
    }
}
