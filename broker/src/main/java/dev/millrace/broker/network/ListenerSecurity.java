package dev.millrace.broker.network;

import io.netty.channel.Channel;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.AttributeKey;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;

/**
 * What a {@link KafkaServer} listener adds to each new connection for its security protocol (TLS, SASL; see
 * {@code dev.millrace.broker.security}), and how the connection's requests are labelled: the listener name and
 * protocol, and the principal, which {@link KafkaConnectionHandler} puts in every request's {@code RequestContext}.
 *
 * <p>The principal lives in the channel attribute {@link #PRINCIPAL}; it is {@link KafkaPrincipal#ANONYMOUS} until
 * the security handlers authenticate the peer (a TLS client certificate, a SASL exchange).
 *
 * <p>Implementations are immutable and shared by every connection of the listener.
 */
public interface ListenerSecurity {

    /** The authenticated principal of a connection; absent means {@link KafkaPrincipal#ANONYMOUS}. */
    AttributeKey<KafkaPrincipal> PRINCIPAL = AttributeKey.valueOf("millrace.principal");

    /** The listener a connection came in on. */
    AttributeKey<ListenerSecurity> LISTENER = AttributeKey.valueOf("millrace.listener");

    ListenerName listenerName();

    SecurityProtocol securityProtocol();

    /**
     * Adds this listener's handlers to a new connection whose pipeline already holds {@code "frames"} (the size
     * prefix decoder) and then {@code "kafka"} (the {@link KafkaConnectionHandler}).
     */
    void initChannel(SocketChannel channel);

    /** A PLAINTEXT listener named {@code name}: no handlers, anonymous principal. */
    static ListenerSecurity plaintext(String name) {
        ListenerName listener = ListenerName.normalised(name);
        return new ListenerSecurity() {
            @Override
            public ListenerName listenerName() {
                return listener;
            }

            @Override
            public SecurityProtocol securityProtocol() {
                return SecurityProtocol.PLAINTEXT;
            }

            @Override
            public void initChannel(SocketChannel channel) {
            }
        };
    }

    /** The listener {@code channel} came in on; a plain PLAINTEXT listener for a channel no listener set up. */
    static ListenerSecurity of(Channel channel) {
        ListenerSecurity listener = channel.attr(LISTENER).get();
        return listener == null ? Plaintext.DEFAULT : listener;
    }

    /** The principal of {@code channel}'s connection. */
    static KafkaPrincipal principal(Channel channel) {
        KafkaPrincipal principal = channel.attr(PRINCIPAL).get();
        return principal == null ? KafkaPrincipal.ANONYMOUS : principal;
    }

    /** Holder of the default listener (interfaces cannot have private constants). */
    final class Plaintext {
        static final ListenerSecurity DEFAULT = plaintext("PLAINTEXT");

        private Plaintext() {
        }
    }
}
