package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * One broker with a listener of each security protocol, driven by the real kafka-clients producer, consumer (in a
 * group: FindCoordinator must answer with the listener's address too) and Admin client: TLS, SASL PLAIN and SCRAM
 * (users created through the Admin API), and the refusals a Kafka client expects.
 */
@Timeout(120)
class SecureListenersIntegrationTest {

    private static final String PLAIN_JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required "
            + "user_alice=\"alice-secret\" user_bob=\"bob-secret\";";

    @TempDir
    static Path tmp;

    private static TestCerts certs;
    private static BrokerServer broker;

    @BeforeAll
    static void startBroker() throws Exception {
        certs = TestCerts.create(tmp);
        Map<String, String> settings = new HashMap<>();
        settings.put("listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,"
                + "SASL_SSL://127.0.0.1:0");
        settings.put("ssl.keystore.location", certs.brokerKeystore.toString());
        settings.put("ssl.keystore.password", TestCerts.PASSWORD);
        settings.put("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512");
        settings.put("listener.name.sasl_plaintext.plain.sasl.jaas.config", PLAIN_JAAS);
        settings.put("listener.name.sasl_ssl.plain.sasl.jaas.config", PLAIN_JAAS);
        settings.put("group.share.auto.offset.reset", "earliest");
        broker = TestBrokers.start(tmp.resolve("data"), settings);
    }

    @AfterAll
    static void stopBroker() {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void shouldProduceConsumeAndAdministerOverSsl() throws Exception {
        Properties ssl = sslClient("SSL");
        roundTrip(ssl, "ssl-topic");
        try (Admin admin = Admin.create(withBootstrap(ssl, "SSL"))) {
            // the client is told the SSL listener's address, not the PLAINTEXT one
            List<Node> nodes = new ArrayList<>(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS));
            assertThat(nodes).extracting(Node::port).containsExactly(broker.boundAddress("SSL").getPort());
        }
    }

    @Test
    void shouldAuthenticateWithScramSha512OverSaslSslOnceTheUserIsCreatedThroughTheAdminApi() throws Exception {
        try (Admin admin = Admin.create(withBootstrap(new Properties(), "PLAINTEXT"))) {
            admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("carol",
                    new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), "carol-secret")))
                    .all().get(30, TimeUnit.SECONDS);
            UserScramCredentialsDescription described = admin.describeUserScramCredentials(List.of("carol"))
                    .description("carol").get(30, TimeUnit.SECONDS);
            assertThat(described.credentialInfos()).extracting(ScramCredentialInfo::mechanism,
                    ScramCredentialInfo::iterations).containsExactly(org.assertj.core.groups.Tuple.tuple(
                    ScramMechanism.SCRAM_SHA_512, 8192));
        }
        Properties carol = scram(sslClient("SASL_SSL"), "SCRAM-SHA-512", "carol", "carol-secret");
        roundTrip(carol, "scram-topic");
        assertThatThrownBy(() -> describeCluster(scram(sslClient("SASL_SSL"), "SCRAM-SHA-512", "carol", "wrong")))
                .hasCauseInstanceOf(SaslAuthenticationException.class);
        // SCRAM-SHA-256 has no credential for carol: refused like an unknown user
        assertThatThrownBy(() -> describeCluster(scram(sslClient("SASL_SSL"), "SCRAM-SHA-256", "carol",
                "carol-secret"))).hasCauseInstanceOf(SaslAuthenticationException.class);
    }

    @Test
    void shouldServeAShareConsumerOverSaslSslWithScramSha512() throws Exception {
        try (Admin admin = Admin.create(withBootstrap(new Properties(), "PLAINTEXT"))) {
            admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("erin",
                    new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), "erin-secret")))
                    .all().get(30, TimeUnit.SECONDS);
        }
        Properties erin = scram(sslClient("SASL_SSL"), "SCRAM-SHA-512", "erin", "erin-secret");
        try (Admin admin = Admin.create(withBootstrap(erin, "SASL_SSL"))) {
            admin.createTopics(List.of(new NewTopic("share-topic", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps(erin, "SASL_SSL"))) {
            producer.send(new ProducerRecord<>("share-topic", "k", "shared")).get(30, TimeUnit.SECONDS);
        }
        Properties props = withBootstrap(erin, "SASL_SSL");
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "share-" + UUID.randomUUID());
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        List<String> values = new ArrayList<>();
        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(props)) {
            consumer.subscribe(List.of("share-topic"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (values.isEmpty() && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    values.add(r.value());
                }
            }
            consumer.commitSync(Duration.ofSeconds(30));
        }
        assertThat(values).containsExactly("shared");
    }

    @Test
    void shouldRefuseAScramUserOnceItsCredentialIsDeleted() throws Exception {
        try (Admin admin = Admin.create(withBootstrap(new Properties(), "PLAINTEXT"))) {
            admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("dave",
                    new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), "dave-secret")))
                    .all().get(30, TimeUnit.SECONDS);
            describeCluster(scram(new Properties(), "SCRAM-SHA-256", "dave", "dave-secret"), "SASL_PLAINTEXT");
            admin.alterUserScramCredentials(List.of(new UserScramCredentialDeletion("dave",
                    ScramMechanism.SCRAM_SHA_256))).all().get(30, TimeUnit.SECONDS);
        }
        assertThatThrownBy(() -> describeCluster(scram(new Properties(), "SCRAM-SHA-256", "dave", "dave-secret"),
                "SASL_PLAINTEXT")).hasCauseInstanceOf(SaslAuthenticationException.class);
    }

    @Test
    void shouldAuthenticateWithPlainOverSaslPlaintextAndSaslSsl() throws Exception {
        roundTrip(plain(new Properties(), "alice", "alice-secret"), "plain-topic", "SASL_PLAINTEXT");
        roundTrip(plain(sslClient("SASL_SSL"), "bob", "bob-secret"), "plain-ssl-topic", "SASL_SSL");
    }

    @Test
    void shouldRefuseAWrongPasswordAndAnUnknownUserWithSaslAuthenticationException() {
        assertThatThrownBy(() -> describeCluster(plain(new Properties(), "alice", "wrong"), "SASL_PLAINTEXT"))
                .hasCauseInstanceOf(SaslAuthenticationException.class);
        assertThatThrownBy(() -> describeCluster(plain(sslClient("SASL_SSL"), "mallory", "x"), "SASL_SSL"))
                .hasCauseInstanceOf(SaslAuthenticationException.class);
        assertThatThrownBy(() -> describeCluster(scram(sslClient("SASL_SSL"), "SCRAM-SHA-512", "nobody", "x")))
                .hasCauseInstanceOf(SaslAuthenticationException.class);
        Properties producer = plain(new Properties(), "alice", "wrong");
        try (KafkaProducer<String, String> p = new KafkaProducer<>(producerProps(producer, "SASL_PLAINTEXT"))) {
            assertThatThrownBy(() -> p.partitionsFor("any")).isInstanceOf(SaslAuthenticationException.class);
        }
    }

    @Test
    void shouldRefuseABrokerCertificateTheClientDoesNotTrust() {
        Properties untrusting = new Properties();
        untrusting.put("security.protocol", "SSL"); // the JVM's default trust store knows no test CA
        assertThatThrownBy(() -> describeCluster(untrusting, "SSL"))
                .hasCauseInstanceOf(SslAuthenticationException.class);
    }

    private static void describeCluster(Properties client) throws Exception {
        describeCluster(client, "SASL_SSL");
    }

    private static void describeCluster(Properties client, String listener) throws Exception {
        try (Admin admin = Admin.create(withBootstrap(client, listener))) {
            admin.describeCluster().clusterId().get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw e;
        }
    }

    private static void roundTrip(Properties client, String topic) throws Exception {
        roundTrip(client, topic, client.getProperty("security.protocol"));
    }

    /** Creates the topic, produces three records and reads them back in a consumer group, all over {@code listener}. */
    private static void roundTrip(Properties client, String topic, String listener) throws Exception {
        try (Admin admin = Admin.create(withBootstrap(client, listener))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps(client, listener))) {
            for (int i = 0; i < 3; i++) {
                producer.send(new ProducerRecord<>(topic, "k" + i, "v" + i)).get(30, TimeUnit.SECONDS);
            }
        }
        Properties consumerProps = withBootstrap(client, listener);
        consumerProps.put(ConsumerConfig.GROUP_ID_CONFIG, "g-" + UUID.randomUUID());
        consumerProps.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        consumerProps.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        consumerProps.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps)) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (values.size() < 3 && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    values.add(r.value());
                }
            }
            consumer.commitSync(Duration.ofSeconds(30));
        }
        assertThat(values).containsExactly("v0", "v1", "v2");
    }

    private static Properties producerProps(Properties client, String listener) {
        Properties props = withBootstrap(client, listener);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
        return props;
    }

    private static Properties withBootstrap(Properties client, String listener) {
        Properties props = new Properties();
        props.putAll(client);
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + broker.boundAddress(listener).getPort());
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "20000");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        return props;
    }

    private static Properties sslClient(String protocol) {
        Properties props = new Properties();
        props.put("security.protocol", protocol);
        props.put("ssl.truststore.location", certs.truststore.toString());
        props.put("ssl.truststore.password", TestCerts.PASSWORD);
        props.put("ssl.truststore.type", "PKCS12");
        return props;
    }

    private static Properties plain(Properties base, String user, String password) {
        Properties props = new Properties();
        props.putAll(base);
        props.putIfAbsent("security.protocol", "SASL_PLAINTEXT");
        props.put("sasl.mechanism", "PLAIN");
        props.put("sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required username=\""
                + user + "\" password=\"" + password + "\";");
        return props;
    }

    private static Properties scram(Properties base, String mechanism, String user, String password) {
        Properties props = new Properties();
        props.putAll(base);
        props.putIfAbsent("security.protocol", "SASL_PLAINTEXT");
        props.put("sasl.mechanism", mechanism);
        props.put("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required username=\""
                + user + "\" password=\"" + password + "\";");
        return props;
    }
}
