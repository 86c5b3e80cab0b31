package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.Connection;
import jakarta.jms.Destination;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;

/**
 * The queue consumer's window (ShareFetcher): JMS lets a client receive any number of messages before it acknowledges
 * them (JMS 3.1 section 6.2.10, CLIENT_ACKNOWLEDGE), and messages must reach a consumer that waits while another
 * holds messages it read ahead (section 4.1.2 "queue semantics": each message to one consumer, none starved by
 * read-ahead).
 */
@Timeout(120)
class QueueConsumerWindowIntegrationTest {

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
    void shouldReceiveTenThousandMessagesBeforeOneClientAcknowledge() throws Exception {
        MillraceConnectionFactory factory = broker.factory();
        factory.setPrefetch(100); // far below 10,000: the window must not stop an unacknowledging consumer
        try (Connection c = factory.createConnection()) {
            Session session = c.createSession(Session.CLIENT_ACKNOWLEDGE);
            jakarta.jms.Queue queue = session.createQueue("window.client-ack");
            send(session, queue, 10_000);
            MessageConsumer consumer = session.createConsumer(queue);
            c.start();
            Message last = null;
            Set<String> bodies = new HashSet<>();
            for (int i = 0; i < 10_000; i++) {
                last = consumer.receive(10_000);
                assertThat(last).as("message %d of 10,000, none acknowledged yet", i).isNotNull();
                bodies.add(((TextMessage) last).getText());
            }
            assertThat(bodies).hasSize(10_000);
            last.acknowledge();
            consumer.close();
            MessageConsumer again = session.createConsumer(queue);
            assertThat(again.receive(500)).as("all 10,000 acknowledged by the one acknowledge()").isNull();
        }
    }

    /**
     * blockOnAcknowledge=false: acknowledge() does not wait for the broker, but its acceptances still reach the broker
     * before the consumer's close releases what it holds, so nothing acknowledged comes back.
     */
    @Test
    void shouldNotRedeliverWhatANonBlockingAcknowledgeCoveredAfterClose() throws Exception {
        MillraceConnectionFactory factory = broker.factory();
        factory.setBlockOnAcknowledge(false);
        try (Connection c = factory.createConnection()) {
            Session session = c.createSession(Session.CLIENT_ACKNOWLEDGE);
            jakarta.jms.Queue queue = session.createQueue("window.non-blocking-ack");
            send(session, queue, 50);
            MessageConsumer consumer = session.createConsumer(queue);
            c.start();
            Message last = null;
            for (int i = 0; i < 30; i++) {
                last = consumer.receive(10_000);
                assertThat(last).isNotNull();
            }
            last.acknowledge();
            consumer.close();
            MessageConsumer again = session.createConsumer(queue);
            Set<String> rest = new HashSet<>();
            // the new consumer joins the group first: its first message may take a while on a loaded machine
            Message m = again.receive(10_000);
            while (m != null) {
                rest.add(((TextMessage) m).getText());
                m.acknowledge();
                m = again.receive(1000);
            }
            assertThat(rest).as("the 20 never acknowledged, none of the 30 acknowledged").hasSize(20)
                    .doesNotContain("m0", "m29");
        }
    }

    /**
     * A consumer with records still buffered fetches again only once half its window is free, not whenever a fetch's
     * answer leaves room for a few more: a ShareFetch of one record costs a round trip and a state save on the
     * broker like one of hundreds (MDB sessions, taking one message per transaction, made about a fetch per message).
     * Each message here is acknowledged on its own, a round trip, so that records are taken while fetches are on their
     * way: 2,000 messages through a window of 100 took 40 fetches (three runs), and 59 and 102 (two runs) when every
     * answer with room left sent the next fetch.
     */
    @Test
    void shouldNotRefillTheWindowRecordByRecord() throws Exception {
        MillraceConnectionFactory factory = broker.factory();
        factory.setPrefetch(100);
        try (Connection c = factory.createConnection()) {
            Session session = c.createSession(Session.CLIENT_ACKNOWLEDGE);
            jakarta.jms.Queue queue = session.createQueue("window.refill");
            send(session, queue, 2_000);
            MessageConsumer consumer = session.createConsumer(queue);
            c.start();
            long fetchesBefore = broker.requestCount(org.apache.kafka.common.protocol.ApiKeys.SHARE_FETCH);
            for (int i = 0; i < 2_000; i++) {
                Message m = consumer.receive(10_000);
                assertThat(m).as("message %d of 2,000", i).isNotNull();
                m.acknowledge();
            }
            long fetches = broker.requestCount(org.apache.kafka.common.protocol.ApiKeys.SHARE_FETCH) - fetchesBefore;
            assertThat(fetches).as("ShareFetch requests for 2,000 messages through a window of 100").isLessThan(50);
        }
    }

    @Test
    void shouldDeliverToAWaitingQueueConsumerWhileAnotherHoldsReadAheadMessages() throws Exception {
        assertNoStarvation(false, 2);
    }

    @Test
    void shouldDeliverToTenQueueConsumersWhileOthersHoldUnacknowledgedMessages() throws Exception {
        assertNoStarvation(false, 10);
    }

    @Test
    void shouldDeliverToAWaitingSharedSubscriberWhileAnotherHoldsReadAheadMessages() throws Exception {
        assertNoStarvation(true, 2);
    }

    @Test
    void shouldDeliverToTenSharedSubscribersWhileOthersHoldUnacknowledgedMessages() throws Exception {
        assertNoStarvation(true, 10);
    }

    /**
     * {@code n} CLIENT_ACKNOWLEDGE consumers in turn: each receives one message and then holds it unacknowledged
     * (and whatever it read ahead) while the next waits; every one of them must get a message, and a message read
     * ahead and given back is not marked redelivered.
     */
    private static void assertNoStarvation(boolean sharedSubscription, int n) throws Exception {
        String name = (sharedSubscription ? "window.shared." : "window.queue.") + n;
        try (Connection c = broker.factory().createConnection()) {
            c.start();
            List<Session> sessions = new ArrayList<>();
            List<MessageConsumer> consumers = new ArrayList<>();
            Destination destination = null;
            for (int i = 0; i < n; i++) {
                Session s = c.createSession(Session.CLIENT_ACKNOWLEDGE);
                if (destination == null) {
                    destination = sharedSubscription ? s.createTopic(name) : s.createQueue(name);
                }
                sessions.add(s);
                consumers.add(sharedSubscription ? s.createSharedConsumer((Topic) destination, "sub" + n)
                        : s.createConsumer(destination));
            }
            send(sessions.get(0), destination, n);
            Set<String> received = new HashSet<>();
            for (int i = 0; i < n; i++) {
                Message m = consumers.get(i).receive(10_000);
                assertThat(m).as("consumer %d of %d gets a message while the others hold theirs", i, n).isNotNull();
                assertThat(m.getJMSRedelivered()).as("a message given back unread is not redelivered").isFalse();
                assertThat(m.getIntProperty("JMSXDeliveryCount")).isEqualTo(1);
                received.add(((TextMessage) m).getText());
            }
            assertThat(received).as("each message to one consumer").hasSize(n);
        }
    }

    private static void send(Session session, Destination destination, int count) throws Exception {
        MessageProducer producer = session.createProducer(destination);
        for (int i = 0; i < count; i++) {
            producer.send(session.createTextMessage("m" + i), jakarta.jms.DeliveryMode.PERSISTENT, 4, 0);
        }
        producer.close();
    }
}
