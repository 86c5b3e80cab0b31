package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.config.BrokerConfig;
import dev.millrace.broker.config.BrokerConfigLoader;
import dev.millrace.broker.controller.BrokerState;
import dev.millrace.broker.controller.Controller;
import dev.millrace.broker.controller.MetadataImage;

/**
 * A node that is not in {@code controller.quorum.voters} joins a running three-voter cluster's metadata quorum as a
 * learner, built from its broker settings: it follows every change without voting and names the active controller.
 * A whole broker-only node does not finish starting yet: its coordinators load every internal partition from a local
 * replica, which a node added after the internal topics were placed does not have (coordinators that follow
 * leadership are issue 23).
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ClusterBrokerOnlyIntegrationTest {

    private static final int BROKER_ONLY = 4;

    @TempDir
    Path dir;

    private InProcessCluster cluster;
    private Admin admin;

    @AfterEach
    void stopCluster() {
        if (admin != null) {
            admin.close(Duration.ofSeconds(5));
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aNodeOutsideTheVotersJoinsTheRunningQuorumAsALearnerFromItsBrokerSettings() throws Exception {
        cluster = InProcessCluster.start(dir, 3, Map.of());
        BrokerConfig brokerOnly = BrokerConfigLoader.fromMap(Map.of("node.id", String.valueOf(BROKER_ONLY),
                "port", String.valueOf(freePort()), "controller.port", String.valueOf(freePort()),
                "controller.quorum.voters", cluster.voters(),
                "data.dir", dir.resolve("node-" + BROKER_ONLY).toString()));
        assertThat(brokerOnly.isQuorumVoter()).isFalse();
        Controller learner = RaftControllerFactory.create(brokerOnly, dir.resolve("learner-metadata").toFile(),
                "ignored-by-a-learner");
        try {
            learner.start();
            int active = learner.activeControllerId().orElseThrow();
            assertThat(active).isBetween(1, 3);
            assertThat(cluster.broker(active).controller().activeControllerId()).contains(active);
            assertThat(learner.image().clusterId()).isEqualTo(cluster.broker(1).controller().image().clusterId());

            admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap()));
            admin.createTopics(List.of(new NewTopic("seen-by-learner", 2, (short) 3))).all().get(30, TimeUnit.SECONDS);
            await(() -> learner.image().topic("seen-by-learner").isPresent()
                            && learner.image().equals(cluster.broker(active).controller().image()),
                    "the learner's image matching the active controller's");
            Map<String, ApiError> refused = learner.createTopics(List.of(new Controller.NewTopic("on-learner", 1,
                    (short) 1, Map.of())), false).get(30, TimeUnit.SECONDS);
            assertThat(refused.get("on-learner").error()).isEqualTo(Errors.NOT_CONTROLLER);
        } finally {
            learner.close();
        }
    }

    @Test
    void aBrokerOnlyNodeWhoseVotersDoNotAnswerFailsStartNamingTheSetting() throws Exception {
        int silentVoter = freePort();
        BrokerServer broker = new BrokerServer(BrokerConfigLoader.fromMap(Map.of("host", "127.0.0.1",
                "port", String.valueOf(freePort()), "data.dir", dir.resolve("lonely").toString(), "node.id", "9",
                "controller.quorum.voters", "1@127.0.0.1:" + silentVoter, "controller.port",
                String.valueOf(freePort()), "controller.quorum.start.timeout.ms", "3000")), Time.SYSTEM);
        try {
            assertThatThrownBy(broker::start)
                    .hasMessageContaining("node 9 is not in controller.quorum.voters (1@127.0.0.1:" + silentVoter + ")")
                    .hasMessageContaining("a majority of the voters must be running and reachable");
        } finally {
            broker.close();
        }
    }

    private KafkaProducer<String, String> producer(String bootstrap) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    private int consumeAll(String bootstrap, int expected) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        int count = 0;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new StringDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < 4; p++) {
                tps.add(new TopicPartition("grown", p));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (count < expected && System.nanoTime() < deadline) {
                count += consumer.poll(Duration.ofMillis(200)).count();
            }
        }
        return count;
    }

    private void await(BooleanSupplier condition, String what) throws InterruptedException {
        cluster.awaitCondition(condition, what, Duration.ofSeconds(60));
    }

    private static int freePort() throws IOException {
        return TestBrokers.freePort();
    }
}
