package dev.millrace.broker.network;

import java.net.InetSocketAddress;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Kafka-protocol listener: Netty NIO; per connection a pipeline of
 *
 * <pre>
 *  limits (ConnectionLimiter, shared) -&gt; idle (IdleStateHandler) -&gt; frames (KafkaFrameDecoder)
 *      -&gt; kafka (KafkaConnectionHandler)
 * </pre>
 *
 * enforcing the {@link ConnectionLimits} ({@code max.connections}, {@code max.connections.per.ip},
 * {@code connections.max.idle.ms}, {@code socket.request.max.bytes}). Requests are handled on
 * {@code requestExecutor}. Every connection the broker closes on its own is logged once and counted in
 * {@link #stats()}.
 *
 * <pre>
 *  frame:  +-----------------+-----------------------------+------------------------+
 *          | size (int32 BE) | request header (Kafka, v1/2)| request body (Kafka)   |
 *          +-----------------+-----------------------------+------------------------+
 * </pre>
 *
 * <p>Write buffer: a connection turns unwritable past {@link #WRITE_HIGH_WATER_MARK_BYTES} of unwritten responses
 * (its handler then stops reading) and writable again below {@link #WRITE_LOW_WATER_MARK_BYTES}. Responses are
 * {@link SendRegion}s, which Netty's default size estimator counts as 0 bytes (it sees a {@code FileRegion});
 * they are counted here by their full size.
 *
 * <p>Thread-safe start and stop.
 */
public final class KafkaServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(KafkaServer.class);
    static final int WRITE_LOW_WATER_MARK_BYTES = 256 * 1024;
    static final int WRITE_HIGH_WATER_MARK_BYTES = 1024 * 1024;

    private final String host;
    private final int port;
    private final ConnectionLimits limits;
    private final NetworkStats stats = new NetworkStats();
    private final ConnectionCloser closer = new ConnectionCloser(stats);
    private final ConnectionLimiter limiter;
    private final Set<Channel> connections = ConcurrentHashMap.newKeySet();
    private final RequestHandler handler;
    private final ApiVersionTable versions;
    private final ExecutorService requestExecutor;
    private final ListenerSecurity security;
    private EventLoopGroup bossGroup;
    private EventLoopGroup workerGroup;
    private Channel serverChannel;

    /** A listener with Kafka's default {@link ConnectionLimits} but for the largest request, {@code maxFrameBytes}. */
    public KafkaServer(String host, int port, int maxFrameBytes, RequestHandler handler, ApiVersionTable versions,
                       ExecutorService requestExecutor) {
        this(host, port, ConnectionLimits.DEFAULTS.withMaxRequestBytes(maxFrameBytes), handler, versions,
                requestExecutor, ListenerSecurity.plaintext("PLAINTEXT"));
    }

    /** A PLAINTEXT listener with these limits. */
    public KafkaServer(String host, int port, ConnectionLimits limits, RequestHandler handler,
                       ApiVersionTable versions, ExecutorService requestExecutor) {
        this(host, port, limits, handler, versions, requestExecutor, ListenerSecurity.plaintext("PLAINTEXT"));
    }

    /** A listener of Kafka's default limits but for the largest request, with {@code security}'s handlers. */
    public KafkaServer(String host, int port, int maxFrameBytes, RequestHandler handler, ApiVersionTable versions,
                       ExecutorService requestExecutor, ListenerSecurity security) {
        this(host, port, ConnectionLimits.DEFAULTS.withMaxRequestBytes(maxFrameBytes), handler, versions,
                requestExecutor, security);
    }

    /**
     * A listener whose connections get {@code security}'s handlers (TLS, SASL) and these limits (per listener); an
     * empty host binds every address.
     */
    public KafkaServer(String host, int port, ConnectionLimits limits, RequestHandler handler,
                       ApiVersionTable versions, ExecutorService requestExecutor, ListenerSecurity security) {
        this.security = security;
        this.host = host;
        this.port = port;
        this.limits = limits;
        this.limiter = new ConnectionLimiter(limits, closer);
        stats.gauges(limiter::open, this::bufferedBytes);
        this.handler = handler;
        this.versions = versions;
        this.requestExecutor = requestExecutor;
    }

    /** Binds the listener; returns the bound address (the actual port when 0 was asked). */
    public synchronized InetSocketAddress start() throws InterruptedException {
        bossGroup = new NioEventLoopGroup(1, new DefaultThreadFactory("millrace-accept", true));
        workerGroup = new NioEventLoopGroup(0, new DefaultThreadFactory("millrace-network", true));
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(bossGroup, workerGroup)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK,
                        new WriteBufferWaterMark(WRITE_LOW_WATER_MARK_BYTES, WRITE_HIGH_WATER_MARK_BYTES))
                .childOption(ChannelOption.MESSAGE_SIZE_ESTIMATOR, ResponseSizeEstimator.INSTANCE)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        connections.add(ch);
                        ch.closeFuture().addListener(closed -> connections.remove(ch));
                        ch.pipeline()
                                .addLast("limits", limiter)
                                .addLast("idle", new IdleStateHandler(0, 0, limits.idleTimeoutMs(),
                                        TimeUnit.MILLISECONDS))
                                .addLast("frames", new KafkaFrameDecoder(limits.maxRequestBytes(), closer))
                                .addLast("kafka", new KafkaConnectionHandler(handler, versions, requestExecutor,
                                        closer, limits.idleTimeoutMs()));
                        ch.attr(ListenerSecurity.LISTENER).set(security);
                        security.initChannel(ch);
                    }
                });
        serverChannel = (host.isEmpty() ? bootstrap.bind(port) : bootstrap.bind(host, port)).sync().channel();
        InetSocketAddress bound = (InetSocketAddress) serverChannel.localAddress();
        log.info("Kafka-protocol listener {} ({}) on {} ({})", security.listenerName().value(),
                security.securityProtocol(), bound, limits);
        return bound;
    }

    /** This listener's connection counters and gauges. */
    public NetworkStats stats() {
        return stats;
    }

    /** Requests queued in connection handlers plus responses not yet written to sockets, over all connections. */
    private long bufferedBytes() {
        long total = 0;
        for (Channel ch : connections) {
            ChannelOutboundBuffer out = ch.unsafe().outboundBuffer();
            if (out != null) {
                total += out.totalPendingWriteBytes();
            }
            KafkaConnectionHandler kafka = ch.pipeline().get(KafkaConnectionHandler.class);
            if (kafka != null) {
                total += kafka.queuedBytes();
            }
        }
        return total;
    }

    @Override
    public synchronized void close() {
        if (serverChannel != null) {
            serverChannel.close().syncUninterruptibly();
            serverChannel = null;
        }
        if (bossGroup != null) {
            bossGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
            workerGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
            bossGroup = null;
        }
    }
}
