package dev.millrace.jms.wire.share;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ShareGroupHeartbeatRequestData;
import org.apache.kafka.common.message.ShareGroupHeartbeatResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ShareGroupHeartbeatRequest;
import org.apache.kafka.common.requests.ShareGroupHeartbeatResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.jms.ConnectionSettings;
import dev.millrace.protocol.net.BrokerChannel;
import io.netty.channel.EventLoop;
import jakarta.jms.JMSException;

/**
 * Membership of one share group (KIP-932's ShareGroupHeartbeat), on a shared event loop: asks the first broker of the
 * bootstrap list that answers for the group's coordinator (FindCoordinator, key type GROUP) and connects to it, joins (member epoch 0, the client's own member id, the topic as subscription and
 * the rack id, which carries a JMS selector), heartbeats at the interval the broker asks for, joins again when the broker
 * dropped the member (session timeout), reconnects after {@value #RECONNECT_BACKOFF_MS} ms when the connection is lost,
 * and leaves (member epoch -1) on close.
 *
 * <pre>
 *   join():   any bootstrap broker -> FindCoordinator -> channel to the coordinator -> heartbeat epoch 0
 *             -> assignment -> listener.onAssignment
 *   every heartbeat interval: heartbeat with the member epoch
 *   UNKNOWN_MEMBER_ID / FENCED_MEMBER_EPOCH -> listener.onRejoining, heartbeat epoch 0
 *   NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE / COORDINATOR_LOAD_IN_PROGRESS -> as a lost connection
 *   connection lost -> listener.onDisconnected, after the backoff find the coordinator again (forever, until
 *                      closed), join again with epoch 0
 * </pre>
 *
 * <p>Used by queue consumers ({@code ShareFetcher}, which sends its fetches and settlements to each partition's leader
 * on channels of its own) and by client-id claims and temporary-destination ownership (membership only).
 *
 * <p>Not thread-safe: everything but {@link #join} and {@link #failure} runs on its event loop.
 */
public final class ShareMembership {

    /** Debug: heartbeat errors, reconnects and rejoins, for diagnosing a consumer that stops receiving. */
    private static final Logger LOG = LoggerFactory.getLogger(ShareMembership.class);

    /** Pause before reconnecting after a lost connection. */
    public static final int RECONNECT_BACKOFF_MS = 500;
    private static final short HEARTBEAT_VERSION = 1;
    /** Heartbeat errors of a coordinator that moved or is starting: retried after the back-off, not failures. */
    static final java.util.Set<Errors> RETRY_ELSEWHERE = java.util.EnumSet.of(Errors.NOT_COORDINATOR,
            Errors.COORDINATOR_NOT_AVAILABLE, Errors.COORDINATOR_LOAD_IN_PROGRESS);

    /** What the owner of a membership hears, on the event loop. */
    public interface Listener {
        /** Connected (again) to the group's coordinator: the channel its heartbeats use from now on. */
        default void onConnected(BrokerChannel control) {
        }

        /** The member's partitions changed (also on join). */
        default void onAssignment(Uuid topicId, List<Integer> partitions) {
        }

        /** The broker dropped the member and released what it held; it joins again. */
        default void onRejoining() {
        }

        /** The connection was lost; a reconnect follows. */
        default void onDisconnected(Throwable cause) {
        }
    }

    private final ConnectionSettings settings;
    private final EventLoop loop;
    private final String clientId;
    private final String groupId;
    private final String topic;
    private final String rack;
    private final Listener listener;
    private final String memberId = Uuid.randomUuid().toString();
    private volatile Throwable failure;
    private BrokerChannel control;
    private int memberEpoch;
    private ScheduledFuture<?> heartbeat;
    /**
     * The current heartbeat chain: joining, rejoining and reconnecting each start a new one, and the answers and
     * scheduled heartbeats of older chains are dropped, so that one heartbeat at a time is in flight (a rejoin while
     * a heartbeat was in flight used to leave two chains running, each joining again on the other's answers).
     */
    private int chain;
    private boolean reconnecting;
    private boolean closed;

    public ShareMembership(ConnectionSettings settings, EventLoop loop, String clientId, String groupId, String topic,
                           String rack, Listener listener) {
        this.settings = settings;
        this.loop = loop;
        this.clientId = clientId;
        this.groupId = groupId;
        this.topic = topic;
        this.rack = rack;
        this.listener = listener;
    }

    public String memberId() {
        return memberId;
    }

    public String groupId() {
        return groupId;
    }

    /** The channel to the group's coordinator, or null while not connected. Loop. */
    public BrokerChannel channel() {
        return control;
    }

