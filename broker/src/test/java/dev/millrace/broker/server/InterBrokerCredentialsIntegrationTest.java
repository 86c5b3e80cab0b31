package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node whose inter-broker password is wrong: the running cluster's controller refuses its connection, so it cannot
 * register; its start fails with a message naming the setting that holds its credentials (after the registration
 * time, in which a SCRAM user created late would still be accepted), and the cluster keeps serving clients and
 * takes in a rightly configured node afterwards.
 */
@Timeout(180)
class InterBrokerCredentialsIntegrationTest {

    private static final String JAAS_SETTING = "listener.name.internal.plain.sasl.jaas.config";

    @TempDir
    Path tmp;

    @Test
    void aNodeWithAWrongInterBrokerPasswordIsRefusedAndNamesTheSetting() throws Exception {
        Map<String, String> settings = Map.of(
                "listeners", "INTERNAL://127.0.0.1:0",
                "listener.security.protocol.map", "INTERNAL:SASL_PLAINTEXT",
                "inter.broker.listener.name", "INTERNAL",
                "sasl.enabled.mechanisms", "PLAIN",
                JAAS_SETTING, jaas("b-secret"));
        try (InProcessCluster cluster = InProcessCluster.start(tmp.resolve("cluster"), 1, settings)) {
            assertThatThrownBy(() -> cluster.addBroker(2, Map.of(JAAS_SETTING, jaas("not-the-password"))))
                    .hasStackTraceContaining("node.id 2 could not register")
                    .hasStackTraceContaining("refused this node's credentials, set in " + JAAS_SETTING)
                    .hasStackTraceContaining("SaslAuthenticationException");

            Properties client = new Properties();
            client.put("bootstrap.servers", "127.0.0.1:" + cluster.broker(1).boundAddress("INTERNAL").getPort());
            client.put("security.protocol", "SASL_PLAINTEXT");
            client.put("sasl.mechanism", "PLAIN");
            client.put("sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required "
                    + "username=\"alice\" password=\"a-secret\";");
            try (Admin admin = Admin.create(client)) {
                admin.createTopics(List.of(new NewTopic("still-served", 1, (short) 1))).all()
                        .get(60, TimeUnit.SECONDS);
            }
            Properties producerProps = new Properties();
            producerProps.putAll(client);
            producerProps.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            producerProps.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps)) {
                RecordMetadata sent = producer.send(new ProducerRecord<>("still-served", "k", "v"))
                        .get(60, TimeUnit.SECONDS);
                assertThat(sent.offset()).isZero();
            }

            cluster.addBroker(3);
            cluster.awaitCondition(() -> cluster.broker(1).controller().image().isUnfenced(3),
                    "node 3, with the right password, registered and unfenced", Duration.ofSeconds(30));
            assertThat(cluster.broker(1).controller().image().isUnfenced(2)).isFalse();
        }
    }

    private static String jaas(String ownPassword) {
        return "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"broker\" "
                + "password=\"" + ownPassword + "\" user_broker=\"b-secret\" user_alice=\"a-secret\";";
    }
}
