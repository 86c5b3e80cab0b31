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
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mutual TLS: a listener named MTLS (mapped to SSL) that requires client certificates
 * ({@code listener.name.mtls.ssl.client.auth=required}), beside a PLAINTEXT one; the broker's key and certificates
 * come from a PEM file. Real kafka-clients with a certificate the broker trusts are served; without one, or with one
 * from an authority the broker does not trust, they get SslAuthenticationException.
 */
@Timeout(120)
class MutualTlsIntegrationTest {

    @TempDir
    static Path tmp;

    private static TestCerts certs;
    private static BrokerServer broker;

    @BeforeAll
    static void startBroker() throws Exception {
        certs = TestCerts.create(tmp);
        Map<String, String> settings = new HashMap<>();
        settings.put("listeners", "MTLS://127.0.0.1:0,PLAINTEXT://127.0.0.1:0");
        settings.put("listener.security.protocol.map", "MTLS:SSL,PLAINTEXT:PLAINTEXT");
        settings.put("listener.name.mtls.ssl.client.auth", "required");
        settings.put("ssl.keystore.location", certs.brokerPem().toString());
        settings.put("ssl.keystore.type", "PEM");
        settings.put("ssl.truststore.location", certs.truststore.toString());
        settings.put("ssl.truststore.password", TestCerts.PASSWORD);
        broker = TestBrokers.start(tmp.resolve("data"), settings);
    }

    @AfterAll
    static void stopBroker() {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void shouldServeAClientWithATrustedCertificate() throws Exception {
        Properties client = client(certs.clientKeystore("alice", "CN=alice,O=Millrace Tests"));
        try (Admin admin = Admin.create(client)) {
            admin.createTopics(List.of(new NewTopic("mtls", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        Properties producerProps = new Properties();
        producerProps.putAll(client);
        producerProps.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        producerProps.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps)) {
            producer.send(new ProducerRecord<>("mtls", "k", "over mutual TLS")).get(30, TimeUnit.SECONDS);
        }
        Properties consumerProps = new Properties();
        consumerProps.putAll(client);
        consumerProps.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        consumerProps.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps)) {
            TopicPartition tp = new TopicPartition("mtls", 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (values.isEmpty() && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    values.add(r.value());
                }
            }
        }
        assertThat(values).containsExactly("over mutual TLS");
    }

    @Test
    void shouldRefuseAClientWithoutACertificate() {
        assertThatThrownBy(() -> describeCluster(client(null)))
                .hasCauseInstanceOf(SslAuthenticationException.class);
    }

    @Test
    void shouldRefuseAClientWhoseCertificateIsFromAnUntrustedAuthority() throws Exception {
        Path mallory = certs.untrustedKeystore("mallory", "CN=mallory");
        assertThatThrownBy(() -> describeCluster(client(mallory)))
                .hasCauseInstanceOf(SslAuthenticationException.class);
    }

    private static void describeCluster(Properties client) throws Exception {
        try (Admin admin = Admin.create(client)) {
            admin.describeCluster().clusterId().get(30, TimeUnit.SECONDS);
        }
    }

    private static Properties client(Path keystore) {
        Properties props = new Properties();
        props.put("bootstrap.servers", "127.0.0.1:" + broker.boundAddress("MTLS").getPort());
        props.put("security.protocol", "SSL");
        props.put("ssl.truststore.location", certs.truststore.toString());
        props.put("ssl.truststore.password", TestCerts.PASSWORD);
        if (keystore != null) {
            props.put("ssl.keystore.location", keystore.toString());
            props.put("ssl.keystore.password", TestCerts.PASSWORD);
        }
        props.put("request.timeout.ms", "20000");
        props.put("default.api.timeout.ms", "30000");
        return props;
    }
}
