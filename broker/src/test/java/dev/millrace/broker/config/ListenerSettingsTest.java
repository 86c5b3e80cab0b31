package dev.millrace.broker.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.config.ListenerSettings.Listener;
import dev.millrace.broker.security.BrokerListenerSecurity;
import dev.millrace.broker.security.InterBrokerSecurity;
import dev.millrace.broker.security.ScramCredentials;
import dev.millrace.broker.security.SslEngines;
import dev.millrace.protocol.net.ClientSecurity;

@Timeout(60)
class ListenerSettingsTest {

    @TempDir
    Path tmp;

    @Test
    void shouldKeepTheEmbeddedPlaintextListenerWhenListenersIsNotSet() {
        BrokerConfig config = BrokerConfigLoader.fromMap(Map.of("port", "9500", "advertised.host", "public.example"));
        assertThat(config.listeners()).containsExactly(new Listener("PLAINTEXT", SecurityProtocol.PLAINTEXT,
                "localhost", 9500, "public.example", 0));
        assertThat(config.interBrokerListener().name()).isEqualTo("PLAINTEXT");
    }

    @Test
    void shouldParseListenersWithTheirProtocolsAndAdvertisedAddresses() throws IOException {
        Map<String, String> settings = tls();
        settings.put("listeners", "SASL_SSL://127.0.0.1:9094,PLAINTEXT://127.0.0.1:9092,INTERNAL://:9095");
        settings.put("listener.security.protocol.map", "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT");
        settings.put("advertised.listeners", "SASL_SSL://broker1.example:19094");
        settings.put("inter.broker.listener.name", "internal");
        BrokerConfig config = BrokerConfigLoader.fromMap(settings);
        assertThat(config.listeners()).containsExactly(
                new Listener("SASL_SSL", SecurityProtocol.SASL_SSL, "127.0.0.1", 9094, "broker1.example", 19094),
                new Listener("PLAINTEXT", SecurityProtocol.PLAINTEXT, "127.0.0.1", 9092, "127.0.0.1", 0),
                new Listener("INTERNAL", SecurityProtocol.PLAINTEXT, "", 9095, "localhost", 0));
        assertThat(config.interBrokerListener().name()).isEqualTo("INTERNAL");
    }

    @Test
    void shouldNameTheSettingOfEveryListenerProblem() {
        Map<String, String> settings = new HashMap<>();
        settings.put("listeners", "PLAINTEXT://127.0.0.1:9092,CLIENTS://127.0.0.1:9094,SECURE://127.0.0.1:9096,"
                + "nonsense,PLAINTEXT://127.0.0.1:9097");
        settings.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,SECURE:TLS");
        settings.put("advertised.listeners", "OTHER://h:1");
        settings.put("inter.broker.listener.name", "NOPE");
        settings.put("sasl.enabled.mechanisms", "GSSAPI");
        settings.put("listener.name.plaintext.ssl.keystore.location", "/x");
        assertThatThrownBy(() -> BrokerConfigLoader.fromMap(settings)).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("listener.security.protocol.map: unknown security protocol 'TLS' for listener "
                        + "SECURE")
                .hasMessageContaining("listener.security.protocol.map: has no security protocol for listener CLIENTS")
                .hasMessageContaining("listeners: 'nonsense' is not NAME://host:port")
                .hasMessageContaining("listeners: listener name PLAINTEXT appears twice")
                .hasMessageContaining("advertised.listeners: listener OTHER is not one of listeners")
                .hasMessageContaining("inter.broker.listener.name: NOPE is not one of listeners")
                .hasMessageContaining("sasl.enabled.mechanisms: unknown mechanism GSSAPI")
                .hasMessageContaining("unknown setting 'listener.name.plaintext.ssl.keystore.location'");
    }

