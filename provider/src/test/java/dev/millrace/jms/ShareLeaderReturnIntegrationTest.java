package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
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
 * A queue partition's leadership leaves a broker while it lives, the broker then goes down and comes back, and the
 * leadership returns to it: the queue consumer, which kept its connections to that broker while it fetched nothing
 * there, must notice that they closed and connect again. (It used to reuse the dead connections when the partition
 * came back and never fetched it again: the chaos suite's queue consumers stalled that way, one partition each, after
 * preferred-leader elections moved leaderships back to restarted brokers.)
 */
@Timeout(300)
class ShareLeaderReturnIntegrationTest {

    private static final String QUEUE = "leader-return";

    @TempDir
    Path dir;

    @Test
    void consumerFetchesAgainFromALeaderThatCameBackAfterItsConnectionsClosed() throws Exception {
        try (TestCluster cluster = TestCluster.start(dir, 3);
             Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap()))) {
            MillraceConnectionFactory factory = cluster.factory();
            factory.setDestinationPartitions(1);
            factory.setDestinationReplicationFactor((short) 3);
            try (Connection c = factory.createConnection()) {
                Session session = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
                Queue queue = session.createQueue(QUEUE);
                MessageProducer producer = session.createProducer(queue);
                c.start();
                MessageConsumer consumer = session.createConsumer(queue);
                TopicPartition tp = new TopicPartition(QUEUE, 0);

                producer.send(session.createTextMessage("first"));
                assertReceived(consumer, "first");

                TopicPartitionInfo info = partition(admin, tp);
                int first = info.leader().id();
                int other = info.replicas().stream().mapToInt(Node::id).filter(id -> id != first).findFirst()
                        .orElseThrow();
                moveLeadership(admin, tp, other);
                producer.send(session.createTextMessage("moved"));
                assertReceived(consumer, "moved"); // now fetched from the other broker

                cluster.stop(first); // the consumer's idle connections to it close
                cluster.restart(first);
                await(admin, tp, p -> p.isr().stream().anyMatch(n -> n.id() == first), "node " + first + " in sync");
                moveLeadership(admin, tp, first);

                producer.send(session.createTextMessage("back"));
                assertReceived(consumer, "back");
            }
        }
    }

    private static void assertReceived(MessageConsumer consumer, String text) throws Exception {
        Message m = consumer.receive(60_000);
        assertThat(m).as("the message '%s' within 60 s", text).isNotNull();
        assertThat(((TextMessage) m).getText()).isEqualTo(text);
    }

    /** Makes {@code leader} the partition's preferred replica and elects it; waits until it leads. */
    static void moveLeadership(Admin admin, TopicPartition tp, int leader) throws Exception {
        List<Integer> order = new ArrayList<>();
        order.add(leader);
        partition(admin, tp).replicas().stream().map(Node::id).filter(id -> id != leader).forEach(order::add);
        admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(order)))).all()
                .get(30, TimeUnit.SECONDS);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (partition(admin, tp).leader().id() != leader) {
            assertThat(System.nanoTime() - deadline).as("node %d leads %s within 60 s", leader, tp).isNegative();
            try {
                admin.electLeaders(ElectionType.PREFERRED, Set.of(tp)).all().get(30, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                // not yet eligible (ISR catching up) or already elected: look again
            }
        }
    }

    private static void await(Admin admin, TopicPartition tp, Predicate<TopicPartitionInfo> condition, String what)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.test(partition(admin, tp))) {
            assertThat(System.nanoTime() - deadline).as("%s within 60 s", what).isNegative();
        }
    }

    static TopicPartitionInfo partition(Admin admin, TopicPartition tp) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(tp.topic())).allTopicNames().get(30, TimeUnit.SECONDS)
                .get(tp.topic());
        return d.partitions().get(tp.partition());
    }
}
