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

import dev.millrace.jms.ConnectionSettings;
import dev.millrace.protocol.net.BrokerChannel;
import io.netty.channel.EventLoop;
import jakarta.jms.JMSException;

/**
 * Membership of one share group (KIP-932's ShareGroupHeartbeat), on a shared event loop: connects to the first broker
 * of the bootstrap list that answers, joins (member epoch 0, the client's own member id, the topic as subscription and
 * the rack id, which carries a JMS selector), heartbeats at the interval the broker asks for, joins again when the broker
 * dropped the member (session timeout), reconnects after {@value #RECONNECT_BACKOFF_MS} ms when the connection is lost,
 * and leaves (member epoch -1) on close.
 *
 * <pre>
 *   join():   connect control (and fetch) channel -> heartbeat epoch 0 -> assignment -> listener.onAssignment
 *   every heartbeat interval: heartbeat with the member epoch
 *   UNKNOWN_MEMBER_ID / FENCED_MEMBER_EPOCH -> listener.onRejoining, heartbeat epoch 0
 *   NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE / COORDINATOR_LOAD_IN_PROGRESS -> as a lost connection
 *   connection lost -> listener.onDisconnected, reconnect after the backoff (forever, until closed), join again
 * </pre>
 *
 * <p>Used by queue consumers ({@code ShareFetcher}, with a second channel for their long-polling fetches) and by
 * client-id claims and temporary-destination ownership (membership only).
 *
 * <p>Not thread-safe: everything but {@link #join} and {@link #failure} runs on its event loop.
 */
public final class ShareMembership {

    /** Pause before reconnecting after a lost connection. */
    public static final int RECONNECT_BACKOFF_MS = 500;
    private static final short HEARTBEAT_VERSION = 1;
    /** Heartbeat errors of a coordinator that moved or is starting: retried after the back-off, not failures. */
    static final java.util.Set<Errors> RETRY_ELSEWHERE = java.util.EnumSet.of(Errors.NOT_COORDINATOR,
            Errors.COORDINATOR_NOT_AVAILABLE, Errors.COORDINATOR_LOAD_IN_PROGRESS);

    /** What the owner of a membership hears, on the event loop. */
    public interface Listener {
        /** Connected (again): the channels to use from now on; {@code fetch} is null without a fetch channel. */
        default void onConnected(BrokerChannel control, BrokerChannel fetch) {
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
    private final boolean withFetchChannel;
    private final Listener listener;
    private final String memberId = Uuid.randomUuid().toString();
    private volatile Throwable failure;
    private BrokerChannel control;
    private BrokerChannel fetch;
    private int memberEpoch;
    private ScheduledFuture<?> heartbeat;
    private boolean reconnecting;
    private boolean closed;

    public ShareMembership(ConnectionSettings settings, EventLoop loop, String clientId, String groupId, String topic,
                           String rack, boolean withFetchChannel, Listener listener) {
        this.settings = settings;
        this.loop = loop;
        this.clientId = clientId;
        this.groupId = groupId;
        this.topic = topic;
        this.rack = rack;
        this.withFetchChannel = withFetchChannel;
        this.listener = listener;
    }

    public String memberId() {
        return memberId;
    }

    public String groupId() {
        return groupId;
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
        loop.execute(() -> connect(settings.brokers().split(","), 0, joined));
        return joined;
    }

    private void connect(String[] brokers, int index, CompletableFuture<Void> joined) {
        String broker = brokers[index].trim();
        int colon = broker.lastIndexOf(':');
        String host = colon < 0 ? broker : broker.substring(0, colon);
        int port = colon < 0 ? 9092 : Integer.parseInt(broker.substring(colon + 1));
        CompletableFuture<BrokerChannel> controlFuture = BrokerChannel.connect(loop, host, port, clientId,
                settings.requestTimeoutMs());
        CompletableFuture<BrokerChannel> fetchFuture = withFetchChannel
                ? BrokerChannel.connect(loop, host, port, clientId, settings.requestTimeoutMs())
                : CompletableFuture.completedFuture(null);
        controlFuture.thenCombine(fetchFuture, (c, f) -> {
            onLoop(() -> {
                if (closed) {
                    c.close();
                    if (f != null) {
                        f.close();
                    }
                    joined.completeExceptionally(new IllegalStateException("closed"));
                    return;
                }
                control = c;
                fetch = f;
                memberEpoch = 0;
                listener.onConnected(c, f);
                heartbeat(joined);
            });
            return null;
        }).exceptionally(e -> {
            onLoop(() -> {
                if (index + 1 < brokers.length && !closed) {
                    connect(brokers, index + 1, joined);
                } else {
                    joined.completeExceptionally(e);
                }
            });
            return null;
        });
    }

    private void heartbeat(CompletableFuture<Void> joined) {
        if (closed || control == null) {
            return;
        }
        ShareGroupHeartbeatRequestData data = new ShareGroupHeartbeatRequestData().setGroupId(groupId)
                .setMemberId(memberId).setMemberEpoch(memberEpoch).setRackId(rack)
                .setSubscribedTopicNames(memberEpoch == 0 ? List.of(topic) : null);
        BrokerChannel channel = control;
        channel.<ShareGroupHeartbeatResponse>send(new ShareGroupHeartbeatRequest.Builder(data), HEARTBEAT_VERSION)
                .whenComplete((response, e) -> {
                    if (channel != control) {
                        return; // from before a reconnect
                    }
                    if (e != null) {
                        if (joined != null && !joined.isDone()) {
                            joined.completeExceptionally(e);
                        } else {
                            connectionLost(e);
                        }
                        return;
                    }
                    onHeartbeat(response.data(), joined);
                });
    }

    private void onHeartbeat(ShareGroupHeartbeatResponseData data, CompletableFuture<Void> joined) {
        if (closed) {
            return;
        }
        Errors error = Errors.forCode(data.errorCode());
        if (error == Errors.UNKNOWN_MEMBER_ID || error == Errors.FENCED_MEMBER_EPOCH) {
            rejoin();
            return;
        }
        if (RETRY_ELSEWHERE.contains(error)) {
            // the coordinator moved or is loading the group's state (failover): not a failure, ask again from a new
            // connection (the failover window bounds how long the connection's users wait meanwhile)
            if (joined == null || joined.isDone()) {
                connectionLost(new java.io.IOException("share group " + groupId + ": " + error.name()));
            } else {
                heartbeat = loop.schedule(() -> heartbeat(joined), RECONNECT_BACKOFF_MS, TimeUnit.MILLISECONDS);
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
            heartbeat = loop.schedule(() -> heartbeat(null), RECONNECT_BACKOFF_MS, TimeUnit.MILLISECONDS);
            return;
        }
        memberEpoch = data.memberEpoch();
        failure = null;
        heartbeat = loop.schedule(() -> heartbeat(null), Math.max(100, data.heartbeatIntervalMs()),
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
        if (heartbeat != null) {
            heartbeat.cancel(false);
        }
        memberEpoch = 0;
        listener.onRejoining();
        heartbeat(null);
    }

    /** The connection failed (also a fetch channel's): close both, tell the listener, reconnect later. Loop. */
    public void connectionLost(Throwable cause) {
        if (closed || reconnecting) {
            return;
        }
        reconnecting = true; // not a failure to report: the connection's liveness check reports a lost cluster
        if (heartbeat != null) {
            heartbeat.cancel(false);
        }
        closeChannels();
        control = null;
        fetch = null;
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
            connect(settings.brokers().split(","), 0, again);
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
        if (fetch != null) {
            fetch.close();
        }
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
