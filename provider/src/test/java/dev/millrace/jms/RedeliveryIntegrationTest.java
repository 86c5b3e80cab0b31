package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

/**
 * The redelivery policy of a connection factory and its per-destination overrides, enforced by the broker: a message
 * that is never acknowledged is delivered exactly {@code maxDeliveries} times (JMSXDeliveryCount 1..N), each
 * redelivery not before the redelivery delay, and then lands in the dead-letter queue with its origin, count and
 * reason; an expired message goes to the expiry queue and is never delivered from its destination.
 */
@Timeout(60)
class RedeliveryIntegrationTest {

    @TempDir
    static Path dataDir;
    static TestBroker broker;

    @BeforeAll
    static void startBroker() throws Exception {
        broker = TestBroker.start(dataDir);
    }

    @AfterAll
    static void stopBroker() throws Exception {
        broker.close();
    }

    private static String text(Message m) throws JMSException {
        assertThat(m).isNotNull();
        return ((TextMessage) m).getText();
    }

    private static void assertDeadLettered(Connection c, String queue, int deliveries) throws JMSException {
        Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
        MessageConsumer dlq = s.createConsumer(s.createQueue(queue + ".DLQ"));
        Message dead = dlq.receive(10_000);
        assertThat(text(dead)).isEqualTo("poison");
        assertThat(dead.getStringProperty("JMS_Millrace_DLQOriginalTopic")).isEqualTo(queue);
        assertThat(dead.getIntProperty("JMS_Millrace_DLQOriginalPartition")).isZero();
        assertThat(dead.getLongProperty("JMS_Millrace_DLQOriginalOffset")).isZero();
        assertThat(dead.getIntProperty("JMS_Millrace_DLQDeliveryCount")).isEqualTo(deliveries);
        assertThat(dead.getStringProperty("JMS_Millrace_DLQReason")).isEqualTo("delivery-count-limit");
        assertThat(dead.getStringProperty("JMS_Millrace_DLQGroup")).isEqualTo("millrace.queue." + queue);
        assertThat(dead.getStringProperty("app")).as("the message's own properties are kept").isEqualTo("kept");
        assertThat(dlq.receive(300)).isNull();
    }

    @Test
    void shouldCreateADestinationAProducerFirstUsesWithItsPolicysQueuesAndTheSettingsNamingThem() throws Exception {
        MillraceConnectionFactory factory = broker.factory();
        factory.setExpiryQueuePattern("{destination}.expired");
        try (Connection c = factory.createConnection();
             Admin admin = Admin.create(Map.of("bootstrap.servers", broker.bootstrap()))) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            s.createProducer(s.createQueue("q.made-by-producer")).send(s.createTextMessage("x"));
            s.createProducer(s.createTopic("t.made-by-producer")).send(s.createTextMessage("x"));

            Set<String> names = admin.listTopics().names().get(10, TimeUnit.SECONDS);
            assertThat(names).as("created with the destinations, before any consumer")
                    .contains("q.made-by-producer.DLQ", "q.made-by-producer.expired", "t.made-by-producer.expired")
                    .doesNotContain("t.made-by-producer.DLQ");
            ConfigResource queue = new ConfigResource(ConfigResource.Type.TOPIC, "q.made-by-producer");
            ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, "t.made-by-producer");
            Map<ConfigResource, Config> configs = admin.describeConfigs(List.of(queue, topic)).all()
                    .get(10, TimeUnit.SECONDS);
            assertThat(configs.get(queue).get("millrace.share.dlq.topic").value()).isEqualTo("q.made-by-producer.DLQ");
            assertThat(configs.get(queue).get("millrace.expiry.topic").value())
                    .isEqualTo("q.made-by-producer.expired");
            assertThat(configs.get(topic).get("millrace.share.dlq.topic").value()).isEmpty();
            assertThat(configs.get(topic).get("millrace.expiry.topic").value())
                    .isEqualTo("t.made-by-producer.expired");

