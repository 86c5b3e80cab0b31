package dev.millrace.broker.network;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.TooLongFrameException;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.network.ClientInformation;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestAndSize;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.protocol.ext.ExtensionApi;
import dev.millrace.protocol.ext.ExtensionHeader;

/**
 * One client connection: turns frames into requests, hands them to the {@link RequestHandler} one at
 * a time, and writes each response before the next request starts, so responses leave in request
 * order (as Kafka guarantees). Frames that arrive meanwhile wait in a queue; past
 * {@link #MAX_QUEUED_FRAMES} the channel stops reading until the queue drains.
 *
 * <p>Bad input: a frame whose header or body cannot be parsed, an unknown API key, or a version
 * this broker does not serve (other than ApiVersions, which is answered with UNSUPPORTED_VERSION and
 * the served versions, as Kafka does) closes this connection with one log line naming the problem;
 * an oversized frame too, as soon as its size is read. Other connections are unaffected.
 *
 * <p>Threading: all state is touched on the channel's event loop only; handler futures complete on
 * request threads and hop back to the event loop.
 */
final class KafkaConnectionHandler extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(KafkaConnectionHandler.class);
    static final int MAX_QUEUED_FRAMES = 64;

    private final RequestHandler handler;
    private final ApiVersionTable versions;
    private final Executor requestExecutor;
    private final ArrayDeque<ByteBuffer> queued = new ArrayDeque<>();
    private boolean inFlight;
    private boolean closing;

    KafkaConnectionHandler(RequestHandler handler, ApiVersionTable versions, Executor requestExecutor) {
        this.handler = handler;
        this.versions = versions;
        this.requestExecutor = requestExecutor;
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
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
            copy = ByteBuffer.allocate(frame.readableBytes());
            frame.readBytes(copy);
            copy.flip();
        } finally {
            frame.release();
        }
        queued.add(copy);
        if (queued.size() >= MAX_QUEUED_FRAMES) {
            ctx.channel().config().setAutoRead(false);
        }
        maybeProcessNext(ctx);
    }

    private void maybeProcessNext(ChannelHandlerContext ctx) {
        if (inFlight || closing || queued.isEmpty()) {
            return;
        }
        ByteBuffer frame = queued.poll();
        if (queued.size() < MAX_QUEUED_FRAMES / 2 && !ctx.channel().config().isAutoRead()) {
            ctx.channel().config().setAutoRead(true);
        }
        if (frame.remaining() >= 2 && ExtensionApi.isReserved(frame.getShort(frame.position()))) {
            processExtension(ctx, frame);
            return;
        }
        RequestHeader header;
        RequestContext context;
        AbstractRequest request;
        try {
            header = RequestHeader.parse(frame);
            if (header.apiKey() != ApiKeys.API_VERSIONS && !versions.supports(header.apiKey(), header.apiVersion())) {
                throw new InvalidRequestException("unsupported version " + header.apiVersion() + " of "
                        + header.apiKey() + "; this broker serves " + versions.describe(header.apiKey()));
            }
            context = context(ctx, header);
            RequestAndSize parsed = context.parseRequest(frame);
            request = parsed.request;
        } catch (RuntimeException e) {
            closeForBadInput(ctx, e);
            return;
        }
        inFlight = true;
        RequestContext requestContext = context;
        AbstractRequest parsedRequest = request;
        CompletableFuture.supplyAsync(() -> handler.handle(requestContext, parsedRequest), requestExecutor)
                .thenCompose(f -> f)
                .whenComplete((response, error) -> ctx.executor().execute(
                        () -> respond(ctx, requestContext, parsedRequest, response, error)));
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
            ExtensionApi api = ExtensionApi.forKey(header.apiKey()).orElseThrow(() -> new InvalidRequestException(
                    "unknown extension API key " + header.apiKey()));
            if (!versions.supports(api, header.apiVersion())) {
                throw new InvalidRequestException("unsupported version " + header.apiVersion() + " of "
                        + api.displayName() + "; this broker serves " + api.minVersion() + ".." + api.maxVersion());
            }
        } catch (RuntimeException e) {
            closeForBadInput(ctx, e);
            return;
        }
        inFlight = true;
        ExtensionHeader parsed = header;
        CompletableFuture.supplyAsync(() -> handler.handleExtension(parsed, frame), requestExecutor)
                .thenCompose(f -> f)
                .whenComplete((body, error) -> ctx.executor().execute(() -> respondExtension(ctx, parsed, body,
                        error)));
    }

    private void respondExtension(ChannelHandlerContext ctx, ExtensionHeader header, Struct body, Throwable error) {
        if (error != null) {
            log.warn("Extension request {} failed; closing the connection", header.apiKey(), unwrap(error));
            closeForBadInput(ctx, unwrap(error));
            return;
        }
        ctx.writeAndFlush(Unpooled.wrappedBuffer(header.responseFrame(body))).addListener(done -> {
            inFlight = false;
            if (done.isSuccess()) {
                maybeProcessNext(ctx);
            } else {
                ctx.close();
            }
        });
    }

    /**
     * Writes the response in the request's version, except for an ApiVersions request of a version
     * this broker does not know, which is answered in version 0 (as Kafka does) so any client can read it.
     */
    private void respond(ChannelHandlerContext ctx, RequestContext context, AbstractRequest request,
                         AbstractResponse response, Throwable error) {
        RequestHeader header = context.header;
        AbstractResponse toSend = response;
        if (error != null) {
            Throwable cause = unwrap(error);
            if (cause instanceof ApiException) {
                log.debug("Request {} failed", header, cause);
            } else {
                // answered UNKNOWN_SERVER_ERROR: a bug or an unexpected state, worth the operator's eye
                log.warn("Request {} failed unexpectedly; answered UNKNOWN_SERVER_ERROR", header, cause);
            }
            toSend = request.getErrorResponse(cause);
        }
        if (toSend == null) {
            inFlight = false;
            maybeProcessNext(ctx);
            return;
        }
        SendRegion region = new SendRegion(toSend.toSend(header.toResponseHeader(), context.apiVersion()));
        ctx.writeAndFlush(region).addListener(done -> {
            inFlight = false;
            if (done.isSuccess()) {
                maybeProcessNext(ctx);
            } else {
                log.debug("Could not write a response to {}: {}", ctx.channel().remoteAddress(), done.cause().toString());
                ctx.close();
            }
        });
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

    private void closeForBadInput(ChannelHandlerContext ctx, Throwable e) {
        closing = true;
        queued.clear();
        log.warn("Closing connection from {}: {}", ctx.channel().remoteAddress(), e.getMessage());
        ctx.close();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof TooLongFrameException) {
            closeForBadInput(ctx, cause);
        } else if (cause instanceof java.io.IOException) {
            log.debug("Connection from {} failed: {}", ctx.channel().remoteAddress(), cause.toString());
            ctx.close();
        } else {
            log.warn("Closing connection from {} after an unexpected error", ctx.channel().remoteAddress(), cause);
            ctx.close();
        }
    }
}
