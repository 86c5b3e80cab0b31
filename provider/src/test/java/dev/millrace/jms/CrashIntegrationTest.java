package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

/**
 * Clients killed with SIGKILL in a JVM of their own ({@link ChildClient}): a consumer that crashes mid-way loses
 * nothing and its unacknowledged messages come back flagged; a crashed client's temporary destinations are removed
 * once its share session times out. The broker times sessions out after 2 s, so the test does not wait 45 s.
 */
@Timeout(120)
class CrashIntegrationTest {

    @TempDir
    static Path dataDir;
    static TestBroker broker;

    @BeforeAll
    static void startBroker() throws Exception {
        broker = TestBroker.start(dataDir, Map.of("group.share.session.timeout.ms", "2000",
                "group.share.heartbeat.interval.ms", "300", "group.share.record.lock.duration.ms", "5000"));
    }

    @AfterAll
    static void stopBroker() throws Exception {
        broker.close();
    }

    @Test
    void shouldLoseNothingAndFlagRedeliveriesWhenAConsumerProcessIsKilledMidway() throws Exception {
        List<String> sent = new ArrayList<>();
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            MessageProducer producer = s.createProducer(s.createQueue("q.killed-consumer"));
            for (int i = 0; i < 30; i++) {
                sent.add("m" + i);
                producer.send(s.createTextMessage("m" + i));
            }
        }
        List<String> childReceived = new ArrayList<>();
        List<String> childAcknowledged = new ArrayList<>();
        try (ChildClient.Handle child = ChildClient.Handle.start("consume", broker.bootstrap(), "q.killed-consumer",
                "10", "4")) {
            for (String line : child.awaitReady()) {
                if (line.equals("acknowledged")) {
                    childAcknowledged.addAll(childReceived);
                } else {
                    childReceived.add(line.substring("received ".length()));
                }
            }
            child.kill();
        }
        assertThat(childReceived).hasSize(10);
        assertThat(childAcknowledged).hasSize(4);
        List<String> unacknowledged = childReceived.subList(4, 10);

        List<String> rest = new ArrayList<>();
        List<String> flagged = new ArrayList<>();
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            MessageConsumer consumer = s.createConsumer(s.createQueue("q.killed-consumer"));
            c.start();
            while (rest.size() < sent.size() - childAcknowledged.size()) {
                Message m = consumer.receive(20_000); // the broker frees the dead consumer's records in ~2-5 s
                assertThat(m).as("message %d of the rest", rest.size() + 1).isNotNull();
                String text = ((TextMessage) m).getText();
                rest.add(text);
                if (m.getJMSRedelivered()) {
                    assertThat(m.getIntProperty("JMSXDeliveryCount")).isGreaterThanOrEqualTo(2);
                    flagged.add(text);
                }
            }
            assertThat(consumer.receive(1000)).as("nothing more").isNull();
        }
        List<String> all = new ArrayList<>(childAcknowledged);
        all.addAll(rest);
        assertThat(all).containsExactlyInAnyOrderElementsOf(sent);
        assertThat(flagged).containsAll(unacknowledged).doesNotContainAnyElementsOf(childAcknowledged);
    }

    @Test
    void shouldRemoveTheTemporaryDestinationsOfAKilledClientOnceItsSessionTimesOut() throws Exception {
        List<String> temporaries = new ArrayList<>();
        try (ChildClient.Handle child = ChildClient.Handle.start("temporary", broker.bootstrap())) {
            for (String line : child.awaitReady()) {
                temporaries.add(line.substring("temporary ".length()));
            }
            assertThat(temporaries).hasSize(2);
            try (Admin admin = admin()) {
                assertThat(topics(admin)).containsAll(temporaries);
                child.kill();
                MillraceConnectionFactory f = broker.factory();
                f.setFailoverTimeoutMs(1000); // an owner without members is removed on a sweep 1 s after the first
                try (Connection survivor = f.createConnection()) {
                    Session s = survivor.createSession(Session.AUTO_ACKNOWLEDGE);
                    Queue own = s.createTemporaryQueue(); // sweeps; but the child's session has not timed out yet
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                    while (topics(admin).stream().anyMatch(temporaries::contains) && System.nanoTime() < deadline) {
                        s.createTemporaryQueue().delete(); // each creation sweeps again
                    }
                    assertThat(topics(admin)).doesNotContainAnyElementsOf(temporaries).contains(own.getQueueName());
                }
            }
        }
    }

    private static Admin admin() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
        return Admin.create(p);
    }

    private static Set<String> topics(Admin admin) throws Exception {
        return admin.listTopics().names().get(10, TimeUnit.SECONDS);
    }
}
