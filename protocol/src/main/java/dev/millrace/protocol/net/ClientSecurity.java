package dev.millrace.protocol.net;

import java.io.IOException;
import java.net.Socket;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.security.ssl.DefaultSslEngineFactory;

/**
 * How a client connects to brokers: the Kafka security protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL), the SASL
 * mechanism and credentials, and the TLS stores, with kafka-clients' names. The same settings drive kafka-clients
 * ({@link #kafkaConfigs()}) and Millrace's own connections ({@link BrokerChannel}, blocking sockets): TLS engines come
 * from kafka-clients' {@link DefaultSslEngineFactory} (the broker's host name is checked against its certificate, as
 * kafka-clients does by default), SASL runs through {@link SaslClientAuthenticator}.
 *
 * <p>Immutable; thread-safe. Building one loads the stores: a missing or unreadable store fails then, with an
 * {@link IllegalArgumentException} naming the setting.
 */
public final class ClientSecurity implements AutoCloseable {

    /** No TLS, no authentication: the embedded default. */
    public static final ClientSecurity PLAINTEXT = new ClientSecurity(SecurityProtocol.PLAINTEXT, null, null, null,
            Map.of(), null);

    private final SecurityProtocol protocol;
    private final String mechanism;
    private final String user;
    private final String password;
    private final Map<String, Object> sslConfigs;
    private final DefaultSslEngineFactory ssl;

    private ClientSecurity(SecurityProtocol protocol, String mechanism, String user, String password,
                           Map<String, Object> sslConfigs, DefaultSslEngineFactory ssl) {
        this.protocol = protocol;
        this.mechanism = mechanism;
        this.user = user;
        this.password = password;
        this.sslConfigs = Map.copyOf(sslConfigs);
        this.ssl = ssl;
    }

    /**
     * Client security from settings named as kafka-clients names them.
     *
     * @param securityProtocol PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
     * @param saslMechanism    PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (used with the SASL protocols)
     * @param user             the SASL user (SASL protocols only)
     * @param password         the SASL password (SASL protocols only)
     * @param sslConfigs       {@code ssl.truststore.location}, {@code ssl.truststore.password},
     *                         {@code ssl.keystore.location}, ... (null or blank values are left out)
     * @throws IllegalArgumentException naming what is missing or wrong
     */
    public static ClientSecurity create(String securityProtocol, String saslMechanism, String user, String password,
                                        Map<String, String> sslConfigs) {
        SecurityProtocol protocol;
        try {
            protocol = SecurityProtocol.forName(securityProtocol.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("securityProtocol must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL, "
                    + "not " + securityProtocol);
        }
        boolean sasl = protocol == SecurityProtocol.SASL_PLAINTEXT || protocol == SecurityProtocol.SASL_SSL;
        boolean tls = protocol == SecurityProtocol.SSL || protocol == SecurityProtocol.SASL_SSL;
        String mechanism = null;
        if (sasl) {
            mechanism = saslMechanism == null ? "" : saslMechanism.trim().toUpperCase(Locale.ROOT);
            if (!SaslClientAuthenticator.MECHANISMS.contains(mechanism)) {
                throw new IllegalArgumentException("saslMechanism must be one of "
                        + SaslClientAuthenticator.MECHANISMS + ", not " + saslMechanism);
            }
            if (user == null || user.isEmpty() || password == null) {
                throw new IllegalArgumentException("securityProtocol " + protocol + " needs a user and a password");
            }
        }
        Map<String, Object> configs = new HashMap<>();
        if (sslConfigs != null) {
            sslConfigs.forEach((name, value) -> {
                if (value != null && !value.isBlank()) {
                    configs.put(name, value);
                }
            });
        }
        DefaultSslEngineFactory factory = null;
        if (tls) {
            factory = new DefaultSslEngineFactory();
            try {
                factory.configure(new ConfigDef().withClientSslSupport().parse(configs));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("cannot set up TLS (sslTruststoreLocation, sslTruststorePassword, "
                        + "sslKeystoreLocation, sslKeystorePassword): " + messages(e), e);
            }
        }
        return new ClientSecurity(protocol, mechanism, sasl ? user : null, sasl ? password : null,
                tls ? configs : Map.of(), factory);
    }

    public SecurityProtocol protocol() {
        return protocol;
    }

    public boolean usesTls() {
        return ssl != null;
    }

    public boolean usesSasl() {
        return mechanism != null;
    }

    /** The settings that give kafka-clients (producer, consumer, admin) the same security. */
    public Map<String, Object> kafkaConfigs() {
        Map<String, Object> configs = new HashMap<>(sslConfigs);
        configs.put("security.protocol", protocol.name);
        if (usesSasl()) {
            configs.put("sasl.mechanism", mechanism);
            String module = mechanism.equals("PLAIN") ? "org.apache.kafka.common.security.plain.PlainLoginModule"
                    : "org.apache.kafka.common.security.scram.ScramLoginModule";
            configs.put("sasl.jaas.config", module + " required username=\"" + jaasEscape(user) + "\" password=\""
                    + jaasEscape(password) + "\";");
        }
        return configs;
    }

    /** A TLS client engine for a connection to {@code host}:{@code port}; only when {@link #usesTls()}. */
    public SSLEngine clientEngine(String host, int port) {
        return ssl.createClientSslEngine(host, port, "https");
    }

    /**
     * Wraps a connected socket in TLS (checking the broker's host name against its certificate) and completes the
     * handshake; only when {@link #usesTls()}.
     */
    public Socket wrap(Socket plain, String host, int port) throws IOException {
        SSLSocket socket = (SSLSocket) ssl.sslContext().getSocketFactory().createSocket(plain, host, port, true);
        SSLEngine template = clientEngine(host, port);
        SSLParameters parameters = template.getSSLParameters();
        socket.setSSLParameters(parameters);
        socket.startHandshake();
        return socket;
    }

    /** A new SASL exchange for a connection to {@code host}; only when {@link #usesSasl()}. */
    public SaslClientAuthenticator authenticator(String host) {
        return new SaslClientAuthenticator(mechanism, user, password, host);
    }

    /** Equal for settings that connect alike (same protocol, mechanism, user, password, stores). */
    public String key() {
        return String.join("\u0000", protocol.name, Objects.toString(mechanism), Objects.toString(user),
                Objects.toString(password), new java.util.TreeMap<>(sslConfigs).toString());
    }

    @Override
    public void close() {
        if (ssl != null) {
            ssl.close();
        }
    }

    @Override
    public String toString() {
        return protocol.name + (usesSasl() ? " " + mechanism + " as " + user : "");
    }

    private static String jaasEscape(String value) {
        return value.replace("\\", "\\\\").replace("\"", "\\\"");
    }

    private static String messages(Throwable e) {
        StringBuilder out = new StringBuilder(String.valueOf(e.getMessage()));
        for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
            out.append(": ").append(c.getMessage());
        }
        return out.toString();
    }
}