    /** Whether the member has joined and holds a positive epoch. Loop. */
    public boolean isJoined() {
        return memberEpoch > 0 && control != null;
    }

    /**
     * Why the broker last refused this member's heartbeat (cleared by the next accepted one), or null; a lost
     * connection is not such a failure: it is retried. Any thread.
     */
    public Throwable failure() {
        return failure;
    }

    /** Connects and joins; completes once the broker accepted the member (exceptionally with why it did not). */
    public CompletableFuture<Void> join() {
        CompletableFuture<Void> joined = new CompletableFuture<>();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(settings.requestTimeoutMs());
        loop.execute(() -> connect(joined, deadline));
        return joined;
    }

    /**
     * Finds the group's coordinator through any broker of the bootstrap list and connects to it (the bootstrap
     * channel is kept when it is the coordinator's); a failure (no broker answers, COORDINATOR_NOT_AVAILABLE while
     * the group's partition elects a leader) is tried again after the back-off until {@code deadlineNanos}, then
     * fails {@code joined}.
     */
    private void connect(CompletableFuture<Void> joined, long deadlineNanos) {
        int timeoutMs = settings.requestTimeoutMs();
        ClusterLookup.connectAny(loop, settings.brokers(), clientId, timeoutMs, settings.security()).thenCompose(any ->
                ClusterLookup.findCoordinator(any, groupId).handle((coordinator, e) -> {
                    if (e != null) {
                        any.close();
                        throw e instanceof java.util.concurrent.CompletionException ce ? ce
                                : new java.util.concurrent.CompletionException(e);
                    }
                    if (coordinator.address().equals(any.address())) {
                        return CompletableFuture.completedFuture(any);
                    }
                    any.close();
                    return ClusterLookup.connect(loop, coordinator.host(), coordinator.port(), clientId, timeoutMs,
                            settings.security());
                }).thenCompose(f -> f)).whenComplete((c, e) -> onLoop(() -> {
                    if (e != null) {
                        if (!closed && System.nanoTime() < deadlineNanos) {
                            loop.schedule(() -> connect(joined, deadlineNanos), RECONNECT_BACKOFF_MS,
                                    TimeUnit.MILLISECONDS);
                        } else {
                            joined.completeExceptionally(e instanceof java.util.concurrent.CompletionException
                                    && e.getCause() != null ? e.getCause() : e);
                        }
                        return;
                    }
                    if (closed) {
                        c.close();
                        joined.completeExceptionally(new IllegalStateException("closed"));
                        return;
                    }
                    control = c;
                    memberEpoch = 0;
                    listener.onConnected(c);
                    heartbeat(joined);
                }));
    }

    /** Starts a new heartbeat chain (ending any other). */
    private void heartbeat(CompletableFuture<Void> joined) {
        chain++;
        beat(chain, joined);
    }

    private void beat(int mine, CompletableFuture<Void> joined) {
        if (closed || control == null || mine != chain) {
            return;
        }
        ShareGroupHeartbeatRequestData data = new ShareGroupHeartbeatRequestData().setGroupId(groupId)
                .setMemberId(memberId).setMemberEpoch(memberEpoch).setRackId(rack)
                .setSubscribedTopicNames(memberEpoch == 0 ? List.of(topic) : null);
        BrokerChannel channel = control;
        channel.<ShareGroupHeartbeatResponse>send(new ShareGroupHeartbeatRequest.Builder(data), HEARTBEAT_VERSION)
                .whenComplete((response, e) -> {
                    if (channel != control || mine != chain) {
                        return; // from before a reconnect or a rejoin
                    }
                    if (e != null) {
                        LOG.debug("{} {}: heartbeat failed: {}", memberId, groupId, e.toString());
                        if (joined != null && !joined.isDone()) {
                            joined.completeExceptionally(e);
                        } else {
                            connectionLost(e);
                        }
                        return;
                    }
                    onHeartbeat(response.data(), joined, mine);
                });
    }

