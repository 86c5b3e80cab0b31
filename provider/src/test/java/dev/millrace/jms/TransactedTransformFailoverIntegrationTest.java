package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
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
 * Consume-transform-produce in a transacted session on a three-broker cluster while the broker leading the input
 * queue's partition stops (a controlled shutdown between two commits): the session carries on at the new leader,
 * every input is transformed, and none twice.
 */
@Timeout(240)
class TransactedTransformFailoverIntegrationTest {

    private static final int MESSAGES = 150;

    @TempDir
    Path dir;

    @Test
    void transformGoesOnWhenTheInputPartitionsLeaderStops() throws Exception {
        try (TestCluster cluster = TestCluster.start(dir, 3);
             Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap()))) {
            MillraceConnectionFactory factory = cluster.factory();
            factory.setDestinationPartitions(1);
            factory.setDestinationReplicationFactor((short) 3);
            try (Connection c = factory.createConnection()) {
                Queue in;
                try (Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE)) {
                    in = s.createQueue("xf-in");
                    MessageProducer producer = s.createProducer(in);
                    for (int i = 0; i < MESSAGES; i++) {
                        producer.send(s.createTextMessage("m-" + i));
                    }
                }
                int inputLeader = admin.describeTopics(List.of("xf-in")).allTopicNames().get(30, TimeUnit.SECONDS)
                        .get("xf-in").partitions().get(0).leader().id();
                c.start();
                Set<String> transformed = new HashSet<>();
                try (Session tx = c.createSession(true, Session.SESSION_TRANSACTED)) {
                    MessageConsumer consumer = tx.createConsumer(in);
                    MessageProducer producer = tx.createProducer(tx.createQueue("xf-out"));
                    boolean stopped = false;
                    while (transformed.size() < MESSAGES) {
                        if (!stopped && transformed.size() == MESSAGES / 3) {
                            cluster.stop(inputLeader);
                            stopped = true;
                        }
                        Message m = consumer.receive(60_000);
                        assertThat(m).as("input after %d transformed (leader %d stopped: %s)", transformed.size(),
                                inputLeader, stopped).isNotNull();
                        String text = ((TextMessage) m).getText();
                        producer.send(tx.createTextMessage("t-" + text));
                        tx.commit();
                        assertThat(transformed.add(text)).as("%s transformed twice", text).isTrue();
                    }
                }
            }
        }
    }
}