            // a consumer of another policy still puts its own in place
            MillraceConnectionFactory other = broker.factory();
            other.setDeadLetterQueuePattern("{destination}.dead");
            try (Connection c2 = other.createConnection()) {
                Session s2 = c2.createSession(Session.AUTO_ACKNOWLEDGE);
                s2.createConsumer(s2.createQueue("q.made-by-producer")).close();
            }
            assertThat(admin.describeConfigs(List.of(queue)).all().get(10, TimeUnit.SECONDS).get(queue)
                    .get("millrace.share.dlq.topic").value()).isEqualTo("q.made-by-producer.dead");
            assertThat(admin.listTopics().names().get(10, TimeUnit.SECONDS)).contains("q.made-by-producer.dead");
        }
    }

    @Test
    void shouldDeadLetterAMessageRecoveredMaxDeliveriesTimesEachRedeliveryNotBeforeTheDelay() throws Exception {
        MillraceConnectionFactory factory = broker.factory();
        factory.setDestinationPolicies("q.poison-recover:maxDeliveries=3,redeliveryDelayMs=300,"
                + "maxRedeliveryDelayMs=300");
        try (Connection c = factory.createConnection()) {
            Session s = c.createSession(Session.CLIENT_ACKNOWLEDGE);
            Queue q = s.createQueue("q.poison-recover");
            MessageConsumer consumer = s.createConsumer(q);
            c.start();
            Message sent = s.createTextMessage("poison");
            sent.setStringProperty("app", "kept");
            s.createProducer(q).send(sent);

            List<Integer> counts = new ArrayList<>();
            long releasedAt = 0;
            for (int i = 0; i < 3; i++) {
                Message m = consumer.receive(10_000);
                long at = System.currentTimeMillis();
                assertThat(text(m)).isEqualTo("poison");
                if (i > 0) {
                    assertThat(at).as("redelivery %d not before the 300 ms redelivery delay", i)
                            .isGreaterThanOrEqualTo(releasedAt + 300);
                    assertThat(m.getJMSRedelivered()).isTrue();
                }
                counts.add(m.getIntProperty("JMSXDeliveryCount"));
                releasedAt = System.currentTimeMillis();
                s.recover();
            }
            assertThat(counts).containsExactly(1, 2, 3);
            assertThat(consumer.receive(1000)).as("no fourth delivery").isNull();
            assertDeadLettered(c, "q.poison-recover", 3);
        }
    }

    @Test
    void shouldDeadLetterAMessageWhoseListenerAlwaysThrowsAfterThePrefixPolicysDeliveries() throws Exception {
        MillraceConnectionFactory factory = broker.factory();
        factory.setMaxDeliveries(7);
        factory.setDestinationPolicies("q.listener*:maxDeliveries=2;q.listener-other:maxDeliveries=5");
        try (Connection c = factory.createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue q = s.createQueue("q.listener-poison");
            BlockingQueue<Integer> counts = new LinkedBlockingQueue<>();
            s.createConsumer(q).setMessageListener(m -> {
                try {
                    counts.add(m.getIntProperty("JMSXDeliveryCount"));
                } catch (JMSException e) {
                    counts.add(-1);
                }
                throw new IllegalStateException("poison");
            });
            c.start();
            Session sender = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Message sent = sender.createTextMessage("poison");
            sent.setStringProperty("app", "kept");
            sender.createProducer(q).send(sent);

            assertThat(counts.poll(10, TimeUnit.SECONDS)).isEqualTo(1);
            assertThat(counts.poll(10, TimeUnit.SECONDS)).isEqualTo(2);
            assertDeadLettered(c, "q.listener-poison", 2);
            assertThat(counts).as("no third delivery").isEmpty();
        }
    }

    @Test
    void shouldMoveAnExpiredMessageToTheExpiryQueueAndNeverDeliverIt() throws Exception {
        MillraceConnectionFactory factory = broker.factory();
        factory.setExpiryQueuePattern("{destination}.expired");
        try (Connection c = factory.createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue q = s.createQueue("q.ttl");
            MessageProducer producer = s.createProducer(q);
            TextMessage expiring = s.createTextMessage("stale");
            producer.send(expiring, DeliveryMode.PERSISTENT, 4, 1);
            producer.send(s.createTextMessage("fresh"));
            long expiration = expiring.getJMSExpiration();

            MessageConsumer consumer = s.createConsumer(q);
            c.start();
            assertThat(text(consumer.receive(10_000))).as("the expired message is skipped").isEqualTo("fresh");
            assertThat(consumer.receive(300)).isNull();

            MessageConsumer expired = s.createConsumer(s.createQueue("q.ttl.expired"));
            Message m = expired.receive(10_000);
            assertThat(text(m)).isEqualTo("stale");
            assertThat(m.getJMSExpiration()).as("the copy does not expire again").isZero();
            assertThat(m.getStringProperty("JMS_Millrace_ExpiryOriginalTopic")).isEqualTo("q.ttl");
            assertThat(m.getLongProperty("JMS_Millrace_ExpiryOriginalOffset")).isZero();
            assertThat(m.getLongProperty("JMS_Millrace_ExpiryTime")).isGreaterThanOrEqualTo(expiration);
            assertThat(expired.receive(300)).isNull();
        }
    }
}
