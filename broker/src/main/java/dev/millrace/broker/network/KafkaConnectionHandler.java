package dev.millrace.broker.network;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelConfig;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.timeout.IdleStateEvent;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.network.ClientInformation;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.types.SchemaException;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestAndSize;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.protocol.ext.ExtensionApi;
import dev.millrace.protocol.ext.ExtensionFormatException;
import dev.millrace.protocol.ext.ExtensionHeader;

/**
 * One client connection: turns frames into requests, hands them to the {@link RequestHandler} one at
 * a time, and writes each response before the next request starts, so responses leave in request
 * order (as Kafka guarantees). Frames that arrive meanwhile wait in a queue.
 *
 * <p>Backpressure, so that a client that sends requests but never reads its responses holds a bounded amount of
 * memory: the channel stops reading while the queue holds {@link #MAX_QUEUED_FRAMES} frames or
 * {@link #MAX_QUEUED_BYTES} bytes, or while the channel is not writable (its outbound buffer passed the write
 * buffer's high-water mark, see {@link KafkaServer}); it reads again once the queue is half drained and the
 * channel writable. Since the next request starts only once the previous response is written to the socket, at
 * most one response waits in the outbound buffer.
 *
 * <p>Bad input: a frame whose header or body cannot be parsed, an unknown API key, or a version
 * this broker does not serve (other than ApiVersions, which is answered with UNSUPPORTED_VERSION and
 * the served versions, as Kafka does) closes this connection with one log line naming the client and the problem
 * ({@link ConnectionCloser}); bad size prefixes and truncated frames are the {@link KafkaFrameDecoder}'s. A
 * connection idle for {@code connections.max.idle.ms} (no bytes read or written) is closed unless a request of it
 * is being handled (a long-poll fetch, a join waiting for a rebalance). Other connections are unaffected.
 *
 * <p>Throttling (client quotas, KIP-219): a response whose {@code throttle_time_ms} is above 0 is written first,
 * then the connection is muted for that time: it stops reading ({@code autoRead} off) and starts no queued request,
 * so the client is held back without being disconnected. A client speaking a request version that predates
 * KIP-219 (it does not throttle itself: Produce before v6, Fetch before v8) gets the response only after the
 * throttle time, muted meanwhile, as Kafka brokers do. A muted connection is not idle.
 *
 * <p>No exception leaves this class: handler failures are answered with the request's error response; a response
 * that cannot be built or written closes the connection; anything else that reaches {@link #exceptionCaught} or
 * escapes one of the tasks it runs on the event loop is a bug, counted in {@link NetworkStats#unexpectedErrors()},
 * logged with its stack, and closes only this connection.
 *
 * <p>Threading: all state is touched on the channel's event loop only; handler futures complete on
 * request threads and hop back to the event loop.
 */
