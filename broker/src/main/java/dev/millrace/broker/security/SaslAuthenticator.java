package dev.millrace.broker.security;

import java.nio.ByteBuffer;

import javax.security.sasl.SaslException;
import javax.security.sasl.SaslServer;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.message.SaslHandshakeResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.requests.SaslHandshakeResponse;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.network.ListenerSecurity;

/**
 * SASL authentication of one connection on a SASL_PLAINTEXT or SASL_SSL listener, as Kafka clients run it
 * (KIP-152: the SASL tokens travel inside SaslAuthenticate requests). Sits between the frame decoder and the
 * connection handler; until the exchange completes it answers SaslHandshake and SaslAuthenticate itself, lets
 * ApiVersions through (the client learns the versions first), and closes the connection on anything else.
 *
 * <pre>
 *            ApiVersions (passed on to the connection handler, any number of times)
 *              +--+
 *              |  v
 *        +-----------+  SaslHandshake v1,        +--------------+  SaslAuthenticate, mechanism  +----------+
 *  ----&gt; | HANDSHAKE | -----------------------&gt; | AUTHENTICATE | ----------------------------&gt; | COMPLETE |
 *        +-----------+  mechanism enabled        +--------------+  done: principal User:&lt;name&gt; +----------+
 *              |                                  |     ^    |                                   every frame
 *              | unknown mechanism,               |     +----+ SaslAuthenticate, more            passed on
 *              | any other request                |            tokens to exchange
 *              v                                  v
 *        +--------+  &lt;---------------------------+  wrong password, unknown user, other request
 *        | FAILED |     the error response (if any) is flushed, then the connection closes
 *        +--------+
 * </pre>
 *
 * Every refusal logs one line naming the client address, the listener and the reason. ApiVersions is answered by the
 * connection handler on a request thread, so a client must wait for its answer before SaslHandshake (kafka-clients
 * does); one that pipelines them may get the handshake's answer first. SaslHandshake version 0
 * (raw SASL tokens after the handshake, before KIP-152) is not served. Re-authentication (KIP-368) is not
 * offered: the session lifetime is 0.
 *
 * <p>Not sharable; all state is touched on the channel's event loop only.
 */
