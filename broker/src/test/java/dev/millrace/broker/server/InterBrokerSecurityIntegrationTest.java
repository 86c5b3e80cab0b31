package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLSocket;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A two-node cluster secured between its nodes: its metadata quorum runs over mutual TLS
 * ({@code controller.quorum.security.protocol=SSL}) and its only Kafka listener is SASL_SSL (PLAIN, TLS 1.3) with the
 * authorizer on: the nodes reach each other through it, as {@code broker}, a super user. Followers replicate over it (acks=all with
 * {@code min.insync.replicas=2} is acknowledged only once the other node has the records), brokers register and
 * change ISRs with the controller on the other node, and a transaction across both nodes gets its markers written
 * on the remote one. Before inter-broker security existed such a cluster was refused at start; with the nodes
 * connecting in PLAINTEXT, nothing would replicate and the acks=all sends would time out.
 *
 * <p>The quorum: the two voters elect a leader and replicate the metadata over TLS (SOFAJRaft's clients get it from
 * {@link dev.millrace.broker.controller.QuorumRpcFactory}); on a voter's quorum port a TLS client with a certificate
 * of the same authority completes the handshake, while one without a certificate, one whose certificate nobody
 * trusts and a client speaking plaintext are cut off, and the quorum keeps working.
 */
@Timeout(240)
class InterBrokerSecurityIntegrationTest {

    private static final String TOPIC = "secured";

    @TempDir
    Path tmp;

    @Test
    void shouldReplicateAndCommitTransactionsBetweenNodesOverSaslSsl() throws Exception {
        TestCerts certs = TestCerts.create(tmp);
        Map<String, String> settings = new HashMap<>();
        settings.put("listeners", "INTERNAL://127.0.0.1:0");
        settings.put("listener.security.protocol.map", "INTERNAL:SASL_SSL");
        settings.put("inter.broker.listener.name", "INTERNAL");
        settings.put("sasl.enabled.mechanisms", "PLAIN");
        settings.put("listener.name.internal.plain.sasl.jaas.config",
                "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"broker\" "
                        + "password=\"b-secret\" user_broker=\"b-secret\" user_alice=\"a-secret\";");
        settings.put("ssl.keystore.location", certs.brokerKeystore.toString());
        settings.put("ssl.keystore.password", TestCerts.PASSWORD);
        settings.put("ssl.truststore.location", certs.truststore.toString());
        settings.put("ssl.truststore.password", TestCerts.PASSWORD);
        settings.put("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
        settings.put("super.users", "User:broker;User:alice");
        settings.put("controller.quorum.security.protocol", "SSL");
        assertThat(com.alipay.sofa.jraft.util.RpcFactoryHelper.rpcFactory())
                .isInstanceOf(dev.millrace.broker.controller.QuorumRpcFactory.class);
        try (InProcessCluster cluster = InProcessCluster.start(tmp.resolve("cluster"), 2, settings)) {
            Properties client = new Properties();
            client.put("bootstrap.servers", "127.0.0.1:" + cluster.broker(1).boundAddress("INTERNAL").getPort());
            client.put("security.protocol", "SASL_SSL");
            client.put("sasl.mechanism", "PLAIN");
            client.put("sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required "
                    + "username=\"alice\" password=\"a-secret\";");
            client.put("ssl.truststore.location", certs.truststore.toString());
            client.put("ssl.truststore.password", TestCerts.PASSWORD);
            client.put("request.timeout.ms", "20000");
            client.put("default.api.timeout.ms", "60000");
            try (Admin admin = Admin.create(client)) {
                admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short) 2)
                        .configs(Map.of("min.insync.replicas", "2")))).all().get(60, TimeUnit.SECONDS);
            }
            Properties producerProps = new Properties();
            producerProps.putAll(client);
            producerProps.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            producerProps.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            producerProps.put(ProducerConfig.ACKS_CONFIG, "all");
            producerProps.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "60000");
            producerProps.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps)) {
                for (int p = 0; p < 2; p++) {
                    producer.send(new ProducerRecord<>(TOPIC, p, "k", "plain-" + p)).get(60, TimeUnit.SECONDS);
                }
            }
            producerProps.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "secured-txn");
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps)) {
                producer.initTransactions();
                producer.beginTransaction();
                for (int p = 0; p < 2; p++) {
                    producer.send(new ProducerRecord<>(TOPIC, p, "k", "txn-" + p));
                }
                producer.commitTransaction();
            }
            try (Admin admin = Admin.create(client)) {
                TopicDescription description = admin.describeTopics(List.of(TOPIC)).allTopicNames()
                        .get(60, TimeUnit.SECONDS).get(TOPIC);
                // one partition led by each node, each with both nodes in sync
                assertThat(description.partitions()).extracting(TopicPartitionInfo::leader).extracting(Node::id)
                        .containsExactlyInAnyOrder(1, 2);
                assertThat(description.partitions()).allSatisfy(p -> assertThat(p.isr()).extracting(Node::id)
                        .containsExactlyInAnyOrder(1, 2));
            }
            Properties consumerProps = new Properties();
            consumerProps.putAll(client);
            consumerProps.put(ConsumerConfig.GROUP_ID_CONFIG, "secured-readers");
            consumerProps.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            consumerProps.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            consumerProps.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            consumerProps.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            List<String> values = new ArrayList<>();
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps)) {
                consumer.subscribe(List.of(TOPIC));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
                while (values.size() < 4 && System.nanoTime() < deadline) {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                        values.add(r.value());
                    }
                }
            }
            // the committed transaction's records are readable: the markers reached both partitions' leaders
            assertThat(values).containsExactlyInAnyOrder("plain-0", "plain-1", "txn-0", "txn-1");

            InetSocketAddress quorum = QuorumTlsIntegrationTest.quorumAddress(cluster.voters(), 1);
            try (SSLSocket trusted = QuorumTlsIntegrationTest.tls(quorum, certs.truststore,
                    certs.clientKeystore("peer", "CN=peer"))) {
                trusted.startHandshake();
                assertThat(trusted.getSession().getProtocol()).startsWith("TLSv1.");
            }
            QuorumTlsIntegrationTest.assertCutOff(() -> QuorumTlsIntegrationTest.tls(quorum, certs.truststore, null));
            QuorumTlsIntegrationTest.assertCutOff(() -> QuorumTlsIntegrationTest.tls(quorum, certs.truststore,
                    certs.untrustedKeystore("stranger", "CN=stranger")));
            try (Socket plain = new Socket()) {
                plain.connect(quorum, 5_000);
                plain.setSoTimeout(30_000);
                plain.getOutputStream().write(new byte[] {1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
                assertThat(QuorumTlsIntegrationTest.readUntilClosed(plain.getInputStream())).isTrue();
            }
            try (Admin admin = Admin.create(client)) { // the quorum kept working after the refused peers
                admin.createTopics(List.of(new NewTopic("after-strangers", 1, (short) 2))).all()
                        .get(60, TimeUnit.SECONDS);
            }
            cluster.awaitCondition(() -> cluster.broker(2).controller().image().topic("after-strangers").isPresent(),
                    "node 2 applies the topic committed through the TLS quorum", Duration.ofSeconds(30));
        }
    }
}
