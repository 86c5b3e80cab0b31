package dev.millrace.broker.share;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.Node;

import dev.millrace.protocol.ext.ExtensionApi;
import dev.millrace.protocol.ext.ShareMember;
import dev.millrace.protocol.ext.ShareState;
import dev.millrace.protocol.net.BrokerChannel;
import dev.millrace.protocol.net.ClientSecurity;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;

/**
 * Sends ShareState requests to other brokers' share-state coordinators (and, in an instance of its own, ShareMember
 * requests to share groups' coordinators, so that they never queue behind a state write): one {@link BrokerChannel}
 * per broker, on one
 * event-loop thread of its own, opened at first use and opened again after it failed. A broker answers the requests
 * of one connection in order, so the writes one sender makes of one share-partition arrive in the order sent.
 *
 * <p>Thread-safe; futures complete on the event loop.
 */
final class ShareStateClient implements AutoCloseable {

    private final String clientId;
    private final int timeoutMs;
    private final ClientSecurity security;
    private final EventLoopGroup group;
    private final EventLoop loop;
    /** Guarded by {@code this}. */
    private final Map<Integer, CompletableFuture<BrokerChannel>> channels = new HashMap<>();

    ShareStateClient(int nodeId, int timeoutMs) {
        this(nodeId, timeoutMs, "share-state");
    }

    /** A client whose connections and thread are named after {@code purpose} (e.g. "share-member"). */
    ShareStateClient(int nodeId, int timeoutMs, String purpose) {
        this(nodeId, timeoutMs, purpose, ClientSecurity.PLAINTEXT);
    }

    /** As above, connecting with {@code security} (the inter-broker listener's protocol). */
    ShareStateClient(int nodeId, int timeoutMs, String purpose, ClientSecurity security) {
        this.security = security;
        this.clientId = "millrace-" + purpose + "-" + nodeId;
        this.timeoutMs = timeoutMs;
        this.group = new NioEventLoopGroup(1, r -> {
            Thread thread = new Thread(r, "millrace-" + purpose + "-client-" + nodeId);
            thread.setDaemon(true);
            return thread;
        });
        this.loop = group.next();
    }

    /** Sends {@code request} to {@code node}; fails with an IOException when the connection fails. */
    CompletableFuture<ShareState.Response> send(Node node, ShareState.Request request) {
        return channelTo(node).thenCompose(ch -> ch.sendExtension(ExtensionApi.SHARE_STATE, ShareState.VERSION,
                request.toStruct())).thenApply(ShareState.Response::read);
    }

    /** Sends a ShareMember {@code request} to {@code node}; fails with an IOException when the connection fails. */
    CompletableFuture<ShareMember.Response> send(Node node, ShareMember.Request request) {
        return channelTo(node).thenCompose(ch -> ch.sendExtension(ExtensionApi.SHARE_MEMBER, ShareMember.VERSION,
                request.toStruct())).thenApply(ShareMember.Response::read);
    }

    private synchronized CompletableFuture<BrokerChannel> channelTo(Node node) {
        CompletableFuture<BrokerChannel> channel = channels.get(node.id());
        if (channel != null) {
            BrokerChannel open = BrokerChannel.openOrNull(channel);
            boolean failed = channel.isCompletedExceptionally();
            boolean moved = open != null && !open.address().equals(node.host() + ":" + node.port());
            if (!failed && !moved && (open == null || open.isOpen())) {
                return channel;
            }
            channel.thenAccept(BrokerChannel::close);
        }
        channel = BrokerChannel.connect(loop, node.host(), node.port(), clientId, timeoutMs, security);
        channels.put(node.id(), channel);
        return channel;
    }

    @Override
    public void close() {
        synchronized (this) {
            channels.values().forEach(c -> c.thenAccept(BrokerChannel::close));
            channels.clear();
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
}
