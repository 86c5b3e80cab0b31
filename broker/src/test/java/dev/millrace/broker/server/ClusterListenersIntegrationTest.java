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
 * A two-node cluster whose nodes each have a PLAINTEXT listener (between the nodes) and an SSL one: a client that
 * bootstraps from one node's SSL listener is told every node's SSL address (each node registers its listeners with
 * the controller), so it reaches the partitions and the group coordinator on the other node over TLS too.
 */
@Timeout(180)
class ClusterListenersIntegrationTest {

    @TempDir
    Path tmp;

    @Test
    void shouldTellClientsEveryNodesAddressOnTheListenerTheyUse() throws Exception {
        TestCerts certs = TestCerts.create(tmp);
        Map<String, String> settings = new HashMap<>();
        settings.put("listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0");
        settings.put("ssl.keystore.location", certs.brokerKeystore.toString());
        settings.put("ssl.keystore.password", TestCerts.PASSWORD);
        try (InProcessCluster cluster = InProcessCluster.start(tmp.resolve("cluster"), 2, settings)) {
            Map<Integer, Integer> sslPorts = Map.of(1, cluster.broker(1).boundAddress("SSL").getPort(),
                    2, cluster.broker(2).boundAddress("SSL").getPort());
            Properties client = new Properties();
            client.put("bootstrap.servers", "127.0.0.1:" + sslPorts.get(1));
            client.put("security.protocol", "SSL");
            client.put("ssl.truststore.location", certs.truststore.toString());
            client.put("ssl.truststore.password", TestCerts.PASSWORD);
            client.put("request.timeout.ms", "20000");
            client.put("default.api.timeout.ms", "60000");
            try (Admin admin = Admin.create(client)) {
                List<Node> nodes = new ArrayList<>(admin.describeCluster().nodes().get(60, TimeUnit.SECONDS));
                assertThat(nodes).extracting(Node::id, Node::port).containsExactlyInAnyOrder(
                        org.assertj.core.groups.Tuple.tuple(1, sslPorts.get(1)),
                        org.assertj.core.groups.Tuple.tuple(2, sslPorts.get(2)));
                admin.createTopics(List.of(new NewTopic("spread", 4, (short) 1))).all().get(60, TimeUnit.SECONDS);
                TopicDescription description = describedOnceKnown(admin, "spread");
                assertThat(description.partitions()).extracting(TopicPartitionInfo::leader)
                        .extracting(Node::port).containsOnly(sslPorts.get(1), sslPorts.get(2))
                        .contains(sslPorts.get(2));
            }
            Properties producerProps = new Properties();
            producerProps.putAll(client);
            producerProps.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            producerProps.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            producerProps.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "60000");
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps)) {
                for (int p = 0; p < 4; p++) {
                    producer.send(new ProducerRecord<>("spread", p, "k", "v" + p)).get(60, TimeUnit.SECONDS);
                }
            }
            Properties consumerProps = new Properties();
            consumerProps.putAll(client);
            consumerProps.put(ConsumerConfig.GROUP_ID_CONFIG, "spread-readers");
            consumerProps.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            consumerProps.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            consumerProps.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            List<String> values = new ArrayList<>();
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps)) {
                consumer.subscribe(List.of("spread"));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
                while (values.size() < 4 && System.nanoTime() < deadline) {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                        values.add(r.value());
                    }
                }
                consumer.commitSync(Duration.ofSeconds(30));
            }
            assertThat(values).containsExactlyInAnyOrder("v0", "v1", "v2", "v3");
        }
    }

    /**
     * The topic as the node the admin asks describes it, once that node's metadata has it: CreateTopics is answered
     * when the controller committed the topic, and the other node may learn of it a moment later
     * (UNKNOWN_TOPIC_OR_PARTITION until then).
     */
    private static TopicDescription describedOnceKnown(Admin admin, String topic) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                return admin.describeTopics(List.of(topic)).allTopicNames().get(60, TimeUnit.SECONDS).get(topic);
            } catch (java.util.concurrent.ExecutionException e) {
                if (!(e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException)
                        || System.nanoTime() - deadline > 0) {
                    throw e;
                }
            }
        }
    }
}
