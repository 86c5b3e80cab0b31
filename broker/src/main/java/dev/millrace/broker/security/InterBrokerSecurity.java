package dev.millrace.broker.security;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import javax.security.auth.login.AppConfigurationEntry;

import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.security.JaasContext;

import dev.millrace.broker.config.BrokerConfig;
import dev.millrace.broker.config.ConfigurationException;
import dev.millrace.broker.config.ListenerSettings.Listener;
import dev.millrace.protocol.net.ClientSecurity;

/**
 * How this node connects to the other nodes of its cluster: as a client of their inter-broker listener
 * ({@code inter.broker.listener.name}), with that listener's protocol, as Kafka brokers do. Every connection one
 * node opens to another uses it: replica fetching, requests to the active controller, transaction markers,
 * transaction verification, share-state and share-member calls, and the delay service's transactional producer.
 *
 * <pre>
 *  listener protocol   what this node presents                      where it comes from
 *  PLAINTEXT           nothing
 *  SSL                 TLS; trusts ssl.truststore.*                 the broker's own ssl.* settings (a client
 *                      (the JVM's default when unset); offers       certificate only matters where the listener
 *                      ssl.keystore.* if asked for a certificate    sets ssl.client.auth)
 *  SASL_PLAINTEXT      SASL with sasl.mechanism.inter.broker.       username="..." password="..." options of
 *                      protocol                                     listener.name.&lt;listener&gt;.&lt;mechanism&gt;.sasl.jaas.config
 *  SASL_SSL            both
 * </pre>
 *
 * For PLAIN the credentials sit in the same JAAS entry that lists the listener's users, as in Kafka:
 * {@code PlainLoginModule required username="broker" password="b-secret" user_broker="b-secret" user_alice="...";}.
 * For SCRAM it is a {@code ScramLoginModule required username="broker" password="...";} entry, and the user must
 * exist (created with {@code alterUserScramCredentials}, kept in the metadata log, which the quorum replicates
 * without this listener): until then the nodes' connections to each other are refused and retried. The broker's
 * host name is checked against the certificate of the node it connects to, as kafka-clients do by default.
 *
 * <p>When the authorizer is on, the principal the other nodes see (the SASL user, or the certificate's subject on
 * an SSL listener with client authentication) must be in {@code super.users}: a follower's Fetch, an AlterPartition
 * or a WriteTxnMarkers would otherwise be refused.
 */
public final class InterBrokerSecurity {

    private static final String USERNAME = "username";
    private static final String PASSWORD = "password";

    private InterBrokerSecurity() {
    }

    /**
     * The client side of {@code config}'s inter-broker listener; loads the TLS stores.
     *
     * @throws ConfigurationException naming the setting that is missing or wrong
     */
    public static ClientSecurity forConfig(BrokerConfig config) {
        Listener listener = config.interBrokerListener();
        if (!listener.usesTls() && !listener.usesSasl()) {
            return ClientSecurity.PLAINTEXT;
        }
        String mechanism = null;
        String user = null;
        String password = null;
        if (listener.usesSasl()) {
            String named = config.saslMechanismInterBrokerProtocol();
            mechanism = named;
            String setting = "listener.name." + listener.name().toLowerCase(Locale.ROOT) + "."
                    + named.toLowerCase(Locale.ROOT) + ".sasl.jaas.config";
            String jaas = config.listenerJaasConfig(listener.name(), named).orElseThrow(() ->
                    new ConfigurationException(List.of(setting + ": must be set: the inter-broker listener "
                            + listener.name() + " is " + listener.protocol() + " with " + named + ", and this "
                            + "node authenticates to the others with the username and password options of that "
                            + "JAAS entry")));
            Map<String, ?> options = loginOptions(setting, listener, mechanism, jaas);
            Object u = options.get(USERNAME);
            Object p = options.get(PASSWORD);
            if (u == null || String.valueOf(u).isEmpty() || p == null) {
                throw new ConfigurationException(List.of(setting + ": needs username=\"...\" and password=\"...\" "
                        + "options: this node authenticates to the other nodes' inter-broker listener "
                        + listener.name() + " with them"));
            }
            user = String.valueOf(u);
            password = String.valueOf(p);
        }
        Map<String, String> ssl = new LinkedHashMap<>();
        if (listener.usesTls()) {
            config.sslSettings(listener.name()).forEach((name, value) -> {
                if (!name.equals("ssl.client.auth")) {
                    ssl.put(name, value);
                }
            });
            if (ssl.getOrDefault("ssl.truststore.location", "").isBlank()) {
                // an unset store: kafka-clients would otherwise be told a type for a store it does not load
                ssl.remove("ssl.truststore.type");
            }
        }
        try {
            return ClientSecurity.create(listener.protocol().name, mechanism, user, password, ssl);
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(List.of("inter.broker.listener.name: cannot connect to the other "
                    + "nodes' listener " + listener.name() + " (" + listener.protocol() + "): " + e.getMessage()));
        }
    }

    /**
     * The settings that hold what this node presents to the other nodes' inter-broker listener, for messages about
     * a refused connection: the JAAS entry of its SASL credentials, its TLS stores, or both; empty for PLAINTEXT.
     */
    public static String credentialSettings(BrokerConfig config) {
        Listener listener = config.interBrokerListener();
        List<String> parts = new ArrayList<>();
        if (listener.usesSasl()) {
            String mechanism = config.saslMechanismInterBrokerProtocol();
            parts.add("listener.name." + listener.name().toLowerCase(Locale.ROOT) + "."
                    + mechanism.toLowerCase(Locale.ROOT) + ".sasl.jaas.config (the " + mechanism
                    + " username and password of this node)");
        }
        if (listener.usesTls()) {
            parts.add("ssl.truststore.* (the authorities this node trusts) and ssl.keystore.* (its certificate)");
        }
        return String.join("; ", parts);
    }

    /** The options of the login module entry for {@code mechanism} in {@code jaas}, parsed by kafka-clients. */
    private static Map<String, ?> loginOptions(String setting, Listener listener, String mechanism, String jaas) {
        List<AppConfigurationEntry> entries;
        String key = mechanism.toLowerCase(Locale.ROOT) + ".sasl.jaas.config";
        try {
            entries = JaasContext.loadServerContext(ListenerName.normalised(listener.name()), mechanism,
                    Map.of(key, new Password(jaas))).configurationEntries();
        } catch (RuntimeException e) {
            throw new ConfigurationException(List.of(setting + ": " + e.getMessage()));
        }
        if (entries.size() != 1) {
            throw new ConfigurationException(List.of(setting + ": must hold one login module entry, not "
                    + entries.size()));
        }
        return entries.get(0).getOptions();
    }
}
