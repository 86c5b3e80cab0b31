package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.QueueBrowser;
import jakarta.jms.Session;
import jakarta.jms.TemporaryQueue;
import jakarta.jms.TextMessage;

/** Queues against a real broker's share groups: one consumer per message, acknowledgement, release on recover and close. */
@Timeout(60)
class QueueIntegrationTest {

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

    private static void send(Session s, Queue q, String... texts) throws Exception {
        MessageProducer p = s.createProducer(q);
        for (String t : texts) {
            p.send(s.createTextMessage(t));
        }
    }

    private static String text(Message m) throws Exception {
        assertThat(m).isNotNull();
        return ((TextMessage) m).getText();
    }

    @Test
    void shouldDeliverMessagesSentBeforeTheConsumerExistedOnceEach() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue q = s.createQueue("q.basic");
            send(s, q, "a", "b", "c");
            MessageConsumer consumer = s.createConsumer(q);
            c.start();
            List<String> got = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                Message m = consumer.receive(10_000);
                got.add(text(m));
                assertThat(m.getIntProperty("JMSXDeliveryCount")).isEqualTo(1);
                assertThat(m.getJMSRedelivered()).isFalse();
            }
            assertThat(got).containsExactly("a", "b", "c");
            consumer.close();
            MessageConsumer again = s.createConsumer(q);
            assertThat(again.receive(500)).as("accepted messages are gone").isNull();
        }
    }

    /**
     * Whatever the broker's defaults (the test broker's is already earliest, so this reads the group's own settings),
     * a queue's share group starts at the log start and reads committed records only, also when the connection does
     * not manage destination policies and for a temporary queue.
     */
    @Test
    void shouldSetEveryQueueGroupToEarliestAndReadCommitted() throws Exception {
        MillraceConnectionFactory factory = broker.factory();
        factory.setManageDestinationPolicies(false);
        try (Connection c = factory.createConnection();
             org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(
                     java.util.Map.of("bootstrap.servers", broker.bootstrap()))) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            s.createConsumer(s.createQueue("q.settings"));
            TemporaryQueue temporary = s.createTemporaryQueue();
            s.createConsumer(temporary);

            for (String queue : List.of("q.settings", temporary.getQueueName())) {
                org.apache.kafka.common.config.ConfigResource group = new org.apache.kafka.common.config.ConfigResource(
                        org.apache.kafka.common.config.ConfigResource.Type.GROUP, "millrace.queue." + queue);
                org.apache.kafka.clients.admin.Config config = admin.describeConfigs(List.of(group)).all().get()
                        .get(group);
                assertThat(config.get("share.auto.offset.reset").value()).as(queue).isEqualTo("earliest");
                assertThat(config.get("share.isolation.level").value()).as(queue).isEqualTo("read_committed");
            }
        }
    }

    @Test
    void shouldDeliverHigherPriorityFirstAmongReadyMessagesKeepingOrderWithinAPriority() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue q = s.createQueue("q.priority");
            MessageProducer p = s.createProducer(q);
            for (int i = 0; i < 4; i++) {
                p.send(s.createTextMessage("low-" + i), DeliveryMode.PERSISTENT, 1, 0);
            }
            for (int i = 0; i < 4; i++) {
                p.send(s.createTextMessage("high-" + i), DeliveryMode.PERSISTENT, 9, 0);
            }
            p.send(s.createTextMessage("default"));
            MessageConsumer consumer = s.createConsumer(q);
            c.start();
            List<String> got = new ArrayList<>();
            for (int i = 0; i < 9; i++) {
                got.add(text(consumer.receive(10_000)));
            }
            assertThat(got).as("all nine were ready together (sent before the consumer existed)")
                    .containsExactly("high-0", "high-1", "high-2", "high-3", "default", "low-0", "low-1", "low-2",
                            "low-3");
        }
    }

    @Test
    void shouldRedeliverWithBrokerDeliveryCountWhenClientAcknowledgeRecovers() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.CLIENT_ACKNOWLEDGE);
            Queue q = s.createQueue("q.recover");
            send(s, q, "x");
            MessageConsumer consumer = s.createConsumer(q);
            c.start();
            Message first = consumer.receive(10_000);
            assertThat(text(first)).isEqualTo("x");
            s.recover();
            Message second = consumer.receive(10_000);
            assertThat(text(second)).isEqualTo("x");
            assertThat(second.getJMSRedelivered()).isTrue();
            assertThat(second.getIntProperty("JMSXDeliveryCount")).isEqualTo(2);
            second.acknowledge();
            s.recover();
            assertThat(consumer.receive(500)).as("acknowledged").isNull();
        }
    }

    @Test
    void shouldGiveUnacknowledgedMessagesToAnotherConsumerWhenTheFirstCrashesMidway() throws Exception {
        List<String> sent = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            sent.add("m" + i);
        }
        List<String> received = Collections.synchronizedList(new ArrayList<>());
        List<String> redelivered = new ArrayList<>();
        try (Connection producerConnection = broker.factory().createConnection()) {
            Session ps = producerConnection.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue q = ps.createQueue("q.crash");
            send(ps, q, sent.toArray(String[]::new));
            Connection crashing = broker.factory().createConnection();
            Session cs = crashing.createSession(Session.CLIENT_ACKNOWLEDGE);
            MessageConsumer doomed = cs.createConsumer(q);
            crashing.start();
            for (int i = 0; i < 4; i++) {
                Message m = doomed.receive(10_000);
                received.add(text(m));
                if (i == 1) {
                    m.acknowledge(); // the first two are done
                }
            }
            crashing.close(); // two received but unacknowledged: released
            try (Connection survivor = broker.factory().createConnection()) {
                Session ss = survivor.createSession(Session.AUTO_ACKNOWLEDGE);
                MessageConsumer consumer = ss.createConsumer(q);
                survivor.start();
                List<String> rest = new ArrayList<>();
                Message m;
                while ((m = consumer.receive(2000)) != null) {
                    rest.add(text(m));
                    if (m.getJMSRedelivered()) {
                        redelivered.add(text(m));
                    }
                }
                List<String> all = new ArrayList<>(received.subList(0, 2));
                all.addAll(rest);
                assertThat(all).containsExactlyInAnyOrderElementsOf(sent);
                // the two received but unacknowledged are flagged; so are the ones the crashed consumer had
                // prefetched (acquired) without delivering them: the broker counts acquisitions
                assertThat(redelivered).containsAll(received.subList(2, 4)).doesNotContainAnyElementsOf(
                        received.subList(0, 2));
            }
        }
    }

    @Test
    void shouldBrowseWithoutAcquiring() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue q = s.createQueue("q.browse");
            send(s, q, "p", "q");
            QueueBrowser browser = s.createBrowser(q);
            List<String> seen = new ArrayList<>();
            Enumeration<?> e = browser.getEnumeration();
            while (e.hasMoreElements()) {
                seen.add(text((Message) e.nextElement()));
            }
            assertThat(seen).containsExactly("p", "q");
            browser.close();
            MessageConsumer consumer = s.createConsumer(q);
            c.start();
            assertThat(text(consumer.receive(10_000))).isEqualTo("p");
            assertThat(text(consumer.receive(10_000))).isEqualTo("q");
        }
    }

    private static List<String> browse(Session s, Queue q) throws Exception {
        QueueBrowser browser = s.createBrowser(q);
        List<String> seen = new ArrayList<>();
        Enumeration<?> e = browser.getEnumeration();
        while (e.hasMoreElements()) {
            seen.add(text((Message) e.nextElement()));
        }
        browser.close();
        return seen;
    }

    @Test
    void browserShowsOnlyMessagesStillOnTheQueue() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session producer = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue q = producer.createQueue("q.browse.settled");
            send(producer, q, "a", "b", "c", "d");
            Session client = c.createSession(Session.CLIENT_ACKNOWLEDGE);
            MessageConsumer consumer = client.createConsumer(q);
            c.start();
            Message a = consumer.receive(10_000);
            assertThat(text(a)).isEqualTo("a");
            // "a" is delivered but not acknowledged: still on the queue
            assertThat(browse(producer, q)).contains("a", "d");
            a.acknowledge();
            // accepted: gone from the queue although the log still holds it
            List<String> after = browse(producer, q);
            assertThat(after).doesNotContain("a").contains("d");
            consumer.close();
            client.close();
            // the consumer's prefetched, unacknowledged messages went back on close
            assertThat(browse(producer, q)).containsExactly("b", "c", "d");
            MessageConsumer rest = producer.createConsumer(q);
            assertThat(text(rest.receive(10_000))).isEqualTo("b");
            assertThat(text(rest.receive(10_000))).isEqualTo("c");
            assertThat(text(rest.receive(10_000))).isEqualTo("d");
            rest.close();
            assertThat(browse(producer, q)).isEmpty();
        }
    }

    @Test
    void anAutoAcknowledgedMessageLeavesTheQueueWhileTheRestOfItsFetchIsStillUnconsumed() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session producer = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue q = producer.createQueue("q.auto.ack.prompt");
            send(producer, q, "a", "b", "c", "d");
            Session auto = c.createSession(Session.AUTO_ACKNOWLEDGE);
            MessageConsumer consumer = auto.createConsumer(q);
            c.start();
            assertThat(text(consumer.receive(10_000))).isEqualTo("a");
            // b, c and d were fetched with a and are not consumed: a's acceptance must not wait for them
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
            List<String> onQueue = browse(producer, q);
            while (onQueue.contains("a") && System.nanoTime() < deadline) {
                onQueue = browse(producer, q);
            }
            assertThat(onQueue).containsExactly("b", "c", "d");
            consumer.close();
        }
    }

    @Test
    void aBrowserWithASelectorShowsOnlyWhatItSelects() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue q = s.createQueue("q.browse.selector");
            MessageProducer p = s.createProducer(q);
            for (int i = 0; i < 6; i++) {
                TextMessage m = s.createTextMessage("m" + i);
                m.setIntProperty("n", i);
                p.send(m);
            }
            QueueBrowser browser = s.createBrowser(q, "n >= 2 AND n < 5");
            assertThat(browser.getMessageSelector()).isEqualTo("n >= 2 AND n < 5");
            List<String> seen = new ArrayList<>();
            Enumeration<?> e = browser.getEnumeration();
            while (e.hasMoreElements()) {
                seen.add(text((Message) e.nextElement()));
            }
            assertThat(seen).containsExactly("m2", "m3", "m4");
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> s.createBrowser(q, "n >>= 2"))
                    .isInstanceOf(jakarta.jms.InvalidSelectorException.class).hasMessageContaining("position");
            // browsing took nothing: a consumer still gets all six
            MessageConsumer consumer = s.createConsumer(q);
            c.start();
            for (int i = 0; i < 6; i++) {
                assertThat(text(consumer.receive(10_000))).isEqualTo("m" + i);
            }
        }
    }
}
