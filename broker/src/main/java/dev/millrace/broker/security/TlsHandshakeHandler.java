package dev.millrace.broker.security;

import java.io.IOException;
import java.security.Principal;

import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.ssl.SslPrincipalMapper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.network.ListenerSecurity;

/**
 * Watches a TLS connection's handshake. A failed handshake (an untrusted or missing client certificate, no common
 * protocol version, a client that does not speak TLS) is logged with the client address and the reason; the
 * {@link SslHandler} closes the connection. On an SSL listener (not SASL_SSL, where SASL names the principal) a
 * completed handshake with a trusted client certificate makes the connection's principal
 * {@code User:<certificate subject>}, the subject mapped by {@code ssl.principal.mapping.rules} (Kafka's default
 * principal builder does the same); without a certificate the principal stays {@code ANONYMOUS}.
 *
 * <p>Not sharable; used on the channel's event loop.
 */
final class TlsHandshakeHandler extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(TlsHandshakeHandler.class);

    private final SslPrincipalMapper mapper;
    private final boolean certificatePrincipal;

    /** @param certificatePrincipal whether a client certificate names the principal (SSL listeners) */
    TlsHandshakeHandler(SslPrincipalMapper mapper, boolean certificatePrincipal) {
        this.mapper = mapper;
        this.certificatePrincipal = certificatePrincipal;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) throws Exception {
        if (event instanceof SslHandshakeCompletionEvent done) {
            if (!done.isSuccess()) {
                log.warn("Closing connection from {} on listener {}: TLS handshake failed: {}",
                        ctx.channel().remoteAddress(), ListenerSecurity.of(ctx.channel()).listenerName().value(),
                        done.cause().toString());
            } else if (certificatePrincipal) {
                SSLSession session = ctx.pipeline().get(SslHandler.class).engine().getSession();
                principalOf(session, ctx);
            }
        }
        super.userEventTriggered(ctx, event);
    }

    /**
     * TLS failures (a failed handshake, logged above; a bad record later) close the connection here, with one debug
     * line, rather than reach the connection handler as unexpected errors.
     */
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Throwable tls = cause instanceof io.netty.handler.codec.DecoderException && cause.getCause() != null
                ? cause.getCause() : cause;
        if (tls instanceof javax.net.ssl.SSLException) {
            log.debug("TLS failure on the connection from {}: {}", ctx.channel().remoteAddress(), tls.toString());
            ctx.close();
        } else {
            ctx.fireExceptionCaught(cause);
        }
    }

    private void principalOf(SSLSession session, ChannelHandlerContext ctx) throws IOException {
        Principal peer;
        try {
            peer = session.getPeerPrincipal();
        } catch (SSLPeerUnverifiedException noCertificate) {
            return; // ssl.client.auth none or requested without a certificate: ANONYMOUS
        }
        KafkaPrincipal principal = new KafkaPrincipal(KafkaPrincipal.USER_TYPE, mapper.getName(peer.getName()));
        ctx.channel().attr(ListenerSecurity.PRINCIPAL).set(principal);
        log.debug("{} authenticated as {} by its TLS certificate", ctx.channel().remoteAddress(), principal);
    }
}
