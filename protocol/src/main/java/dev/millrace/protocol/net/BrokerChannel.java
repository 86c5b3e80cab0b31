package dev.millrace.protocol.net;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;

import dev.millrace.protocol.ext.ExtensionApi;
import dev.millrace.protocol.ext.ExtensionHeader;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.ssl.SslHandler;
import org.apache.kafka.common.errors.SslAuthenticationException;

/**
 * One TCP connection to one broker speaking the Kafka protocol (kafka-clients' request and response classes) and
 * Millrace's extensions, on an event loop the caller shares with other channels: no thread of its own. Used by the
 * JMS provider and by brokers talking to each other (replica fetching, requests to the active controller).
 *
 * <pre>
 *   request frame:   int32 size | request header (v1/v2, kafka-clients) | body
 *   response frame:  int32 size | int32 correlation id (+ tagged fields for flexible versions) | body
 * </pre>
 *
 * A Kafka broker answers the requests of one connection one at a time and in order, so the responses are matched to
 * the oldest pending request; a response with another correlation id is a protocol error that closes the channel.
 * A request not answered within the request timeout fails and closes the channel too (every later response would be
 * out of step). Every failure completes the pending futures exceptionally with an {@link IOException} that names the
 * broker.
 *
 * <p>Thread-safe: requests may be sent from any thread; futures complete on the channel's event loop.
 */
public final class BrokerChannel {

    private static final int MAX_FRAME_BYTES = 100 * 1024 * 1024;

    private record Pending(int correlationId, String what, Function<ByteBuffer, Object> parse,
                           CompletableFuture<Object> result, ScheduledFuture<?> timeout) {
    }

    private final Channel channel;
    private final EventLoop loop;
    private final String address;
    private final String clientId;
    private final int timeoutMs;
    /** Event-loop thread only. */
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    /** Event-loop thread only. */
    private int nextCorrelationId;
    private volatile IOException failure;
    private final CompletableFuture<IOException> closed = new CompletableFuture<>();

    private BrokerChannel(Channel channel, String address, String clientId, int timeoutMs) {
        this.channel = channel;
        this.loop = channel.eventLoop();
        this.address = address;
        this.clientId = clientId;
        this.timeoutMs = timeoutMs;
    }

    /** Connects to {@code host:port} on {@code loop}; the future fails with an IOException naming the address. */
    public static CompletableFuture<BrokerChannel> connect(EventLoop loop, String host, int port, String clientId,
                                                           int timeoutMs) {
        return connect(loop, host, port, clientId, timeoutMs, ClientSecurity.PLAINTEXT);
    }

    /**
     * Connects to {@code host:port} on {@code loop} with {@code security}: the future completes once the TLS
     * handshake (SSL, SASL_SSL) and the SASL exchange (SASL_PLAINTEXT, SASL_SSL) are done, and fails with an
     * IOException naming the address, whose cause is kafka-clients' SslAuthenticationException or
     * SaslAuthenticationException when the broker refused this client.
     */
    public static CompletableFuture<BrokerChannel> connect(EventLoop loop, String host, int port, String clientId,
                                                           int timeoutMs, ClientSecurity security) {
        CompletableFuture<BrokerChannel> connected = connectTransport(loop, host, port, clientId, timeoutMs, security);
        if (!security.usesSasl()) {
            return connected;
        }
        return connected.thenCompose(c -> security.authenticator(host).authenticate(c::send)
                .handle((ok, error) -> {
                    if (error == null) {
                        return c;
                    }
                    Throwable cause = error instanceof java.util.concurrent.CompletionException
                            && error.getCause() != null ? error.getCause() : error;
                    IOException failure = new IOException("cannot authenticate to broker " + c.address + ": "
                            + cause.getMessage(), cause);
                    c.onLoop(() -> c.fail(failure));
                    throw new java.util.concurrent.CompletionException(failure);
                }));
    }

