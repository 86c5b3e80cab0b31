package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.Connection;
import jakarta.jms.InvalidClientIDException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;

/**
 * The provider's share-group client on a three-broker cluster (issue 23): queues of three partitions with replication
 * factor 3 whose leaders sit on different brokers, so that fetches and settlements must go to each partition's leader
 * and heartbeats to the group's coordinator; a selector applies on every leader, not only on the coordinator's
 * broker. The last test stops the broker that leads a partition (a controlled
 * shutdown) while a consumer is reading: nothing is lost, and a message that comes again is flagged.
 */
@Timeout(300)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MultiBrokerQueueIntegrationTest {

    private static final int MESSAGES = 300;

    @TempDir
    static Path dir;

    private static TestCluster cluster;
    private static Admin admin;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = TestCluster.start(dir, 3);
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        admin = Admin.create(p);
    }

    @AfterAll
    static void stopCluster() {
        if (admin != null) {
            admin.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    private static MillraceConnectionFactory factory() {
        MillraceConnectionFactory f = cluster.factory();
        f.setDestinationPartitions(3);
        f.setDestinationReplicationFactor((short) 3);
        return f;
    }

    /** The leader of each partition of {@code topic}, by partition. */
    private static Map<Integer, Integer> leaders(String topic) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS)
                .get(topic);
        Map<Integer, Integer> out = new HashMap<>();
        for (TopicPartitionInfo p : d.partitions()) {
            out.put(p.partition(), p.leader() == null ? -1 : p.leader().id());
        }
        return out;
    }

    /** The end offset of each partition of {@code topic}, by partition. */
    private static Map<Integer, Long> endOffsets(String topic) throws Exception {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (int p : leaders(topic).keySet()) {
            latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
        }
        Map<Integer, Long> out = new HashMap<>();
        admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS).forEach((tp, info) -> out.put(tp.partition(),
                info.offset()));
        return out;
    }

    private static void send(Connection c, jakarta.jms.Destination to, String prefix, int count) throws Exception {
        try (Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE)) {
            MessageProducer producer = s.createProducer(to);
            for (int i = 0; i < count; i++) {
                producer.send(s.createTextMessage(prefix + i));
            }
        }
    }

    private static Set<String> expected(String prefix, int count) {
        Set<String> out = new HashSet<>();
        for (int i = 0; i < count; i++) {
            out.add(prefix + i);
        }
        return out;
    }

    @Test
    @Order(1)
    void queueConsumersReceiveEveryMessageOnceFromLeadersOnEveryBroker() throws Exception {
        try (Connection c = factory().createConnection()) {
            Queue queue;
            try (Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE)) {
                queue = s.createQueue("routed");
            }
            send(c, queue, "r-", MESSAGES);
            assertThat(new HashSet<>(leaders("routed").values())).as("leaders of routed").hasSize(3);
            c.start();

            List<String> received = new ArrayList<>();
            try (Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE)) {
                MessageConsumer consumer = s.createConsumer(queue);
                while (received.size() < MESSAGES) {
                    Message m = consumer.receive(30_000);
                    assertThat(m).as("message %d of %d", received.size() + 1, MESSAGES).isNotNull();
                    received.add(((TextMessage) m).getText());
                }
                assertThat(consumer.receive(500)).isNull();
            }
            assertThat(received).hasSize(MESSAGES).containsExactlyInAnyOrderElementsOf(expected("r-", MESSAGES));

            send(c, queue, "l-", MESSAGES);
            Set<String> heard = ConcurrentHashMap.newKeySet();
            List<String> duplicates = new java.util.concurrent.CopyOnWriteArrayList<>();
            CountDownLatch all = new CountDownLatch(MESSAGES);
            try (Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE)) {
                s.createConsumer(queue).setMessageListener(m -> {
                    try {
                        if (heard.add(((TextMessage) m).getText())) {
                            all.countDown();
                        } else {
                            duplicates.add(((TextMessage) m).getText());
                        }
                    } catch (jakarta.jms.JMSException e) {
                        throw new IllegalStateException(e);
                    }
                });
                assertThat(all.await(60, TimeUnit.SECONDS)).as("listener heard all, has %d", heard.size()).isTrue();
            }
            assertThat(heard).isEqualTo(expected("l-", MESSAGES));
            assertThat(duplicates).isEmpty();
        }
    }

    @Test
    @Order(2)
    void sharedSubscriptionGetsEveryMessageOnce() throws Exception {
        try (Connection c = factory().createConnection()) {
            c.start();
            try (Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE)) {
                Topic topic = s.createTopic("routed-events");
                MessageConsumer consumer = s.createSharedConsumer(topic, "routed-sub");
                send(c, topic, "e-", 90);
                List<String> received = new ArrayList<>();
                while (received.size() < 90) {
                    Message m = consumer.receive(30_000);
                    assertThat(m).as("event %d of 90", received.size() + 1).isNotNull();
                    received.add(((TextMessage) m).getText());
                }
                assertThat(received).containsExactlyInAnyOrderElementsOf(expected("e-", 90));
                assertThat(new HashSet<>(leaders("routed-events").values())).hasSize(3);
            }
        }
    }

    @Test
    @Order(3)
    void clientIdIsHeldAcrossTheCluster() throws Exception {
        try (Connection first = factory().createConnection()) {
            first.setClientID("routed-client");
            first.start();
            try (Connection second = factory().createConnection()) {
                assertThatThrownBy(() -> second.setClientID("routed-client"))
                        .isInstanceOf(InvalidClientIDException.class);
            }
        }
    }

    @Test
    @Order(4)
    void selectorAppliesOnPartitionsLedByBrokersThatDoNotCoordinateTheGroup() throws Exception {
        try (Connection c = factory().createConnection()) {
            Queue queue = null;
            // a session writes a destination's partition of its own choosing: sessions until every partition has
            // messages of both colors
            int sent = 0;
            while (sent == 0 || endOffsets("routed-selective").containsValue(0L)) {
                assertThat(sent).as("messages on every partition").isLessThan(1000);
                try (Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE)) {
                    queue = s.createQueue("routed-selective");
                    MessageProducer producer = s.createProducer(queue);
                    for (int i = 0; i < 10; i++, sent++) {
                        TextMessage m = s.createTextMessage((sent % 2 == 0 ? "red-" : "blue-") + sent);
                        m.setStringProperty("color", sent % 2 == 0 ? "red" : "blue");
                        producer.send(m);
                    }
                }
            }
            int perColor = sent / 2;
            // three leaders, so at least two partitions are led by brokers other than the group's coordinator
            assertThat(new HashSet<>(leaders("routed-selective").values())).hasSize(3);
            c.start();
            Set<String> reds = new HashSet<>();
            try (Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE)) {
                MessageConsumer consumer = s.createConsumer(queue, "color = 'red'");
                while (reds.size() < perColor) {
                    Message m = consumer.receive(30_000);
                    assertThat(m).as("red message %d of %d", reds.size() + 1, perColor).isNotNull();
                    assertThat(m.getStringProperty("color")).as(((TextMessage) m).getText()).isEqualTo("red");
                    reds.add(((TextMessage) m).getText());
                }
                assertThat(consumer.receive(500)).as("no blue message for the red selector").isNull();
            }
            Set<String> blues = new HashSet<>();
            try (Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE)) {
                MessageConsumer consumer = s.createConsumer(queue);
                while (blues.size() < perColor) {
                    Message m = consumer.receive(30_000);
                    assertThat(m).as("blue message %d of %d", blues.size() + 1, perColor).isNotNull();
                    assertThat(m.getStringProperty("color")).as(((TextMessage) m).getText()).isEqualTo("blue");
                    assertThat(m.getIntProperty("JMSXDeliveryCount")).as("passed over, not delivered").isEqualTo(1);
                    blues.add(((TextMessage) m).getText());
                }
                assertThat(consumer.receive(500)).isNull();
            }
            assertThat(reds).hasSize(perColor);
        }
    }

    @Test
    @Order(5)
    void transactedSessionConsumesTransformsAndProducesWhereLeadersAndCoordinatorsDiffer() throws Exception {
        try (Connection c = factory().createConnection()) {
            Queue in = null;
            int sent = 0;
            while (sent == 0 || endOffsets("ctp-in").containsValue(0L)) {
                assertThat(sent).as("messages on every partition").isLessThan(1000);
                try (Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE)) {
                    in = s.createQueue("ctp-in");
                    MessageProducer producer = s.createProducer(in);
                    for (int i = 0; i < 10; i++, sent++) {
                        producer.send(s.createTextMessage("m-" + sent));
                    }
                }
            }
            // three leaders: the transaction's coordinator leads at most one of the partitions consumed
            assertThat(new HashSet<>(leaders("ctp-in").values())).hasSize(3);
            c.start();
            Set<String> transformed = new HashSet<>();
            try (Session tx = c.createSession(true, Session.SESSION_TRANSACTED)) {
                MessageConsumer consumer = tx.createConsumer(in);
                MessageProducer producer = tx.createProducer(tx.createQueue("ctp-out"));
                Message first = consumer.receive(30_000);
                assertThat(first).isNotNull();
                producer.send(tx.createTextMessage("rolled-back"));
                tx.rollback(); // nothing of it is visible; its message comes again
                for (int received = 0; received < sent; received++) {
                    Message m = consumer.receive(30_000);
                    assertThat(m).as("input %d of %d", received + 1, sent).isNotNull();
                    String text = ((TextMessage) m).getText();
                    assertThat(transformed.add("t-" + text)).as("%s consumed again after its commit", text).isTrue();
                    producer.send(tx.createTextMessage("t-" + text));
                    tx.commit(); // holds the input at its partition's leader inside the transaction
                }
                assertThat(consumer.receive(500)).as("every input accepted by its commit").isNull();
            }
            Set<String> output = new HashSet<>();
            try (Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE)) {
                MessageConsumer consumer = s.createConsumer(s.createQueue("ctp-out"));
                while (output.size() < sent) {
                    Message m = consumer.receive(30_000);
                    assertThat(m).as("output %d of %d", output.size() + 1, sent).isNotNull();
                    assertThat(output.add(((TextMessage) m).getText())).isTrue();
                }
                assertThat(consumer.receive(500)).isNull();
            }
            assertThat(output).isEqualTo(transformed).hasSize(sent);
        }
    }

    @Test
    @Order(6)
    void consumptionGoesOnWhenAPartitionLeaderStops() throws Exception {
        try (Connection c = factory().createConnection()) {
            Queue queue;
            try (Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE)) {
                queue = s.createQueue("routed-failover");
            }
            send(c, queue, "f-", MESSAGES);
            Map<Integer, Integer> before = leaders("routed-failover");
            assertThat(new HashSet<>(before.values())).hasSize(3);
            c.start();
            Map<String, Integer> seen = new HashMap<>();
            List<String> unflaggedAgain = new ArrayList<>();
            try (Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE)) {
                MessageConsumer consumer = s.createConsumer(queue);
                boolean stopped = false;
                while (!seen.keySet().containsAll(expected("f-", MESSAGES))) {
                    if (!stopped && seen.size() >= MESSAGES / 3) {
                        cluster.stop(before.get(0)); // the leader of partition 0, with a controlled shutdown
                        stopped = true;
                    }
                    int received = seen.values().stream().mapToInt(Integer::intValue).sum();
                    Set<String> missing = new HashSet<>(expected("f-", MESSAGES));
                    missing.removeAll(seen.keySet());
                    assertThat(received).as("deliveries so far (%d distinct, %d again unflagged, missing e.g. %s)",
                            seen.size(), unflaggedAgain.size(), missing.stream().limit(5).toList())
                            .isLessThan(3 * MESSAGES);
                    Message m = consumer.receive(60_000);
                    assertThat(m).as("after %d distinct messages, %d again unflagged, missing e.g. %s", seen.size(),
                            unflaggedAgain.size(), missing.stream().limit(5).toList()).isNotNull();
                    String body = ((TextMessage) m).getText();
                    if (seen.merge(body, 1, Integer::sum) > 1 && !m.getJMSRedelivered()) {
                        unflaggedAgain.add(body);
                    }
                }
                assertThat(stopped).isTrue();
            }
            assertThat(seen.keySet()).isEqualTo(expected("f-", MESSAGES));
            assertThat(unflaggedAgain).as("messages delivered again without JMSRedelivered").isEmpty();
            assertThat(leaders("routed-failover").get(0)).isNotEqualTo(before.get(0));
        }
    }
}
