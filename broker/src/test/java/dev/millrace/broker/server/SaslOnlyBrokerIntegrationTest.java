package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

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
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A single node whose only listener is SASL_SSL: nothing inside the broker needs an unauthenticated way in.
 * A PLAIN administrator (from the listener's JAAS configuration) creates the first SCRAM user; that user's
 * transactional producer, read-committed consumer group and share consumer are all served.
 */
@Timeout(120)
class SaslOnlyBrokerIntegrationTest {

    @TempDir
    Path tmp;

    private BrokerServer broker;

    @AfterEach
    void stop() {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void shouldServeTransactionsGroupsAndShareGroupsWithOnlyASaslSslListener() throws Exception {
        TestCerts certs = TestCerts.create(tmp);
        Map<String, String> settings = new HashMap<>();
        settings.put("listeners", "SASL_SSL://127.0.0.1:0");
        settings.put("ssl.keystore.location", certs.brokerKeystore.toString());
        settings.put("ssl.keystore.password", TestCerts.PASSWORD);
        settings.put("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-512");
        settings.put("listener.name.sasl_ssl.plain.sasl.jaas.config",
                "org.apache.kafka.common.security.plain.PlainLoginModule required user_admin=\"admin-secret\";");
        settings.put("group.share.auto.offset.reset", "earliest");
        broker = TestBrokers.start(tmp.resolve("data"), settings);

        try (Admin admin = Admin.create(client("PLAIN", "org.apache.kafka.common.security.plain.PlainLoginModule",
                "admin", "admin-secret"))) {
            admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("app",
                    new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), "app-secret")))
                    .all().get(30, TimeUnit.SECONDS);
            admin.createTopics(List.of(new NewTopic("orders", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        Properties app = client("SCRAM-SHA-512", "org.apache.kafka.common.security.scram.ScramLoginModule", "app",
                "app-secret");

        Properties producerProps = new Properties();
        producerProps.putAll(app);
        producerProps.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "orders-writer");
        producerProps.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        producerProps.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps)) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>("orders", "k", "committed"));
            producer.commitTransaction();
        }

        Properties consumerProps = new Properties();
        consumerProps.putAll(app);
        consumerProps.put(ConsumerConfig.GROUP_ID_CONFIG, "orders-readers");
        consumerProps.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        consumerProps.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        consumerProps.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        consumerProps.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        assertThat(pollOne(new KafkaConsumer<>(consumerProps))).containsExactly("committed");

        Properties shareProps = new Properties();
        shareProps.putAll(app);
        shareProps.put(ConsumerConfig.GROUP_ID_CONFIG, "orders-queue");
        shareProps.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        shareProps.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        List<String> shared = new ArrayList<>();
        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(shareProps)) {
            consumer.subscribe(List.of("orders"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (shared.isEmpty() && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    if (!r.value().isEmpty()) {
                        shared.add(r.value());
                    }
                }
            }
            consumer.commitSync(Duration.ofSeconds(30));
        }
        assertThat(shared).containsExactly("committed");
    }

    private static List<String> pollOne(KafkaConsumer<String, String> consumer) {
        List<String> values = new ArrayList<>();
        try (consumer) {
            consumer.subscribe(List.of("orders"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (values.isEmpty() && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    values.add(r.value());
                }
            }
            consumer.commitSync(Duration.ofSeconds(30));
        }
        return values;
    }

    private Properties client(String mechanism, String loginModule, String user, String password) {
        Properties props = new Properties();
        props.put("bootstrap.servers", "127.0.0.1:" + broker.boundAddress("SASL_SSL").getPort());
        props.put("security.protocol", "SASL_SSL");
        props.put("ssl.truststore.location", tmp.resolve("truststore.p12").toString());
        props.put("ssl.truststore.password", TestCerts.PASSWORD);
        props.put("sasl.mechanism", mechanism);
        props.put("sasl.jaas.config", loginModule + " required username=\"" + user + "\" password=\"" + password
                + "\";");
        props.put("request.timeout.ms", "20000");
        props.put("default.api.timeout.ms", "30000");
        return props;
    }
}
