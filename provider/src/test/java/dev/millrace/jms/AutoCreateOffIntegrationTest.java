package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.Connection;
import jakarta.jms.InvalidDestinationException;
import jakarta.jms.InvalidDestinationRuntimeException;
import jakarta.jms.JMSContext;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

/**
 * A broker with {@code auto.create.topics.enable=false}: destinations are not created on first use, and using an
 * unknown one fails with InvalidDestinationException naming it and the setting; existing ones work.
 */
@Timeout(60)
class AutoCreateOffIntegrationTest {

    @TempDir
    static Path dataDir;
    static TestBroker broker;

    @BeforeAll
    static void startBroker() throws Exception {
        broker = TestBroker.start(dataDir, Map.of("auto.create.topics.enable", "false"));
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", broker.bootstrap()))) {
            admin.createTopics(List.of(new NewTopic("existing", 1, (short) 1))).all().get();
        }
    }

    @AfterAll
    static void stopBroker() throws Exception {
        broker.close();
    }

    @Test
    void unknownDestinationsFailNamingThemAndExistingOnesWork() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue missing = s.createQueue("missing.queue");
            assertThatThrownBy(() -> s.createProducer(missing).send(s.createTextMessage("x")))
                    .isInstanceOf(InvalidDestinationException.class)
                    .hasMessageContaining("missing.queue").hasMessageContaining("auto.create.topics.enable");
            assertThatThrownBy(() -> s.createConsumer(s.createTopic("missing.topic")))
                    .isInstanceOf(InvalidDestinationException.class).hasMessageContaining("missing.topic");
            assertThatThrownBy(() -> s.createConsumer(missing))
                    .isInstanceOf(InvalidDestinationException.class).hasMessageContaining("missing.queue");

            Queue existing = s.createQueue("existing");
            s.createProducer(existing).send(s.createTextMessage("hello"));
            MessageConsumer consumer = s.createConsumer(existing);
            c.start();
            assertThat(((TextMessage) consumer.receive(10_000)).getText()).isEqualTo("hello");
        }
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", broker.bootstrap()))) {
            assertThat(admin.listTopics().names().get()).doesNotContain("missing.queue", "missing.topic");
        }
    }

    @Test
    void aQueueConsumerThatCannotBeSetUpLeavesNoShareConsumerBehind() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Set<Thread> before = Thread.getAllStackTraces().keySet();
            for (int i = 0; i < 3; i++) {
                Queue missing = s.createQueue("missing.setup." + i);
                // its share consumer is constructed while the destination is looked up, then discarded
                assertThatThrownBy(() -> s.createConsumer(missing))
                        .isInstanceOf(InvalidDestinationException.class).hasMessageContaining("missing.setup." + i);
            }
            // the setup threads close what they built before they end; then the consumers' network threads end
            for (String name : List.of("millrace-share-setup-", "consumer_background_thread")) {
                for (Thread t : Thread.getAllStackTraces().keySet()) {
                    if (!before.contains(t) && t.getName().startsWith(name)) {
                        t.join(20_000);
                        assertThat(t.isAlive()).as(t.getName() + " still running").isFalse();
                    }
                }
            }
        }
    }

    @Test
    void simplifiedApiThrowsTheRuntimeVariant() {
        try (JMSContext context = broker.factory().createContext()) {
            assertThatThrownBy(() -> context.createProducer().send(context.createQueue("missing.ctx"), "x"))
                    .isInstanceOf(InvalidDestinationRuntimeException.class).hasMessageContaining("missing.ctx");
        }
    }

    @Test
    void factorySettingAlsoForbidsIt() throws Exception {
        MillraceConnectionFactory f = broker.factory();
        f.setAutoCreateDestinations(false);
        try (Connection c = f.createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            assertThatThrownBy(() -> s.createProducer(s.createTopic("missing.factory")).send(s.createMessage()))
                    .isInstanceOf(InvalidDestinationException.class).hasMessageContaining("missing.factory")
                    .hasMessageContaining("autoCreateDestinations");
        }
    }
}
