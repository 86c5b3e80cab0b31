package dev.millrace.broker.security;

import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import javax.net.ssl.TrustManagerFactory;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.internals.BrokerSecurityConfigs;
import org.apache.kafka.common.security.ssl.DefaultSslEngineFactory;

import dev.millrace.broker.config.ConfigurationException;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;

/**
 * The broker's TLS engines, built from its {@code ssl.*} settings (Kafka's names): PKCS12, JKS or PEM key and trust
 * stores (loaded by kafka-clients' {@link DefaultSslEngineFactory}), {@code ssl.enabled.protocols}, and
 * {@code ssl.client.auth}. The stores are loaded once, at start: a missing file, a wrong password or a store
 * without a key stops the broker with a {@link ConfigurationException} naming the settings.
 *
 * <p>Two engines do the TLS, chosen by {@code ssl.engine} (a Millrace setting; Kafka has no such choice):
 * <pre>
 *   jdk      the JDK's SSLEngine, from DefaultSslEngineFactory
 *   openssl  BoringSSL through netty-tcnative (Netty's OpenSSL engine), with the key, chain and trusted
 *            certificates taken from the same loaded stores; refused at start where the native library
 *            does not load on this platform
 *   auto     openssl where it loads, else jdk (the default)
 * </pre>
 * Both see the same stores, protocols and client authentication, and give the same peer principal.
 *
 * <p>Thread-safe: {@link #newHandler} may be called by every event loop.
 */
public final class SslEngines implements AutoCloseable {

    private static final ConfigDef DEFINITION = new ConfigDef().withClientSslSupport()
            .define(BrokerSecurityConfigs.SSL_CLIENT_AUTH_CONFIG, ConfigDef.Type.STRING, "none",
                    ConfigDef.Importance.MEDIUM, BrokerSecurityConfigs.SSL_CLIENT_AUTH_DOC);

    private final DefaultSslEngineFactory factory;
    /** The OpenSSL context, or null when the JDK engine is used. */
    private final SslContext openSsl;

    private SslEngines(DefaultSslEngineFactory factory, SslContext openSsl) {
        this.factory = factory;
        this.openSsl = openSsl;
    }

    /** As {@link #create(Map, String)} with the JDK engine. */
    public static SslEngines create(Map<String, String> settings) {
        return create(settings, "jdk");
    }

    /**
     * Loads the stores {@code settings} name ({@code ssl.keystore.location} and the others, as
     * {@code BrokerConfig#sslSettings()} gives them; empty values are unset) for the engine {@code engine}
     * ({@code ssl.engine}: auto, jdk or openssl).
     *
     * @throws ConfigurationException naming the settings when a store cannot be loaded or OpenSSL was asked for
     *                                and is not available
     */
    public static SslEngines create(Map<String, String> settings, String engine) {
        String wanted = engine == null ? "auto" : engine.trim().toLowerCase(Locale.ROOT);
        if (wanted.equals("openssl") && !OpenSsl.isAvailable()) {
            throw new ConfigurationException(List.of("ssl.engine: openssl is not available on this platform ("
                    + OpenSsl.unavailabilityCause() + "); use auto or jdk"));
        }
        boolean useOpenSsl = wanted.equals("openssl") || wanted.equals("auto") && OpenSsl.isAvailable();
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
        SslContext openSsl = null;
        if (useOpenSsl) {
            try {
                openSsl = openSslContext(factory, settings);
            } catch (GeneralSecurityException | RuntimeException e) {
                factory.close();
                throw new ConfigurationException(List.of("ssl.engine: cannot set up the OpenSSL engine from "
                        + settings.get("ssl.keystore.location") + " (ssl.engine=jdk uses the JDK's): "
                        + messages(e)));
            }
        }
        return new SslEngines(factory, openSsl);
    }

    /** Whether the connections get OpenSSL engines (else the JDK's). */
    public boolean usesOpenSsl() {
        return openSsl != null;
    }

    /** A new server-side TLS handler for a connection from {@code peerHost}:{@code peerPort}. */
    public SslHandler newHandler(ByteBufAllocator alloc, String peerHost, int peerPort) {
        return openSsl != null ? openSsl.newHandler(alloc, peerHost, peerPort)
                : new SslHandler(factory.createServerSslEngine(peerHost, peerPort));
    }

    private static SslContext openSslContext(DefaultSslEngineFactory factory, Map<String, String> settings)
            throws GeneralSecurityException {
        KeyStore keys = factory.keystore();
        String alias = null;
        for (String a : Collections.list(keys.aliases())) {
            if (keys.isKeyEntry(a)) {
                alias = a;
                break;
            }
        }
        if (alias == null) {
            throw new GeneralSecurityException("the key store holds no private key");
        }
        PrivateKey key = privateKey(keys, alias, settings);
        Certificate[] chain = keys.getCertificateChain(alias);
        X509Certificate[] x509 = Arrays.stream(chain).map(c -> (X509Certificate) c).toArray(X509Certificate[]::new);
        String clientAuth = settings.getOrDefault("ssl.client.auth", "none");
        SslContextBuilder builder = SslContextBuilder.forServer(key, x509).sslProvider(SslProvider.OPENSSL)
                .clientAuth(switch (clientAuth == null ? "none" : clientAuth) {
                    case "required" -> ClientAuth.REQUIRE;
                    case "requested" -> ClientAuth.OPTIONAL;
                    default -> ClientAuth.NONE;
                });
        String protocols = settings.get("ssl.enabled.protocols");
        if (protocols != null && !protocols.isBlank()) {
            builder.protocols(Arrays.stream(protocols.split(",")).map(String::trim).filter(p -> !p.isEmpty())
                    .toArray(String[]::new));
        }
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(factory.truststore()); // null: the JVM's default authorities, as the JDK engine
        builder.trustManager(trust);
        try {
            return builder.build();
        } catch (javax.net.ssl.SSLException e) {
            throw new GeneralSecurityException(e.getMessage(), e);
        }
    }

    /** The key of {@code alias}, under ssl.key.password, else the store's password, else none. */
    private static PrivateKey privateKey(KeyStore keys, String alias, Map<String, String> settings)
            throws GeneralSecurityException {
        List<char[]> candidates = new ArrayList<>();
        for (String setting : List.of("ssl.key.password", "ssl.keystore.password")) {
            String value = settings.get(setting);
            if (value != null && !value.isEmpty()) {
                candidates.add(value.toCharArray());
            }
        }
        candidates.add(new char[0]);
        GeneralSecurityException last = null;
        for (char[] password : candidates) {
            try {
                PrivateKey key = (PrivateKey) keys.getKey(alias, password);
                if (key != null) {
                    return key;
                }
            } catch (java.security.UnrecoverableKeyException e) {
                last = e;
            }
        }
        throw last != null ? last : new GeneralSecurityException("cannot read the private key " + alias);
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
