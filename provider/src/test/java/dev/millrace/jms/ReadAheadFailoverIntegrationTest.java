package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

/**
 * A queue consumer reads ahead of its application (its prefetch window), and the queue partition's leadership moves
 * twice while it holds what it read: the messages it read ahead lost their locks with each old leader, and the broker
 * counts a lost lock as a delivery. They were never delivered to the application, so they must not come with a raised
 * JMSXDeliveryCount, nor reach the dead-letter queue at {@code maxDeliveries} (2 here); the one message the
 * application did receive (and never acknowledged) comes again as its second delivery. (A record the consumer hands
 * out from its window before it learns that its leader moved was received, so it may come again, flagged, as its
 * next delivery; the test allows that race, whichever way it goes.) The chaos suite's consume-transform-produce flow
 * lost 22,276 inputs to the dead-letter queue this way: a slow transactional consumer holding its window across
 * failovers.
 */
@Timeout(300)
class ReadAheadFailoverIntegrationTest {

    private static final String QUEUE = "read-ahead-failover";
    private static final int MESSAGES = 20;

    @TempDir
    Path dir;

    @Test
    void messagesReadAheadAcrossLeaderMovesAreNeitherCountedNorDeadLettered() throws Exception {
        try (TestCluster cluster = TestCluster.start(dir, 3);
             Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap()))) {
            MillraceConnectionFactory factory = cluster.factory();
            factory.setDestinationPartitions(1);
            factory.setDestinationReplicationFactor((short) 3);
            factory.setMaxDeliveries(2);
            factory.setPrefetchIdleReleaseMs(600_000); // keeps what it read ahead while the test moves leaders
            try (Connection c = factory.createConnection()) {
                Session session = c.createSession(false, Session.CLIENT_ACKNOWLEDGE);
                Queue queue = session.createQueue(QUEUE);
                MessageProducer producer = session.createProducer(queue);
                for (int i = 0; i < MESSAGES; i++) {
                    producer.send(session.createTextMessage("m-" + i));
                }
                c.start();
                MessageConsumer consumer = session.createConsumer(queue);
                TopicPartition tp = new TopicPartition(QUEUE, 0);

                // m-0 received and never acknowledged; m-1.. read ahead with it (the window is 1,000)
                assertDelivery(consumer.receive(60_000), "m-0", 1);
                int first = ShareLeaderReturnIntegrationTest.partition(admin, tp).leader().id();
                int second = moveLeadership(admin, tp, Set.of(first));
                moveLeadership(admin, tp, Set.of(first, second));

                // the consumer may hand out a record it read ahead before it learns that the record's leader moved:
                // that one was received, so it may come again, flagged, as a later delivery
                Map<String, List<Integer>> counts = new TreeMap<>();
                Message m = consumer.receive(60_000);
                while (m != null) {
                    String text = ((TextMessage) m).getText();
                    List<Integer> seen = counts.computeIfAbsent(text, k -> new ArrayList<>());
                    int count = m.getIntProperty("JMSXDeliveryCount");
                    assertThat(m.getJMSRedelivered()).as("JMSRedelivered of %s at delivery %d", text, count)
                            .isEqualTo(count > 1);
                    if (!seen.isEmpty()) {
                        assertThat(count).as("%s again after %s", text, seen).isGreaterThan(seen.get(seen.size() - 1));
                    }
                    seen.add(count);
                    m = consumer.receive(counts.size() < MESSAGES ? 60_000 : 1_000);
                }
                assertThat(counts).as("every message received").hasSize(MESSAGES);
                assertThat(counts.get("m-0")).as("m-0 was received before: its next delivery is its second")
                        .startsWith(2);
                for (int i = 1; i < MESSAGES; i++) {
                    assertThat(counts.get("m-" + i)).as("m-%d was never received before the moves", i).startsWith(1);
                }

                // only a message received twice may be dead-lettered (at maxDeliveries = 2)
                Session other = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
                MessageConsumer dlq = other.createConsumer(other.createQueue(QUEUE + ".DLQ"));
                for (Message dead = dlq.receive(1_000); dead != null; dead = dlq.receive(1_000)) {
                    String text = ((TextMessage) dead).getText();
                    int before = "m-0".equals(text) ? 1 : 0;
                    assertThat(before + counts.get(text).size()).as("deliveries of dead-lettered %s", text)
                            .isGreaterThanOrEqualTo(2);
                }
            }
        }
    }

    private static void assertDelivery(Message m, String text, int deliveryCount) throws JMSException {
        assertThat(m).as("%s within 60 s", text).isNotNull();
        assertThat(((TextMessage) m).getText()).isEqualTo(text);
        assertThat(m.getIntProperty("JMSXDeliveryCount")).as("JMSXDeliveryCount of %s", text)
                .isEqualTo(deliveryCount);
        assertThat(m.getJMSRedelivered()).as("JMSRedelivered of %s", text).isEqualTo(deliveryCount > 1);
    }

    /** Elects an in-sync replica of {@code tp} not in {@code not} its leader; waits until it leads; returns its id. */
    private static int moveLeadership(Admin admin, TopicPartition tp, Set<Integer> not) throws Exception {
        int next = ShareLeaderReturnIntegrationTest.partition(admin, tp).isr().stream().mapToInt(Node::id)
                .filter(id -> !not.contains(id)).findFirst().orElseThrow();
        ShareLeaderReturnIntegrationTest.moveLeadership(admin, tp, next);
        return next;
    }
}
