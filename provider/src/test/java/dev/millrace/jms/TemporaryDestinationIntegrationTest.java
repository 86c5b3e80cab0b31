package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.Connection;
import jakarta.jms.IllegalStateException;
import jakarta.jms.InvalidDestinationException;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Session;
import jakarta.jms.TemporaryQueue;
import jakarta.jms.TemporaryTopic;
import jakarta.jms.TextMessage;

/**
 * Temporary queues and topics: owned by their connection, gone when it closes. Their topics are checked with a plain
 * Kafka Admin client, as an operator would.
 */
@Timeout(60)
class TemporaryDestinationIntegrationTest {

    @TempDir
    static Path dataDir;
    static TestBroker broker;
    static Admin admin;

    @BeforeAll
    static void startBroker() throws Exception {
        broker = TestBroker.start(dataDir);
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
        admin = Admin.create(p);
    }

    @AfterAll
    static void stopBroker() throws Exception {
        admin.close();
        broker.close();
    }

    private static Set<String> topics() throws Exception {
        return admin.listTopics().names().get(10, TimeUnit.SECONDS);
    }

    @Test
    void shouldDeleteTemporaryQueuesAndTopicsWhenTheirConnectionCloses() throws Exception {
        String queueName;
        String topicName;
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            TemporaryQueue tq = s.createTemporaryQueue();
            TemporaryTopic tt = s.createTemporaryTopic();
            s.createProducer(tq).send(s.createTextMessage("left behind"));
            queueName = tq.getQueueName();
            topicName = tt.getTopicName();
            assertThat(topics()).contains(queueName, topicName);
        }
        assertThat(topics()).doesNotContain(queueName, topicName);
    }

    @Test
    void shouldPublishToATemporaryTopicThatOnlyItsConnectionMaySubscribeTo() throws Exception {
        try (Connection owner = broker.factory().createConnection();
             Connection other = broker.factory().createConnection()) {
            Session s = owner.createSession(Session.AUTO_ACKNOWLEDGE);
            TemporaryTopic tt = s.createTemporaryTopic();
            MessageConsumer subscriber = s.createConsumer(tt);
            owner.start();
            Session os = other.createSession(Session.AUTO_ACKNOWLEDGE);
            assertThatThrownBy(() -> os.createConsumer(tt)).isInstanceOf(InvalidDestinationException.class)
                    .hasMessageContaining(tt.getTopicName());
            os.createProducer(tt).send(os.createTextMessage("to the owner"));
            TextMessage m = (TextMessage) subscriber.receive(10_000);
            assertThat(m.getText()).isEqualTo("to the owner");
            assertThat(m.getJMSDestination()).isEqualTo(tt);
            assertThatThrownBy(tt::delete).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("consumers");
            subscriber.close();
            tt.delete();
            assertThat(topics()).doesNotContain(tt.getTopicName());
            assertThatThrownBy(tt::delete).isInstanceOf(IllegalStateException.class);
        }
    }
}
