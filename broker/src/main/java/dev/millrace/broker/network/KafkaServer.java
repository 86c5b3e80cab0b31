package dev.millrace.broker.network;

import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.util.concurrent.DefaultThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Kafka-protocol listener: Netty NIO, one frame decoder per connection ({@code int32} size
 * prefix, frames above {@code maxFrameBytes} rejected as soon as their size is read), then a
 * {@link KafkaConnectionHandler}. Requests are handled on {@code requestExecutor}.
 *
 * <pre>
 *  frame:  +-----------------+-----------------------------+------------------------+
 *          | size (int32 BE) | request header (Kafka, v1/2)| request body (Kafka)   |
 *          +-----------------+-----------------------------+------------------------+
 * </pre>
 *
 * <p>Thread-safe start and stop.
 */
public final class KafkaServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(KafkaServer.class);

    private final String host;
    private final int port;
    private final int maxFrameBytes;
    private final RequestHandler handler;
    private final ApiVersionTable versions;
    private final ExecutorService requestExecutor;
    private final ListenerSecurity security;
    private EventLoopGroup bossGroup;
    private EventLoopGroup workerGroup;
    private Channel serverChannel;

    public KafkaServer(String host, int port, int maxFrameBytes, RequestHandler handler, ApiVersionTable versions,
                       ExecutorService requestExecutor) {
        this(host, port, maxFrameBytes, handler, versions, requestExecutor, ListenerSecurity.plaintext("PLAINTEXT"));
    }

    /** A listener whose connections get {@code security}'s handlers (TLS, SASL); an empty host binds every address. */
    public KafkaServer(String host, int port, int maxFrameBytes, RequestHandler handler, ApiVersionTable versions,
                       ExecutorService requestExecutor, ListenerSecurity security) {
        this.security = security;
        this.host = host;
        this.port = port;
        this.maxFrameBytes = maxFrameBytes;
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
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline()
                                .addLast("frames", new LengthFieldBasedFrameDecoder(maxFrameBytes, 0, 4, 0, 4, true))
                                .addLast("kafka", new KafkaConnectionHandler(handler, versions, requestExecutor));
                        ch.attr(ListenerSecurity.LISTENER).set(security);
                        security.initChannel(ch);
                    }
                });
        serverChannel = (host.isEmpty() ? bootstrap.bind(port) : bootstrap.bind(host, port)).sync().channel();
        InetSocketAddress bound = (InetSocketAddress) serverChannel.localAddress();
        log.info("Kafka-protocol listener {} ({}) on {}", security.listenerName().value(), security.securityProtocol(),
                bound);
        return bound;
    }

    @Override
    public synchronized void close() {
        if (serverChannel != null) {
            serverChannel.close().syncUninterruptibly();
            serverChannel = null;
        }
        if (bossGroup != null) {
            bossGroup.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
            workerGroup.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
            bossGroup = null;
        }
    }
}