    private void onHeartbeat(ShareGroupHeartbeatResponseData data, CompletableFuture<Void> joined, int mine) {
        if (closed) {
            return;
        }
        Errors error = Errors.forCode(data.errorCode());
        if (error != Errors.NONE) {
            LOG.debug("{} {}: heartbeat at epoch {} answered {}", memberId, groupId, memberEpoch, error);
        }
        if (error == Errors.UNKNOWN_MEMBER_ID || error == Errors.FENCED_MEMBER_EPOCH) {
            rejoin(joined);
            return;
        }
        if (RETRY_ELSEWHERE.contains(error)) {
            // the coordinator moved or is loading the group's state (failover): not a failure, ask again from a new
            // connection (the failover window bounds how long the connection's users wait meanwhile)
            if (joined == null || joined.isDone()) {
                connectionLost(new java.io.IOException("share group " + groupId + ": " + error.name()));
            } else {
                heartbeat = loop.schedule(() -> beat(mine, joined), RECONNECT_BACKOFF_MS, TimeUnit.MILLISECONDS);
            }
            return;
        }
        if (error != Errors.NONE) {
            JMSException failed = new JMSException("share group " + groupId + " refused member " + memberId + ": "
                    + error.name() + (data.errorMessage() == null ? "" : " " + data.errorMessage()), error.name());
            failure = failed;
            if (joined != null) {
                joined.completeExceptionally(failed);
            }
            heartbeat = loop.schedule(() -> beat(mine, null), RECONNECT_BACKOFF_MS, TimeUnit.MILLISECONDS);
            return;
        }
        memberEpoch = data.memberEpoch();
        failure = null;
        heartbeat = loop.schedule(() -> beat(mine, null), Math.max(100, data.heartbeatIntervalMs()),
                TimeUnit.MILLISECONDS);
        if (data.assignment() != null) {
            List<Integer> partitions = new ArrayList<>();
            Uuid topicId = null;
            for (ShareGroupHeartbeatResponseData.TopicPartitions tp : data.assignment().topicPartitions()) {
                topicId = tp.topicId();
                partitions.addAll(tp.partitions());
            }
            listener.onAssignment(topicId, List.copyOf(partitions));
        }
        if (joined != null) {
            joined.complete(null);
        }
    }

    /** The broker dropped the member (session timeout): join again with epoch 0. Loop. */
    public void rejoin() {
        if (memberEpoch > 0) {
            rejoin(null);
        } else {
            // already joining (epoch 0: its join heartbeat is in flight or on its way, after a rejoin or a
            // reconnect): every fetch that learns the member is gone says so, and one join is enough; what the
            // member held is released all the same
            listener.onRejoining();
        }
    }

    /** Joins again in a new heartbeat chain (the heartbeat in flight, if any, is dropped). */
    private void rejoin(CompletableFuture<Void> joined) {
        if (heartbeat != null) {
            heartbeat.cancel(false);
        }
        memberEpoch = 0;
        listener.onRejoining();
        heartbeat(joined);
    }

    /** The connection to the coordinator failed: close it, tell the listener, find the coordinator again later. Loop. */
    public void connectionLost(Throwable cause) {
        if (closed || reconnecting) {
            return;
        }
        reconnecting = true; // not a failure to report: the connection's liveness check reports a lost cluster
        LOG.debug("{} {}: coordinator connection lost: {}", memberId, groupId, String.valueOf(cause));
        if (heartbeat != null) {
            heartbeat.cancel(false);
        }
        closeChannels();
        control = null;
        listener.onDisconnected(cause);
        loop.schedule(() -> {
            reconnecting = false;
            if (closed) {
                return;
            }
            CompletableFuture<Void> again = new CompletableFuture<>();
            again.whenComplete((r, t) -> {
                if (t != null) {
                    onLoop(() -> connectionLost(t));
                }
            });
            connect(again, System.nanoTime()); // one try; a failure comes back here after the back-off
        }, RECONNECT_BACKOFF_MS, TimeUnit.MILLISECONDS);
    }

    /** Leaves the group (heartbeat epoch -1); completes when the broker answered or could not. Loop. */
    public CompletableFuture<?> leave() {
        closed = true;
        if (heartbeat != null) {
            heartbeat.cancel(false);
        }
        if (control == null || memberEpoch <= 0) {
            return CompletableFuture.completedFuture(null);
        }
        return control.send(new ShareGroupHeartbeatRequest.Builder(new ShareGroupHeartbeatRequestData()
                .setGroupId(groupId).setMemberId(memberId).setMemberEpoch(-1)), HEARTBEAT_VERSION)
                .exceptionally(e -> null);
    }

    /** Closes the channels (after {@link #leave}). Idempotent. Loop. */
    public void closeChannels() {
        if (control != null) {
            control.close();
        }
    }

    /**
     * Leaves the group and closes the channels, waiting up to the request timeout. Any thread but the event loop.
     */
    public void close() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        onLoop(() -> leave().whenComplete((r, e) -> {
            closeChannels();
            done.complete(null);
        }));
        try {
            done.get(settings.requestTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            // the broker drops the member once its session times out
        } finally {
            onLoop(this::closeChannels);
        }
    }

    private void onLoop(Runnable r) {
        if (loop.inEventLoop()) {
            r.run();
        } else {
            loop.execute(r);
        }
    }
}