    @Test
    void shouldRequireAKeystoreForTlsListenersAndATruststoreForClientCertificates() {
        assertThatThrownBy(() -> BrokerConfigLoader.fromMap(Map.of("listeners", "SSL://127.0.0.1:9093",
                "controller.port", "9999")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("ssl.keystore.location: must be set: listeners [SSL] use TLS");
        assertThatThrownBy(() -> BrokerConfigLoader.fromMap(Map.of("listeners", "SSL://127.0.0.1:9093",
                "controller.port", "9999", "ssl.keystore.location", tmp.resolve("missing.p12").toString(),
                "listener.name.ssl.ssl.client.auth", "required")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("ssl.keystore.location: " + tmp.resolve("missing.p12") + " is not a readable file")
                .hasMessageContaining("ssl.truststore.location: must be set when ssl.client.auth");
    }

    @Test
    void shouldNameTheSettingsANodeNeedsToAuthenticateToTheOtherNodes() {
        Map<String, String> cluster = new HashMap<>(Map.of("listeners", "INTERNAL://127.0.0.1:9092",
                "listener.security.protocol.map", "INTERNAL:SASL_PLAINTEXT", "controller.quorum.voters",
                "1@127.0.0.1:9093", "node.id", "1", "sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-512"));
        Map<String, String> unknownMechanism = new HashMap<>(cluster);
        unknownMechanism.put("sasl.mechanism.inter.broker.protocol", "SCRAM-SHA-256");
        assertThatThrownBy(() -> BrokerConfigLoader.fromMap(unknownMechanism))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("sasl.mechanism.inter.broker.protocol: SCRAM-SHA-256 is not one of "
                        + "sasl.enabled.mechanisms [PLAIN, SCRAM-SHA-512]");
        // the first enabled mechanism (PLAIN) by default; its JAAS entry must name this node's own credentials
        assertThatThrownBy(() -> InterBrokerSecurity.forConfig(BrokerConfigLoader.fromMap(cluster)))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("listener.name.internal.plain.sasl.jaas.config: must be set: the inter-broker "
                        + "listener INTERNAL is SASL_PLAINTEXT with PLAIN");
        Map<String, String> usersOnly = new HashMap<>(cluster);
        usersOnly.put("listener.name.internal.plain.sasl.jaas.config",
                "org.apache.kafka.common.security.plain.PlainLoginModule required user_broker=\"b\";");
        assertThatThrownBy(() -> InterBrokerSecurity.forConfig(BrokerConfigLoader.fromMap(usersOnly)))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("listener.name.internal.plain.sasl.jaas.config: needs username=");
        Map<String, String> scram = new HashMap<>(cluster);
        scram.put("sasl.mechanism.inter.broker.protocol", "scram-sha-512");
        scram.put("listener.name.internal.scram-sha-512.sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"broker\" "
                        + "password=\"b-secret\";");
        try (ClientSecurity security = InterBrokerSecurity.forConfig(BrokerConfigLoader.fromMap(scram))) {
            assertThat(security.protocol()).isEqualTo(SecurityProtocol.SASL_PLAINTEXT);
            assertThat(security.kafkaConfigs()).containsEntry("sasl.mechanism", "SCRAM-SHA-512")
                    .hasEntrySatisfying("sasl.jaas.config", jaas -> assertThat((String) jaas)
                            .contains("username=\"broker\"").contains("password=\"b-secret\""));
        }
    }

    @Test
    void shouldConnectToOtherNodesWithTheBrokersOwnStoresOnAnSslInterBrokerListener() throws Exception {
        dev.millrace.broker.server.TestCerts certs = dev.millrace.broker.server.TestCerts.create(tmp.resolve("c"));
        Map<String, String> settings = new HashMap<>(Map.of("listeners", "INTERNAL://127.0.0.1:9092",
                "listener.security.protocol.map", "INTERNAL:SSL", "controller.quorum.voters", "1@127.0.0.1:9093",
                "node.id", "1", "listener.name.internal.ssl.client.auth", "required"));
        settings.put("ssl.keystore.location", certs.brokerKeystore.toString());
        settings.put("ssl.keystore.password", dev.millrace.broker.server.TestCerts.PASSWORD);
        settings.put("ssl.truststore.location", certs.truststore.toString());
        settings.put("ssl.truststore.password", dev.millrace.broker.server.TestCerts.PASSWORD);
        try (ClientSecurity security = InterBrokerSecurity.forConfig(BrokerConfigLoader.fromMap(settings))) {
            assertThat(security.protocol()).isEqualTo(SecurityProtocol.SSL);
            assertThat(security.usesSasl()).isFalse();
            // the node presents its own certificate (the listener requires one) and trusts the test authority
            assertThat(security.kafkaConfigs()).containsEntry("ssl.keystore.location",
                    certs.brokerKeystore.toString()).containsEntry("ssl.truststore.location",
                    certs.truststore.toString()).doesNotContainKey("ssl.client.auth");
            assertThat(security.clientEngine("127.0.0.1", 9092).getUseClientMode()).isTrue();
        }
    }

    @Test
    void shouldStopAtStartWhenAKeystoreCannotBeLoadedOrPlainUsersAreMissing() throws IOException {
        Path notAStore = Files.writeString(tmp.resolve("garbage.p12"), "not a key store");
        assertThatThrownBy(() -> SslEngines.create(Map.of("ssl.keystore.location", notAStore.toString(),
                "ssl.keystore.password", "pw", "ssl.keystore.type", "PKCS12")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("ssl.keystore.location").hasMessageContaining("garbage.p12");
        BrokerConfig config = BrokerConfigLoader.fromMap(Map.of("listeners", "SASL_PLAINTEXT://127.0.0.1:9092",
                "sasl.enabled.mechanisms", "PLAIN"));
        assertThatThrownBy(() -> BrokerListenerSecurity.forListeners(config, ScramCredentials.NONE))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("listener.name.sasl_plaintext.plain.sasl.jaas.config: must be set");
        BrokerConfig badJaas = BrokerConfigLoader.fromMap(Map.of("listeners", "SASL_PLAINTEXT://127.0.0.1:9092",
                "sasl.enabled.mechanisms", "PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config",
                "PlainLoginModule required user_alice=\"x\""));
        assertThatThrownBy(() -> BrokerListenerSecurity.forListeners(badJaas, ScramCredentials.NONE))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("listener.name.sasl_plaintext.plain.sasl.jaas.config:");
    }

    @Test
    void shouldHidePasswordsFromTheSettingsListing() {
        BrokerConfig config = BrokerConfigLoader.fromMap(Map.of("ssl.keystore.password", "hunter2"));
        assertThat(BrokerConfigLoader.values(config)).filteredOn(v -> v.name().equals("ssl.keystore.password"))
                .singleElement().satisfies(v -> {
                    assertThat(v.value()).isNull();
                    assertThat(v.sensitive()).isTrue();
                });
    }

    private Map<String, String> tls() throws IOException {
        Map<String, String> settings = new HashMap<>();
        settings.put("ssl.keystore.location", Files.writeString(tmp.resolve("k.p12"), "x").toString());
        return settings;
    }
}
