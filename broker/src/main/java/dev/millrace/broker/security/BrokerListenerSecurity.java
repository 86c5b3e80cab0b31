package dev.millrace.broker.security;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import io.netty.channel.socket.SocketChannel;
import io.netty.handler.ssl.SslHandler;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.security.plain.internals.PlainSaslServer;
import org.apache.kafka.common.security.ssl.SslPrincipalMapper;

import dev.millrace.broker.config.BrokerConfig;
import dev.millrace.broker.config.ConfigurationException;
import dev.millrace.broker.config.ListenerSettings.Listener;
import dev.millrace.broker.network.ListenerSecurity;

/**
 * The security of one listener, by its protocol: the handlers each new connection gets in front of the
 * frame decoder and the connection handler.
 *
 * <pre>
 *  PLAINTEXT       frames -&gt; kafka
 *  SSL             ssl -&gt; tls-handshake -&gt; regions -&gt; frames -&gt; kafka            principal: client certificate
 *  SASL_PLAINTEXT  frames -&gt; sasl -&gt; kafka                                        principal: SASL user
 *  SASL_SSL        ssl -&gt; tls-handshake -&gt; regions -&gt; frames -&gt; sasl -&gt; kafka    principal: SASL user
 *
 *  ssl            Netty SslHandler over OpenSSL or the JDK's SSLEngine ({@link SslEngines}, ssl.engine)
 *  tls-handshake  logs failed handshakes, names the principal ({@link TlsHandshakeHandler})
 *  regions        zero-copy responses copied into buffers for encryption ({@link FileRegionEncoder})
 *  sasl           SaslHandshake / SaslAuthenticate before any other request ({@link SaslAuthenticator})
 * </pre>
 *
 * <p>Immutable; thread-safe (shared by the listener's connections).
 */
public final class BrokerListenerSecurity implements ListenerSecurity, AutoCloseable {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(BrokerListenerSecurity.class);

    private final ListenerName name;
    private final SecurityProtocol protocol;
    private final SslEngines ssl;
    private final SslPrincipalMapper principalMapper;
    private final SaslServers sasl;

    private BrokerListenerSecurity(ListenerName name, SecurityProtocol protocol, SslEngines ssl,
                                   SslPrincipalMapper principalMapper, SaslServers sasl) {
        this.name = name;
        this.protocol = protocol;
        this.ssl = ssl;
        this.principalMapper = principalMapper;
        this.sasl = sasl;
    }

    /**
     * The security of each of {@code config}'s listeners, in order; loads the TLS stores (once per TLS listener, which
     * may have its own {@code ssl.client.auth}) and the PLAIN users.
     *
     * @throws ConfigurationException naming the settings that are missing or wrong
     */
    public static List<BrokerListenerSecurity> forListeners(BrokerConfig config, ScramCredentials scram) {
        List<String> problems = new ArrayList<>();
        SslPrincipalMapper mapper;
        try {
            mapper = SslPrincipalMapper.fromRules(config.sslPrincipalMappingRules());
        } catch (RuntimeException e) {
            throw new ConfigurationException(List.of("ssl.principal.mapping.rules: " + e.getMessage()));
        }
        List<BrokerListenerSecurity> out = new ArrayList<>();
        for (Listener listener : config.listeners()) {
            ListenerName name = ListenerName.normalised(listener.name());
            SaslServers servers = null;
            if (listener.usesSasl()) {
                PlainUsers plain = null;
                List<String> mechanisms = config.saslEnabledMechanisms();
                if (mechanisms.contains(PlainSaslServer.PLAIN_MECHANISM)) {
                    String setting = "listener.name." + listener.name().toLowerCase(Locale.ROOT)
                            + ".plain.sasl.jaas.config";
                    String jaas = config.listenerJaasConfig(listener.name(), "plain").orElse(null);
                    if (jaas == null) {
                        problems.add(setting + ": must be set: PLAIN is in sasl.enabled.mechanisms and listener "
                                + listener.name() + " is " + listener.protocol() + " (the PlainLoginModule entry "
                                + "names the users: user_<name>=\"<password>\")");
                        continue;
                    }
                    try {
                        plain = PlainUsers.parse(setting, name, jaas);
                    } catch (ConfigurationException e) {
                        problems.addAll(e.problems());
                        continue;
                    }
                }
                servers = new SaslServers(mechanisms, plain, scram);
            }
            SslEngines ssl = null;
            if (listener.usesTls() && problems.isEmpty()) {
                try {
                    ssl = SslEngines.create(config.sslSettings(listener.name()), config.sslEngine());
                    LOG.info("Listener {} ({}): TLS by {}", listener.name(), listener.protocol(), ssl.usesOpenSsl()
                            ? "OpenSSL (" + io.netty.handler.ssl.OpenSsl.versionString() + ")" : "the JDK's SSLEngine");
                } catch (ConfigurationException e) {
                    problems.addAll(e.problems());
                    continue;
                }
            }
            out.add(new BrokerListenerSecurity(name, listener.protocol(), ssl, mapper, servers));
        }
        if (!problems.isEmpty()) {
            out.forEach(BrokerListenerSecurity::close);
            throw new ConfigurationException(problems);
        }
        return out;
    }

    @Override
    public void close() {
        if (ssl != null) {
            ssl.close();
        }
    }

    @Override
    public ListenerName listenerName() {
        return name;
    }

    @Override
    public SecurityProtocol securityProtocol() {
        return protocol;
    }

    @Override
    public void initChannel(SocketChannel channel) {
        if (ssl != null) {
            InetSocketAddress peer = channel.remoteAddress();
            SslHandler handler = ssl.newHandler(channel.alloc(), peer.getHostString(), peer.getPort());
            channel.pipeline().addFirst("ssl", handler)
                    .addAfter("ssl", "tls-handshake", new TlsHandshakeHandler(principalMapper,
                            protocol == SecurityProtocol.SSL))
                    .addAfter("tls-handshake", "regions", new FileRegionEncoder());
        }
        if (sasl != null) {
            channel.pipeline().addBefore("kafka", "sasl", new SaslAuthenticator(sasl));
        }
    }
}