    private static CompletableFuture<BrokerChannel> connectTransport(EventLoop loop, String host, int port,
                                                                     String clientId, int timeoutMs,
                                                                     ClientSecurity security) {
        CompletableFuture<BrokerChannel> result = new CompletableFuture<>();
        String address = host + ":" + port;
        BrokerChannel[] holder = new BrokerChannel[1];
        Bootstrap bootstrap = new Bootstrap().group(loop).channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, timeoutMs)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        BrokerChannel c = new BrokerChannel(ch, address, clientId, timeoutMs);
                        holder[0] = c;
                        if (security.usesTls()) {
                            ch.pipeline().addLast("ssl", new SslHandler(security.clientEngine(host, port)));
                        }
                        ch.pipeline().addLast(new LengthFieldBasedFrameDecoder(MAX_FRAME_BYTES, 0, 4, 0, 4, true));
                        ch.pipeline().addLast(c.new Responses());
                    }
                });
        bootstrap.connect(host, port).addListener((ChannelFutureListener) f -> {
            if (f.isSuccess() && security.usesTls()) {
                f.channel().pipeline().get(SslHandler.class).handshakeFuture().addListener(handshake -> {
                    if (handshake.isSuccess()) {
                        result.complete(holder[0]);
                    } else {
                        Throwable cause = handshake.cause();
                        result.completeExceptionally(new IOException("TLS handshake with broker " + address
                                + " failed: " + cause.getMessage(), new SslAuthenticationException(
                                "SSL handshake failed", cause)));
                    }
                });
            } else if (f.isSuccess()) {
                result.complete(holder[0]);
            } else {
                result.completeExceptionally(new IOException("cannot connect to broker " + address + ": "
                        + f.cause().getMessage(), f.cause()));
            }
        });
        return result;
    }

    public String address() {
        return address;
    }

    public EventLoop eventLoop() {
        return loop;
    }

    /**
     * Completes (on the event loop) with why once the channel is closed, by this side, by the broker or by a failure:
     * a user that keeps a channel while sending nothing on it learns of the loss here rather than at its next send.
     */
    public CompletableFuture<IOException> closed() {
        return closed;
    }

    public boolean isOpen() {
        return failure == null && channel.isActive();
    }

    /**
     * The channel a {@link #connect} future holds if it connected, null while it connects or if the connect failed
     * (or was cancelled). For callers that keep one connect future per broker and decide whether to reuse it: a bare
     * {@code getNow(null)} throws a failed connect's exception instead, which fails every later send to that broker at
     * once and synchronously (the channel is never replaced, and the exception escapes callers that expect a failed
     * future).
     */
    public static BrokerChannel openOrNull(CompletableFuture<BrokerChannel> connecting) {
        try {
            return connecting.getNow(null);
        } catch (java.util.concurrent.CompletionException | java.util.concurrent.CancellationException failed) {
            return null;
        }
    }

    /** Sends a Kafka request at {@code builder}'s latest version {@code version}; completes with its response. */
    @SuppressWarnings("unchecked")
    public <R extends AbstractResponse> CompletableFuture<R> send(AbstractRequest.Builder<?> builder, short version) {
        AbstractRequest request = builder.build(version);
        CompletableFuture<Object> result = new CompletableFuture<>();
        String what = request.apiKey().name;
        onLoop(() -> {
            int correlationId = nextCorrelationId++;
            RequestHeader header = new RequestHeader(request.apiKey(), version, clientId, correlationId);
            ByteBuffer body = request.serializeWithHeader(header);
            ByteBuf frame = Unpooled.buffer(4 + body.remaining()).writeInt(body.remaining()).writeBytes(body);
            write(new Pending(correlationId, what, b -> AbstractResponse.parseResponse(b, header), result,
                    timeout(what)), frame);
        });
        return (CompletableFuture<R>) (CompletableFuture<?>) result;
    }

    /** Sends a Millrace extension request; completes with the response body (after the correlation id). */
    public CompletableFuture<ByteBuffer> sendExtension(ExtensionApi api, short version, Struct body) {
        CompletableFuture<Object> result = new CompletableFuture<>();
        onLoop(() -> {
            int correlationId = nextCorrelationId++;
            ByteBuffer frame = new ExtensionHeader(api.key(), version, correlationId, clientId).frame(body);
            write(new Pending(correlationId, api.displayName(), b -> {
                b.getInt(); // the correlation id, checked already
                return b;
            }, result, timeout(api.displayName())), Unpooled.wrappedBuffer(frame));
        });
        return result.thenApply(o -> (ByteBuffer) o);
    }

    private void onLoop(Runnable r) {
        if (loop.inEventLoop()) {
            r.run();
        } else {
            loop.execute(r);
        }
    }

    private ScheduledFuture<?> timeout(String what) {
        return loop.schedule(() -> fail(new IOException("broker " + address + " did not answer " + what + " within "
                + timeoutMs + " ms")), timeoutMs, TimeUnit.MILLISECONDS);
    }

    private void write(Pending p, ByteBuf frame) {
        if (failure != null) {
            p.timeout.cancel(false);
            frame.release();
            p.result.completeExceptionally(failure);
            return;
        }
        pending.add(p);
        channel.writeAndFlush(frame).addListener((ChannelFutureListener) f -> {
            if (!f.isSuccess()) {
                fail(new IOException("cannot send " + p.what + " to broker " + address + ": "
                        + f.cause().getMessage(), f.cause()));
            }
        });
    }

    /** Fails every pending request and closes the channel. Event loop. */
    private void fail(IOException e) {
        if (failure == null) {
            failure = e;
        }
        Pending p;
        while ((p = pending.poll()) != null) {
            p.timeout.cancel(false);
            p.result.completeExceptionally(failure);
        }
        channel.close();
        closed.complete(failure);
    }

    /** Closes the channel; pending requests fail. Idempotent, any thread. */
    public void close() {
        onLoop(() -> fail(new IOException("the connection to broker " + address + " was closed")));
    }

    private final class Responses extends SimpleChannelInboundHandler<ByteBuf> {

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
            byte[] bytes = new byte[frame.readableBytes()];
            frame.readBytes(bytes);
            ByteBuffer buffer = ByteBuffer.wrap(bytes);
            Pending p = pending.poll();
            if (p == null || bytes.length < 4 || buffer.getInt(0) != p.correlationId) {
                fail(new IOException("broker " + address + " sent a response that matches no request"
                        + (p == null ? "" : " (expected correlation id " + p.correlationId + " for " + p.what + ")")));
                if (p != null) {
                    p.result.completeExceptionally(failure);
                }
                return;
            }
            p.timeout.cancel(false);
            Object response;
            try {
                response = p.parse.apply(buffer);
            } catch (RuntimeException e) {
                p.result.completeExceptionally(new IOException("cannot read the " + p.what + " response of broker "
                        + address + ": " + e.getMessage(), e));
                return;
            }
            p.result.complete(response);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            fail(new IOException("broker " + address + " closed the connection"));
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            fail(new IOException("connection to broker " + address + " failed: " + cause.getMessage(), cause));
        }
    }
}