final class SaslAuthenticator extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(SaslAuthenticator.class);

    enum State { HANDSHAKE, AUTHENTICATE, COMPLETE, FAILED }

    private final SaslServers servers;
    private State state = State.HANDSHAKE;
    private SaslServer server;

    SaslAuthenticator(SaslServers servers) {
        this.servers = servers;
    }

    State state() {
        return state;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (state == State.COMPLETE) {
            ctx.fireChannelRead(msg);
            return;
        }
        ByteBuf frame = (ByteBuf) msg;
        if (state == State.HANDSHAKE && frame.readableBytes() >= 2
                && frame.getShort(frame.readerIndex()) == ApiKeys.API_VERSIONS.id) {
            ctx.fireChannelRead(frame);
            return;
        }
        try {
            if (state == State.FAILED) {
                return;
            }
            ByteBuffer buffer = ByteBuffer.allocate(frame.readableBytes());
            frame.readBytes(buffer);
            buffer.flip();
            RequestHeader header;
            try {
                header = RequestHeader.parse(buffer);
            } catch (RuntimeException e) {
                fail(ctx, null, null, "a request header that does not parse before SASL authentication: "
                        + e.getMessage());
                return;
            }
            if (header.apiKey() == ApiKeys.SASL_HANDSHAKE && state == State.HANDSHAKE) {
                handshake(ctx, header, buffer);
            } else if (header.apiKey() == ApiKeys.SASL_AUTHENTICATE && state == State.AUTHENTICATE) {
                authenticate(ctx, header, buffer);
            } else {
                fail(ctx, null, null, header.apiKey() + " request while SASL authentication is in state " + state
                        + " (only ApiVersions, SaslHandshake and SaslAuthenticate come before it completes)");
            }
        } finally {
            frame.release();
        }
    }

    private void handshake(ChannelHandlerContext ctx, RequestHeader header, ByteBuffer body) {
        SaslHandshakeRequest request;
        try {
            request = (SaslHandshakeRequest) AbstractRequest.parseRequest(header.apiKey(), header.apiVersion(),
                    new ByteBufferAccessor(body)).request;
        } catch (RuntimeException e) {
            fail(ctx, null, null, "a SaslHandshake request that does not parse: " + e.getMessage());
            return;
        }
        if (header.apiVersion() < 1) {
            fail(ctx, null, null, "SaslHandshake version 0 (unframed SASL tokens) is not served; clients since "
                    + "Kafka 1.0 send version 1");
            return;
        }
        String mechanism = request.data().mechanism();
        SaslHandshakeResponseData data = new SaslHandshakeResponseData().setMechanisms(servers.mechanisms());
        if (!servers.mechanisms().contains(mechanism)) {
            fail(ctx, header, new SaslHandshakeResponse(data.setErrorCode(Errors.UNSUPPORTED_SASL_MECHANISM.code())),
                    "SASL mechanism " + mechanism + " is not enabled (enabled: " + servers.mechanisms() + ")");
            return;
        }
        server = servers.create(mechanism);
        state = State.AUTHENTICATE;
        respond(ctx, header, new SaslHandshakeResponse(data.setErrorCode(Errors.NONE.code())));
    }

    private void authenticate(ChannelHandlerContext ctx, RequestHeader header, ByteBuffer body) {
        SaslAuthenticateRequest request;
        try {
            request = (SaslAuthenticateRequest) AbstractRequest.parseRequest(header.apiKey(), header.apiVersion(),
                    new ByteBufferAccessor(body)).request;
        } catch (RuntimeException e) {
            fail(ctx, null, null, "a SaslAuthenticate request that does not parse: " + e.getMessage());
            return;
        }
        byte[] challenge;
        try {
            challenge = server.evaluateResponse(request.data().authBytes());
        } catch (SaslAuthenticationException e) {
            authenticationFailed(ctx, header, e.getMessage());
            return;
        } catch (SaslException | RuntimeException e) {
            authenticationFailed(ctx, header, "Authentication failed during authentication due to invalid "
                    + "credentials with SASL mechanism " + server.getMechanismName());
            return;
        }
        SaslAuthenticateResponseData data = new SaslAuthenticateResponseData().setErrorCode(Errors.NONE.code())
                .setAuthBytes(challenge == null ? new byte[0] : challenge).setSessionLifetimeMs(0);
        if (server.isComplete()) {
            KafkaPrincipal principal = new KafkaPrincipal(KafkaPrincipal.USER_TYPE, server.getAuthorizationID());
            ctx.channel().attr(ListenerSecurity.PRINCIPAL).set(principal);
            state = State.COMPLETE;
            log.debug("{} authenticated as {} with {} on listener {}", ctx.channel().remoteAddress(), principal,
                    server.getMechanismName(), listener(ctx));
            disposeServer();
        }
        respond(ctx, header, new SaslAuthenticateResponse(data));
    }

    private void authenticationFailed(ChannelHandlerContext ctx, RequestHeader header, String message) {
        SaslAuthenticateResponseData data = new SaslAuthenticateResponseData()
                .setErrorCode(Errors.SASL_AUTHENTICATION_FAILED.code()).setErrorMessage(message)
                .setAuthBytes(new byte[0]);
        fail(ctx, header, new SaslAuthenticateResponse(data), "SASL " + server.getMechanismName()
                + " authentication failed: " + message);
    }

    /** Logs the reason, sends {@code response} if there is one, and closes the connection. */
    private void fail(ChannelHandlerContext ctx, RequestHeader header, AbstractResponse response, String reason) {
        state = State.FAILED;
        disposeServer();
        log.warn("Closing connection from {} on listener {}: {}", ctx.channel().remoteAddress(), listener(ctx),
                reason);
        if (response == null) {
            ctx.close();
        } else {
            ctx.writeAndFlush(ResponseFrames.frame(ctx.alloc(), header, response))
                    .addListener(ChannelFutureListener.CLOSE);
        }
    }

    private void respond(ChannelHandlerContext ctx, RequestHeader header, AbstractResponse response) {
        ctx.writeAndFlush(ResponseFrames.frame(ctx.alloc(), header, response))
                .addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
    }

    private static String listener(ChannelHandlerContext ctx) {
        return ListenerSecurity.of(ctx.channel()).listenerName().value();
    }

    private void disposeServer() {
        if (server != null) {
            try {
                server.dispose();
            } catch (SaslException e) {
                log.debug("Disposing a SASL server failed", e);
            }
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        disposeServer();
        server = null;
        super.channelInactive(ctx);
    }
}
