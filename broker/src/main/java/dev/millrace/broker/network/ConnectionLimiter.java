package dev.millrace.broker.network;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Map;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.AttributeKey;

/**
 * First handler of every connection of a listener: counts open connections, in total and per client IP address,
 * and closes a new one that would pass {@code max.connections} or {@code max.connections.per.ip} as soon as it is
 * accepted (Kafka blocks accepting at {@code max.connections} instead; closing keeps a flood from holding the
 * accept queue). A refused connection is never counted and its {@code channelActive} goes no further.
 *
 * <p>Shared by all connections of a listener; thread-safe (the counts are guarded by this object's lock, taken once
 * per connect and close).
 */
@ChannelHandler.Sharable
final class ConnectionLimiter extends ChannelInboundHandlerAdapter {

    private static final AttributeKey<InetAddress> COUNTED = AttributeKey.valueOf("millrace.countedAddress");

    private final int maxConnections;
    private final int maxConnectionsPerIp;
    private final ConnectionCloser closer;
    private final Map<InetAddress, Integer> perAddress = new HashMap<>();
    private int open;

    ConnectionLimiter(ConnectionLimits limits, ConnectionCloser closer) {
        this.maxConnections = limits.maxConnections();
        this.maxConnectionsPerIp = limits.maxConnectionsPerIp();
        this.closer = closer;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        InetAddress address = ((InetSocketAddress) ctx.channel().remoteAddress()).getAddress();
        String refusal = tryCount(address);
        if (refusal == null) {
            ctx.channel().attr(COUNTED).set(address);
            super.channelActive(ctx);
        } else if (refusal.startsWith("max.connections.per.ip")) {
            closer.close(ctx.channel(), CloseReason.TOO_MANY_CONNECTIONS_FROM_IP, refusal);
        } else {
            closer.close(ctx.channel(), CloseReason.TOO_MANY_CONNECTIONS, refusal);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        InetAddress address = ctx.channel().attr(COUNTED).getAndSet(null);
        if (address != null) {
            release(address);
        }
        super.channelInactive(ctx);
    }

    /** Counts a connection from {@code address}; null when counted, else why it is refused. */
    private synchronized String tryCount(InetAddress address) {
        if (open >= maxConnections) {
            return "max.connections (" + maxConnections + ") connections are open";
        }
        int fromAddress = perAddress.getOrDefault(address, 0);
        if (fromAddress >= maxConnectionsPerIp) {
            return "max.connections.per.ip (" + maxConnectionsPerIp + ") connections from " + address.getHostAddress()
                    + " are open";
        }
        open++;
        perAddress.put(address, fromAddress + 1);
        return null;
    }

    private synchronized void release(InetAddress address) {
        open--;
        perAddress.computeIfPresent(address, (a, count) -> count == 1 ? null : count - 1);
    }

    /** Connections counted now. */
    synchronized int open() {
        return open;
    }
}
