package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.Connection;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;

/**
 * Connections of one factory share their network threads, admin client, producers and monitor
 * ({@code SharedClients}, {@code ClientEventLoops}): a connection with a session, a queue consumer and a producer that
 * has sent costs no thread of its own. Counts threads, not time.
 */
@Timeout(120)
class ClientFootprintIntegrationTest {

    private static final int CONNECTIONS = 20;

    @TempDir
    static Path dataDir;
    private static TestBroker broker;

    @BeforeAll
    static void startBroker() throws Exception {
        broker = TestBroker.start(dataDir);
    }

    @AfterAll
    static void stopBroker() throws Exception {
        broker.close();
    }

    @Test
    void shouldAddWellUnderHalfAThreadPerConnectionWithASessionAConsumerAndAProducer() throws Exception {
        MillraceConnectionFactory factory = broker.factory();
        List<Connection> connections = new ArrayList<>();
        try {
            open(factory, connections, "footprint.warm"); // the JVM-wide and per-settings parts exist from here on
            int before = Thread.activeCount();
            for (int i = 0; i < CONNECTIONS; i++) {
                open(factory, connections, "footprint." + i);
            }
            int added = Thread.activeCount() - before;
            assertThat(added).as("threads added by %d connections", CONNECTIONS).isLessThanOrEqualTo(CONNECTIONS / 2);
        } finally {
            for (Connection c : connections) {
                c.close();
            }
        }
    }

    private static void open(MillraceConnectionFactory factory, List<Connection> connections, String queueName)
            throws Exception {
        Connection c = factory.createConnection();
        connections.add(c);
        Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
        Queue queue = s.createQueue(queueName);
        MessageConsumer consumer = s.createConsumer(queue);
        MessageProducer producer = s.createProducer(queue);
        producer.send(s.createTextMessage("x"));
        c.start();
        assertThat(consumer.receive(10_000)).isNotNull();
    }
}
