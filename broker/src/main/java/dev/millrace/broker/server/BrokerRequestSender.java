package dev.millrace.broker.server;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.errors.BrokerNotAvailableException;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;

import dev.millrace.broker.cluster.ControllerClient;
import dev.millrace.broker.replica.BrokerEndpoints;
import dev.millrace.protocol.ext.ExtensionApi;
import dev.millrace.protocol.net.BrokerChannel;
import dev.millrace.protocol.net.ClientSecurity;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;

/**
 * Sends Kafka requests that a broker passes on to another broker (share-group offset admin calls for the
 * share-partitions another broker leads, {@link ShareOffsetsRouting}), and Millrace extension requests between brokers
 * (TxnAddSharePartition, {@link TxnShareJoin}). Kafka requests go as the same Kafka request with the client id
 * {@link ControllerClient#CLIENT_ID_PREFIX}{@code <node id>}: the receiver sees it as forwarded
 * ({@link ControllerClient#isForwarded}) and answers it itself, never passing it on again.
 *
 * <p>One connection per broker, opened at first use and again after it failed or the broker's endpoint changed, on
 * one event-loop thread owned by this sender. Threading: thread-safe; futures complete on that thread, so dependent
 * stages must not block.
 */
final class BrokerRequestSender implements AutoCloseable {

    private final String clientId;
    private final BrokerEndpoints endpoints;
    private final int timeoutMs;
    private final ClientSecurity security;
    private final EventLoopGroup group;
    private final EventLoop loop;
    /** Guarded by {@code this}. */
    private final Map<Integer, CompletableFuture<BrokerChannel>> channels = new HashMap<>();

    BrokerRequestSender(int nodeId, BrokerEndpoints endpoints, int timeoutMs) {
        this(nodeId, endpoints, timeoutMs, ClientSecurity.PLAINTEXT);
    }

    /** @param security how to connect to the other brokers (the inter-broker listener's protocol) */
    BrokerRequestSender(int nodeId, BrokerEndpoints endpoints, int timeoutMs, ClientSecurity security) {
        this.security = security;
        this.clientId = ControllerClient.CLIENT_ID_PREFIX + nodeId;
        this.endpoints = endpoints;
        this.timeoutMs = timeoutMs;
        this.group = new NioEventLoopGroup(1, r -> {
            Thread thread = new Thread(r, "millrace-broker-requests-" + nodeId);
            thread.setDaemon(true);
            return thread;
        });
        this.loop = group.next();
    }

    /**
     * Sends {@code request} at {@code version} to broker {@code brokerId}; fails with BROKER_NOT_AVAILABLE when the
     * metadata knows no unfenced broker of that id, with an {@link IOException} when the connection fails.
     */
    <R extends AbstractResponse> CompletableFuture<R> send(int brokerId, AbstractRequest.Builder<?> request,
                                                           short version) {
        Optional<InetSocketAddress> address = endpoints.endpoint(brokerId);
        if (address.isEmpty()) {
            return CompletableFuture.failedFuture(new BrokerNotAvailableException("Broker " + brokerId
                    + " is not known or is fenced"));
        }
        return channelTo(brokerId, address.get()).thenCompose(ch -> ch.<R>send(request, version));
    }

    /**
     * Sends a Millrace extension request to broker {@code brokerId}; completes with the response body, fails as
     * {@link #send} does.
     */
    CompletableFuture<ByteBuffer> sendExtension(int brokerId, ExtensionApi api, short version, Struct body) {
        Optional<InetSocketAddress> address = endpoints.endpoint(brokerId);
        if (address.isEmpty()) {
            return CompletableFuture.failedFuture(new BrokerNotAvailableException("Broker " + brokerId
                    + " is not known or is fenced"));
        }
        return channelTo(brokerId, address.get()).thenCompose(ch -> ch.sendExtension(api, version, body));
    }

    private synchronized CompletableFuture<BrokerChannel> channelTo(int brokerId, InetSocketAddress address) {
        String hostPort = address.getHostString() + ":" + address.getPort();
        CompletableFuture<BrokerChannel> channel = channels.get(brokerId);
        if (channel != null) {
            BrokerChannel open = BrokerChannel.openOrNull(channel); // not getNow: a failed connect would throw
            boolean failed = channel.isCompletedExceptionally();
            boolean moved = open != null && !open.address().equals(hostPort);
            if (!failed && !moved && (open == null || open.isOpen())) {
                return channel;
            }
            channel.thenAccept(BrokerChannel::close);
        }
        channel = BrokerChannel.connect(loop, address.getHostString(), address.getPort(), clientId, timeoutMs,
                security);
        channels.put(brokerId, channel);
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
