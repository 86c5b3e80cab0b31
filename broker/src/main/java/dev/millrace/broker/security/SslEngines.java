package dev.millrace.broker.security;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import javax.net.ssl.SSLEngine;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.internals.BrokerSecurityConfigs;
import org.apache.kafka.common.security.ssl.DefaultSslEngineFactory;

import dev.millrace.broker.config.ConfigurationException;

/**
 * The broker's TLS engines, built from its {@code ssl.*} settings (Kafka's names) by kafka-clients'
 * {@link DefaultSslEngineFactory}: PKCS12, JKS or PEM key and trust stores, {@code ssl.enabled.protocols}, and
 * {@code ssl.client.auth}. The stores are loaded once, at start: a missing file, a wrong password or a store
 * without a key stops the broker with a {@link ConfigurationException} naming the settings.
 *
 * <p>Thread-safe: {@link #serverEngine} may be called by every event loop.
 */
public final class SslEngines implements AutoCloseable {

    private static final ConfigDef DEFINITION = new ConfigDef().withClientSslSupport()
            .define(BrokerSecurityConfigs.SSL_CLIENT_AUTH_CONFIG, ConfigDef.Type.STRING, "none",
                    ConfigDef.Importance.MEDIUM, BrokerSecurityConfigs.SSL_CLIENT_AUTH_DOC);

    private final DefaultSslEngineFactory factory;

    private SslEngines(DefaultSslEngineFactory factory) {
        this.factory = factory;
    }

    /**
     * Loads the stores {@code settings} name ({@code ssl.keystore.location} and the others, as
     * {@code BrokerConfig#sslSettings()} gives them; empty values are unset).
     *
     * @throws ConfigurationException naming the settings when a store cannot be loaded
     */
    public static SslEngines create(Map<String, String> settings) {
        Map<String, Object> props = new HashMap<>();
        settings.forEach((name, value) -> {
            if (value != null && !value.isBlank()) {
                props.put(name, value);
            }
        });
        // the broker does not check its clients' host names; clients check the broker's
        props.put("ssl.endpoint.identification.algorithm", "");
        DefaultSslEngineFactory factory = new DefaultSslEngineFactory();
        try {
            factory.configure(DEFINITION.parse(props));
        } catch (RuntimeException e) {
            throw new ConfigurationException(List.of("ssl.keystore.location, ssl.keystore.password, "
                    + "ssl.keystore.type, ssl.key.password, ssl.truststore.*: cannot set up TLS from "
                    + settings.get("ssl.keystore.location") + ": " + messages(e)));
        }
        if (factory.keystore() == null) {
            throw new ConfigurationException(List.of("ssl.keystore.location: the TLS listeners need the broker's "
                    + "key and certificate"));
        }
        return new SslEngines(factory);
    }

    /** A new server-side engine for a connection from {@code peerHost}:{@code peerPort}. */
    public SSLEngine serverEngine(String peerHost, int peerPort) {
        return factory.createServerSslEngine(peerHost, peerPort);
    }

    @Override
    public void close() {
        factory.close();
    }

    private static String messages(Throwable e) {
        StringBuilder out = new StringBuilder(String.valueOf(e.getMessage()));
        for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
            out.append(": ").append(c.getMessage());
        }
        return out.toString();
    }
}