final class KafkaConnectionHandler extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(KafkaConnectionHandler.class);
    static final int MAX_QUEUED_FRAMES = 64;
    static final int MAX_QUEUED_BYTES = 4 * 1024 * 1024;

    private final RequestHandler handler;
    private final ApiVersionTable versions;
    private final Executor requestExecutor;
    private final ConnectionCloser closer;
    private final long idleTimeoutMs;
    private final ArrayDeque<ByteBuffer> queued = new ArrayDeque<>();
    /** Bytes in {@link #queued}; volatile for {@link #queuedBytes()}, written on the event loop only. */
    private volatile long queuedBytes;
    /** A request is with the handler (its response not yet built). */
    private boolean handling;
    /** A response is being written to the socket. */
    private boolean writing;
    private boolean closing;
    /** The connection is muted for a client over its quota. */
    private boolean throttled;

    KafkaConnectionHandler(RequestHandler handler, ApiVersionTable versions, Executor requestExecutor,
                           ConnectionCloser closer, long idleTimeoutMs) {
        this.handler = handler;
        this.versions = versions;
        this.requestExecutor = requestExecutor;
        this.closer = closer;
        this.idleTimeoutMs = idleTimeoutMs;
    }

    /** Bytes of requests queued behind the one in flight; any thread. */
    long queuedBytes() {
        return queuedBytes;
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        closing = true;
        queued.clear();
        queuedBytes = 0;
        try {
            handler.onConnectionClosed(ctx.channel().id().asShortText());
        } catch (RuntimeException e) {
            log.warn("The connection-closed hook failed for {}", ctx.channel(), e);
        }
        super.channelInactive(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf frame = (ByteBuf) msg;
        ByteBuffer copy;
        try {
            if (closing) {
                return;
            }
            copy = ByteBuffer.allocate(frame.readableBytes());
            frame.readBytes(copy);
            copy.flip();
        } finally {
            frame.release();
        }
        queued.add(copy);
        queuedBytes += copy.remaining();
        updateReading(ctx);
        maybeProcessNext(ctx);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        updateReading(ctx);
        super.channelWritabilityChanged(ctx);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent) {
            if (!handling && !closing && !throttled) {
                closer.close(ctx.channel(), CloseReason.IDLE, "no bytes in or out for " + idleTimeoutMs + " ms"
                        + (writing ? " (a response is waiting for the client to read)" : ""));
            }
            return;
        }
        super.userEventTriggered(ctx, evt);
    }

    /** Stops reading while the queue is full or the channel not writable; reads again when both cleared. */
    private void updateReading(ChannelHandlerContext ctx) {
        ChannelConfig config = ctx.channel().config();
        if (throttled) {
            config.setAutoRead(false);
            return;
        }
        boolean writable = ctx.channel().isWritable();
        if (config.isAutoRead()) {
            if (!writable || queued.size() >= MAX_QUEUED_FRAMES || queuedBytes >= MAX_QUEUED_BYTES) {
                config.setAutoRead(false);
            }
        } else if (writable && queued.size() <= MAX_QUEUED_FRAMES / 2 && queuedBytes <= MAX_QUEUED_BYTES / 2) {
            config.setAutoRead(true);
        }
    }

    private void maybeProcessNext(ChannelHandlerContext ctx) {
        if (handling || writing || closing || throttled || queued.isEmpty()) {
            return;
        }
        ByteBuffer frame = queued.poll();
        queuedBytes -= frame.remaining();
        updateReading(ctx);
        if (frame.remaining() >= 2 && ExtensionApi.isReserved(frame.getShort(frame.position()))) {
            processExtension(ctx, frame);
            return;
        }
        RequestHeader header;
        RequestContext context;
        AbstractRequest request;
        try {
            if (frame.remaining() >= 4) {
                short key = frame.getShort(frame.position());
                short version = frame.getShort(frame.position() + 2);
                if (!ApiKeys.hasId(key)) {
                    closeForBadInput(ctx, CloseReason.UNKNOWN_API_KEY, "unknown API key " + key);
                    return;
                }
                ApiKeys api = ApiKeys.forId(key);
                if (api != ApiKeys.API_VERSIONS && !versions.supports(api, version)) {
                    closeForBadInput(ctx, CloseReason.UNSUPPORTED_VERSION, "unsupported version " + version + " of "
                            + api + "; this broker serves " + versions.describe(api));
                    return;
                }
            }
            header = RequestHeader.parse(frame);
            context = context(ctx, header);
            RequestAndSize parsed = context.parseRequest(frame);
            request = parsed.request;
        } catch (RuntimeException e) {
            closeForBadInput(ctx, CloseReason.MALFORMED_REQUEST, String.valueOf(e.getMessage()));
            return;
        }
        RequestContext requestContext = context;
        AbstractRequest parsedRequest = request;
        dispatch(ctx, () -> handler.handle(requestContext, parsedRequest),
                (response, error) -> respond(ctx, requestContext, parsedRequest, response, error));
    }

    /**
     * Runs {@code handle} on a request thread and then {@code then} back on the event loop, guarded: a failure of
     * {@code then} closes the connection and counts as an unexpected error.
     */
    private <T> void dispatch(ChannelHandlerContext ctx, Supplier<CompletableFuture<T>> handle,
                              BiConsumer<T, Throwable> then) {
        handling = true;
        closer.stats().onRequest();
        CompletableFuture<T> future;
        try {
            future = CompletableFuture.supplyAsync(handle, requestExecutor).thenCompose(f -> f);
        } catch (RejectedExecutionException e) {
            handling = false;
            closeForBadInput(ctx, CloseReason.RESPONSE_FAILED, "the broker is shutting down");
            return;
        }
        future.whenComplete((result, error) -> ctx.executor().execute(() -> {
            handling = false;
            try {
                then.accept(result, error);
            } catch (RuntimeException | Error e) {
                closer.closeUnexpected(ctx.channel(), e);
            }
        }));
    }

    /**
     * A Millrace extension request (API key in the reserved range): parsed by its codec in {@code protocol/},
     * handled like any request (in order, on a request thread), answered with a Kafka response header v0 frame.
     * An unknown key or unserved version closes the connection, as for Kafka APIs.
     */
    private void processExtension(ChannelHandlerContext ctx, ByteBuffer frame) {
        ExtensionHeader header;
        try {
            header = ExtensionHeader.read(frame);
            Optional<ExtensionApi> api = ExtensionApi.forKey(header.apiKey());
            if (api.isEmpty()) {
                closeForBadInput(ctx, CloseReason.UNKNOWN_API_KEY, "unknown extension API key " + header.apiKey());
                return;
            }
            if (!versions.supports(api.get(), header.apiVersion())) {
                closeForBadInput(ctx, CloseReason.UNSUPPORTED_VERSION, "unsupported version " + header.apiVersion()
                        + " of " + api.get().displayName() + "; this broker serves " + api.get().minVersion() + ".."
                        + api.get().maxVersion());
                return;
            }
        } catch (RuntimeException e) {
            closeForBadInput(ctx, CloseReason.MALFORMED_REQUEST, String.valueOf(e.getMessage()));
            return;
        }
        ExtensionHeader parsed = header;
        dispatch(ctx, () -> handler.handleExtension(parsed, frame), (body, error) -> respondExtension(ctx, parsed,
                body, error));
    }

    private void respondExtension(ChannelHandlerContext ctx, ExtensionHeader header, Struct body, Throwable error) {
        if (error != null) {
            Throwable cause = unwrap(error);
            if (cause instanceof NotServingException) {
                closeForBadInput(ctx, CloseReason.NOT_SERVING, "extension request " + header.apiKey() + ": "
                        + cause.getMessage());
                return;
            }
            if (isBadInput(cause)) {
                // the extension codecs parse the body on the request thread: bad input, not a bug
                closeForBadInput(ctx, CloseReason.MALFORMED_REQUEST, "extension request " + header.apiKey() + " v"
                        + header.apiVersion() + " does not parse: " + cause);
            } else {
                closer.stats().onHandlerFailure();
                log.warn("Extension request {} v{} from {} failed unexpectedly", header.apiKey(), header.apiVersion(),
                        ctx.channel().remoteAddress(), cause);
                closeForBadInput(ctx, CloseReason.RESPONSE_FAILED, "extension request " + header.apiKey() + " v"
                        + header.apiVersion() + " failed: " + cause);
            }
            return;
        }
        ByteBuffer response;
        try {
            response = header.responseFrame(body);
        } catch (RuntimeException e) {
            closer.stats().onHandlerFailure();
            closeForBadInput(ctx, CloseReason.RESPONSE_FAILED, "the response to extension request "
                    + header.apiKey() + " cannot be written: " + e);
            return;
        }
        write(ctx, Unpooled.wrappedBuffer(response));
    }

    /**
     * Writes the response in the request's version, except for an ApiVersions request of a version
     * this broker does not know, which is answered in version 0 (as Kafka does) so any client can read it.
     */
    private void respond(ChannelHandlerContext ctx, RequestContext context, AbstractRequest request,
                         AbstractResponse response, Throwable error) {
        RequestHeader header = context.header;
        SendRegion region;
        int throttleMs;
        boolean clientThrottles;
        try {
            AbstractResponse toSend = response;
            if (error != null) {
                Throwable cause = unwrap(error);
                if (cause instanceof NotServingException) {
                    closeForBadInput(ctx, CloseReason.NOT_SERVING, header.apiKey() + ": " + cause.getMessage());
                    return;
                }
                if (cause instanceof ApiException) {
                    log.debug("Request {} failed", header, cause);
                } else {
                    // answered UNKNOWN_SERVER_ERROR: a bug or an unexpected state, worth the operator's eye
                    closer.stats().onHandlerFailure();
                    log.warn("Request {} from {} failed unexpectedly; answered UNKNOWN_SERVER_ERROR", header,
                            ctx.channel().remoteAddress(), cause);
                }
                toSend = request.getErrorResponse(cause);
            }
            if (toSend == null) {
                maybeProcessNext(ctx);
                return;
            }
            region = new SendRegion(toSend.toSend(header.toResponseHeader(), context.apiVersion()));
            throttleMs = toSend.throttleTimeMs();
            clientThrottles = throttleMs > 0 && toSend.shouldClientThrottle(context.apiVersion());
        } catch (RuntimeException e) {
            closer.stats().onHandlerFailure();
            log.warn("The response to {} from {} cannot be built", header, ctx.channel().remoteAddress(), e);
            closeForBadInput(ctx, CloseReason.RESPONSE_FAILED, "the response to " + header.apiKey() + " v"
                    + header.apiVersion() + " cannot be built: " + e);
            return;
        }
        if (throttleMs <= 0) {
            write(ctx, region, 0);
        } else if (clientThrottles) {
            write(ctx, region, throttleMs);
        } else {
            mute(ctx, throttleMs, () -> write(ctx, region, 0));
        }
    }

    private void write(ChannelHandlerContext ctx, Object response) {
        write(ctx, response, 0);
    }

    /**
     * Mutes the connection for {@code throttleMs}: no read, no queued request started; then runs {@code then} (or,
     * when null, reads and serves again).
     */
    private void mute(ChannelHandlerContext ctx, long throttleMs, Runnable then) {
        throttled = true;
        updateReading(ctx);
        ctx.executor().schedule(() -> {
            throttled = false;
            if (closing) {
                return;
            }
            try {
                updateReading(ctx);
                if (then != null) {
                    then.run();
                } else {
                    maybeProcessNext(ctx);
                }
            } catch (RuntimeException | Error e) {
                closer.closeUnexpected(ctx.channel(), e);
            }
        }, throttleMs, java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    /** Writes {@code response}, then serves the next request, or first mutes for {@code muteAfterMs} when above 0. */
    private void write(ChannelHandlerContext ctx, Object response, long muteAfterMs) {
        writing = true;
        ctx.writeAndFlush(response).addListener(done -> {
            writing = false;
            if (done.isSuccess()) {
                try {
                    if (muteAfterMs > 0) {
                        mute(ctx, muteAfterMs, null);
                        return;
                    }
                    maybeProcessNext(ctx);
                } catch (RuntimeException | Error e) {
                    closer.closeUnexpected(ctx.channel(), e); // Netty would only log it, leaving the slot stuck
                }
            } else {
                log.debug("Could not write a response to {}: {}", ctx.channel().remoteAddress(), done.cause().toString());
                ctx.close();
            }
        });
    }

    /** Whether an extension handler's failure says its request did not parse (or was refused as invalid). */
    private static boolean isBadInput(Throwable cause) {
        return cause instanceof SchemaException || cause instanceof ExtensionFormatException
                || cause instanceof ApiException
                || cause instanceof java.nio.BufferUnderflowException || cause instanceof IllegalArgumentException;
    }

    /** The failure a handler future completed with, without the CompletionException around it. */
    private static Throwable unwrap(Throwable error) {
        return error instanceof java.util.concurrent.CompletionException && error.getCause() != null
                ? error.getCause() : error;
    }

    private static RequestContext context(ChannelHandlerContext ctx, RequestHeader header) {
        InetSocketAddress remote = (InetSocketAddress) ctx.channel().remoteAddress();
        ListenerSecurity listener = ListenerSecurity.of(ctx.channel());
        return new RequestContext(header, ctx.channel().id().asShortText(), remote.getAddress(),
                Optional.of(remote.getPort()), ListenerSecurity.principal(ctx.channel()), listener.listenerName(),
                listener.securityProtocol(), ClientInformation.EMPTY, false);
    }

    private void closeForBadInput(ChannelHandlerContext ctx, CloseReason reason, String detail) {
        closing = true;
        queued.clear();
        queuedBytes = 0;
        closer.close(ctx.channel(), reason, detail);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof java.io.IOException) {
            log.debug("Connection from {} failed: {}", ctx.channel().remoteAddress(), cause.toString());
            ctx.close();
        } else {
            closing = true;
            queued.clear();
            queuedBytes = 0;
            closer.closeUnexpected(ctx.channel(), cause);
        }
    }
}
