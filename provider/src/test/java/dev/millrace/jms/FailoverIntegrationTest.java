package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.jms.wire.failover.Outage;
import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.TransactionRolledBackException;

/**
 * A connection across a failover: one broker stopped and started again on the same port and data directory while the
 * connection is open (what a client sees of a broker crash and restart; a cluster whose leaders and coordinators move
 * is not tested here, see provider/README.md "Failover"). Sends, receives, acknowledgements and commits ride it out
 * within {@code failoverTimeoutMs}; the ExceptionListener hears only of outages longer than that.
 */
@Timeout(180)
class FailoverIntegrationTest {

    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
    }

    private TestBroker broker(Path dataDir) throws Exception {
        TestBroker broker = TestBroker.restartable(dataDir);
        toClose.add(broker);
        return broker;
    }

    private Connection connect(MillraceConnectionFactory factory) throws JMSException {
        Connection c = factory.createConnection();
        toClose.add(c);
        return c;
    }

    /**
     * Connections whose requests time out after {@value #REQUEST_TIMEOUT_MS} ms but that ride out outages of up to a
     * minute: each outage below lasts longer than the request timeout ({@link #awaitOutageLongerThanARequest}), so a
     * call that merely waited for one answer would fail.
     */
    private static MillraceConnectionFactory factory(TestBroker broker) {
        MillraceConnectionFactory f = broker.factory();
        f.setRequestTimeoutMs(REQUEST_TIMEOUT_MS);
        f.setFailoverTimeoutMs(60_000);
        f.setConnectionCheckIntervalMs(100);
        return f;
    }

    private static final int REQUEST_TIMEOUT_MS = 2000;

    /**
     * Waits, with the broker down, until {@code c}'s liveness checks failed twice more: each waits for an answer for
     * the request timeout ({@code SharedClients.checkTimeoutMs}), so the outage has then lasted longer than one.
     */
    private static void awaitOutageLongerThanARequest(Connection c) throws InterruptedException {
        Outage outage = ((MillraceConnection) c).outage();
        long failed = outage.checks(true);
        assertThat(outage.awaitChecks(true, failed + 2, 60_000)).as("liveness checks fail while it is down")
                .isTrue();
    }

    /** Runs {@code action} on a thread of its own (a call that is to block during the outage). */
    private static <T> CompletableFuture<T> during(CountDownLatch started, JmsCall<T> action) {
        CompletableFuture<T> result = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            started.countDown();
            try {
                result.complete(action.call());
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        }, "failover-test-call");
        t.setDaemon(true);
        t.start();
        return result;
    }

    @FunctionalInterface
    private interface JmsCall<T> {
        T call() throws Exception;
    }

    @Test
    void shouldReturnAPersistentSendMadeWhileTheBrokerIsDownOnceItIsBackAndDeliverIt(@TempDir Path dataDir)
            throws Exception {
        TestBroker broker = broker(dataDir);
        Connection c = connect(factory(broker));
        Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
        Queue queue = s.createQueue("failover.send");
        MessageProducer producer = s.createProducer(queue);
        producer.send(s.createTextMessage("before"));

        broker.stop();
        CountDownLatch sending = new CountDownLatch(1);
        CompletableFuture<Void> sent = during(sending, () -> {
            producer.send(s.createTextMessage("during"));
            return null;
        });
        assertThat(sending.await(10, TimeUnit.SECONDS)).isTrue();
        awaitOutageLongerThanARequest(c);
        assertThat(sent).as("the send waits while the broker is down").isNotDone();
        broker.restart();
        sent.get(60, TimeUnit.SECONDS); // returned without an exception: the broker has it

        try (Connection reader = factory(broker).createConnection()) {
            Session rs = reader.createSession(Session.AUTO_ACKNOWLEDGE);
            MessageConsumer consumer = rs.createConsumer(rs.createQueue("failover.send"));
            reader.start();
            List<String> bodies = new ArrayList<>();
            for (Message m; bodies.size() < 2 && (m = consumer.receive(30_000)) != null; ) {
                bodies.add(((TextMessage) m).getText());
            }
            assertThat(bodies).containsExactly("before", "during");
        }
    }

    @Test
    void shouldKeepReceivingThroughARestartWithNoMessageLostAndEveryRepeatFlagged(@TempDir Path dataDir)
            throws Exception {
        TestBroker broker = broker(dataDir);
        MillraceConnectionFactory factory = factory(broker);
        Connection c = connect(factory);
        Session s = c.createSession(Session.CLIENT_ACKNOWLEDGE);
        Queue queue = s.createQueue("failover.receive");
        MessageProducer producer = s.createProducer(queue);
        for (int i = 0; i < 10; i++) {
            producer.send(s.createTextMessage("m" + i));
        }
        MessageConsumer consumer = s.createConsumer(queue);
        c.start();
        List<Message> received = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Message m = consumer.receive(30_000);
            assertThat(m).isNotNull();
            received.add(m); // held, not acknowledged, when the broker goes away
        }

        broker.stop();
        CountDownLatch receiving = new CountDownLatch(1);
        CompletableFuture<Message> duringOutage = during(receiving, () -> consumer.receive(60_000));
        awaitOutageLongerThanARequest(c);
        broker.restart();
        Message first = duringOutage.get(90, TimeUnit.SECONDS);
        assertThat(first).as("a receive waiting through the outage gets a message once the broker is back")
                .isNotNull();
        received.add(first);
        producer.send(s.createTextMessage("m10")); // after the restart, through the same connection
        // m0..m2 were held unacknowledged when the broker went away: they must come again (flagged)
        for (Message m; (distinctBodies(received) < 11 || !cameTwice(received, "m0", "m1", "m2"))
                && (m = consumer.receive(30_000)) != null; ) {
            received.add(m);
        }
        assertThat(distinctBodies(received)).as("no message lost: " + bodies(received)).isEqualTo(11);
        assertThat(cameTwice(received, "m0", "m1", "m2")).as("held messages come again: " + bodies(received))
                .isTrue();
        assertEveryRepeatFlagged(received);
        received.get(received.size() - 1).acknowledge();

        consumer.close();
        MessageConsumer again = s.createConsumer(queue);
        producer.send(s.createTextMessage("last"));
        Message next = again.receive(30_000);
        assertThat(((TextMessage) next).getText()).as("everything acknowledged is gone").isEqualTo("last");
        next.acknowledge();
    }

    @Test
    void shouldKeepAMessageListenerGoingThroughARestart(@TempDir Path dataDir) throws Exception {
        TestBroker broker = broker(dataDir);
        Connection c = connect(factory(broker));
        Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
        Queue queue = s.createQueue("failover.listener");
        LinkedBlockingQueue<Message> heard = new LinkedBlockingQueue<>();
        s.createConsumer(queue).setMessageListener(heard::add);
        c.start();
        Session ps = c.createSession(Session.AUTO_ACKNOWLEDGE);
        MessageProducer producer = ps.createProducer(queue);
        for (int i = 0; i < 5; i++) {
            producer.send(ps.createTextMessage("m" + i));
        }
        List<Message> received = new ArrayList<>();
        while (distinctBodies(received) < 5) {
            received.add(take(heard));
        }

        broker.stop();
        broker.restart();
        for (int i = 5; i < 10; i++) {
            producer.send(ps.createTextMessage("m" + i));
        }
        while (distinctBodies(received) < 10) {
            received.add(take(heard));
        }
        assertEveryRepeatFlagged(received);
    }

    @Test
    void shouldNotCallTheExceptionListenerForAnOutageShorterThanTheWindowButOnceForALongerOne(@TempDir Path dataDir)
            throws Exception {
        TestBroker broker = broker(dataDir);
        MillraceConnection c = (MillraceConnection) connect(factory(broker));
        AtomicInteger calls = new AtomicInteger();
        c.setExceptionListener(e -> calls.incrementAndGet());
        long failedBefore = c.outage().checks(true);
        broker.stop();
        assertThat(c.outage().awaitChecks(true, failedBefore + 2, 60_000)).as("checks fail while it is down")
                .isTrue();
        broker.restart();
        long succeeded = c.outage().checks(false);
        assertThat(c.outage().awaitChecks(false, succeeded + 1, 60_000)).isTrue();
        assertThat(calls).as("an outage within failoverTimeoutMs is ridden out").hasValue(0);

        MillraceConnectionFactory shortWindow = factory(broker);
        shortWindow.setFailoverTimeoutMs(1500);
        MillraceConnection brief = (MillraceConnection) connect(shortWindow);
        CountDownLatch heard = new CountDownLatch(1);
        AtomicInteger briefCalls = new AtomicInteger();
        brief.setExceptionListener(e -> {
            briefCalls.incrementAndGet();
            assertThat(e.getMessage()).contains("failoverTimeoutMs");
            heard.countDown();
        });
        broker.stop();
        assertThat(heard.await(60, TimeUnit.SECONDS)).as("an outage longer than the window is reported").isTrue();
        long failed = brief.outage().checks(true);
        assertThat(brief.outage().awaitChecks(true, failed + 3, 60_000)).isTrue();
        assertThat(briefCalls).as("once per outage").hasValue(1);
        assertThat(calls).as("the long window covers this outage so far").hasValue(0);
        broker.restart();
    }

    @Test
    void shouldCommitATransactionAcrossARestartOrThrowRolledBackWithNothingApplied(@TempDir Path dataDir)
            throws Exception {
        TestBroker broker = broker(dataDir);
        MillraceConnectionFactory factory = factory(broker);
        factory.setTransactionTimeoutMs(10_000);
        Connection c = connect(factory);
        Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
        Queue in = plain.createQueue("failover.tx.in");
        Queue out = plain.createQueue("failover.tx.out");
        plain.createProducer(in).send(plain.createTextMessage("order"));
        Session tx = c.createSession(Session.SESSION_TRANSACTED);
        MessageConsumer consumer = tx.createConsumer(in);
        c.start();
        Message order = consumer.receive(30_000);
        assertThat(order).isNotNull();
        tx.createProducer(out).send(tx.createTextMessage("shipped"));

        broker.stop();
        CountDownLatch committing = new CountDownLatch(1);
        CompletableFuture<Void> commit = during(committing, () -> {
            tx.commit();
            return null;
        });
        assertThat(committing.await(10, TimeUnit.SECONDS)).isTrue();
        awaitOutageLongerThanARequest(c);
        broker.restart();
        boolean committed;
        try {
            commit.get(90, TimeUnit.SECONDS);
            committed = true;
        } catch (java.util.concurrent.ExecutionException e) {
            assertThat(e.getCause()).as("a commit that fails across a failover rolls back")
                    .isInstanceOf(TransactionRolledBackException.class);
            committed = false;
        }
        System.out.println("transaction across the restart: " + (committed ? "committed" : "rolled back"));
        consumer.close();
        tx.close();

        // what the transaction sent is visible exactly when it committed
        plain.createProducer(out).send(plain.createTextMessage("end"));
        MessageConsumer outReader = plain.createConsumer(out);
        List<String> outBodies = new ArrayList<>();
        for (Message m; (m = outReader.receive(60_000)) != null; ) {
            outBodies.add(((TextMessage) m).getText());
            if ("end".equals(outBodies.get(outBodies.size() - 1))) {
                break;
            }
        }
        assertThat(outBodies).isEqualTo(committed ? List.of("shipped", "end") : List.of("end"));

        // what it consumed is gone exactly when it committed; a rolled back one comes again, flagged
        plain.createProducer(in).send(plain.createTextMessage("end"));
        MessageConsumer inReader = plain.createConsumer(in);
        List<Message> inMessages = new ArrayList<>();
        while (inMessages.size() < (committed ? 1 : 2)) {
            Message m = inReader.receive(60_000);
            assertThat(m).as("received so far: " + inMessages).isNotNull();
            inMessages.add(m);
        }
        Map<String, Message> byBody = new HashMap<>();
        for (Message m : inMessages) {
            byBody.put(((TextMessage) m).getText(), m);
        }
        if (committed) {
            assertThat(byBody).containsOnlyKeys("end");
        } else {
            assertThat(byBody).containsOnlyKeys("order", "end");
            assertThat(byBody.get("order").getJMSRedelivered()).isTrue();
        }
    }

    @Test
    void shouldKeepTheTemporaryDestinationsOfAConnectionAcrossARestart(@TempDir Path dataDir) throws Exception {
        TestBroker broker = broker(dataDir);
        Connection c = connect(factory(broker));
        Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
        jakarta.jms.TemporaryQueue temporary = s.createTemporaryQueue();
        MessageConsumer consumer = s.createConsumer(temporary);
        c.start();

        broker.stop();
        awaitOutageLongerThanARequest(c);
        broker.restart();
        // right after the restart the broker lists no member of the owner group (it keeps members in memory) until
        // the owner's membership has joined again: a sweep then must not take the owner for a crashed client (it
        // looks again a failover window later). Whether this sweep falls into that moment is up to the scheduler.
        try (Connection other = factory(broker).createConnection()) {
            Session os = other.createSession(Session.AUTO_ACKNOWLEDGE);
            os.createTemporaryQueue().delete(); // sweeps the temporary destinations of owners without members
        }
        s.createProducer(temporary).send(s.createTextMessage("still there"));
        Message m = consumer.receive(30_000);
        assertThat(m).as("the temporary queue outlived the restart").isNotNull();
        assertThat(((TextMessage) m).getText()).isEqualTo("still there");
    }

    @Test
    void shouldCommitAConsumeOnlyTransactionAcrossARestartOrThrowRolledBackAndDeliverAgain(@TempDir Path dataDir)
            throws Exception {
        TestBroker broker = broker(dataDir);
        Connection c = connect(factory(broker));
        Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
        Queue in = plain.createQueue("failover.tx.consume");
        plain.createProducer(in).send(plain.createTextMessage("order"));
        Session tx = c.createSession(Session.SESSION_TRANSACTED);
        MessageConsumer consumer = tx.createConsumer(in);
        c.start();
        assertThat(consumer.receive(30_000)).isNotNull();

        broker.stop();
        CountDownLatch committing = new CountDownLatch(1);
        CompletableFuture<Void> commit = during(committing, () -> {
            tx.commit();
            return null;
        });
        assertThat(committing.await(10, TimeUnit.SECONDS)).isTrue();
        awaitOutageLongerThanARequest(c);
        broker.restart();
        boolean committed;
        try {
            commit.get(90, TimeUnit.SECONDS);
            committed = true;
        } catch (java.util.concurrent.ExecutionException e) {
            assertThat(e.getCause()).as("a commit that fails across a failover rolls back")
                    .isInstanceOf(TransactionRolledBackException.class);
            committed = false;
        }
        System.out.println("consume-only transaction across the restart: " + (committed ? "committed" : "rolled back"));
        Message again = consumer.receive(committed ? 1000 : 60_000);
        if (committed) {
            assertThat(again).as("a committed consumption is final").isNull();
        } else {
            assertThat(again).as("a rolled back consumption comes again").isNotNull();
            assertThat(again.getJMSRedelivered()).isTrue();
            tx.commit();
        }
    }

    @Test
    void shouldKeepADurableSubscriptionsPositionAcrossARestart(@TempDir Path dataDir) throws Exception {
        TestBroker broker = broker(dataDir);
        MillraceConnectionFactory factory = factory(broker);
        factory.setClientId("failover-durable");
        Connection c = connect(factory);
        Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
        jakarta.jms.Topic topic = s.createTopic("failover.prices");
        MessageConsumer subscriber = s.createDurableConsumer(topic, "sub");
        c.start();
        MessageProducer producer = s.createProducer(topic);
        producer.send(s.createTextMessage("p1"));
        assertThat(((TextMessage) subscriber.receive(30_000)).getText()).isEqualTo("p1");

        broker.stop();
        awaitOutageLongerThanARequest(c);
        broker.restart();
        producer.send(s.createTextMessage("p2"));
        Message next = subscriber.receive(60_000);
        assertThat(next).isNotNull();
        assertThat(((TextMessage) next).getText()).as("the same subscriber goes on after the restart").isEqualTo("p2");
        subscriber.close();
        producer.send(s.createTextMessage("p3"));
        MessageConsumer resumed = s.createDurableConsumer(topic, "sub");
        Message after = resumed.receive(60_000);
        assertThat(((TextMessage) after).getText()).as("resumed where it was: nothing acknowledged comes again")
                .isEqualTo("p3");
        resumed.close();
        s.unsubscribe("sub");
    }

    private static Message take(LinkedBlockingQueue<Message> heard) throws InterruptedException {
        Message m = heard.poll(60, TimeUnit.SECONDS);
        if (m == null) {
            fail("no message within 60 s");
        }
        return m;
    }

    private static boolean cameTwice(List<Message> received, String... bodies) throws JMSException {
        List<String> all = bodies(received);
        for (String b : bodies) {
            if (java.util.Collections.frequency(all, b) < 2) {
                return false;
            }
        }
        return true;
    }

    private static List<String> bodies(List<Message> messages) throws JMSException {
        List<String> out = new ArrayList<>();
        for (Message m : messages) {
            out.add(((TextMessage) m).getText() + "#" + m.getIntProperty("JMSXDeliveryCount"));
        }
        return out.stream().map(b -> b.substring(0, b.indexOf('#'))).toList();
    }

    private static long distinctBodies(List<Message> messages) throws JMSException {
        java.util.Set<String> bodies = new java.util.HashSet<>();
        for (Message m : messages) {
            bodies.add(((TextMessage) m).getText());
        }
        return bodies.size();
    }

    /**
     * Every message that came more than once came flagged the later times (JMSRedelivered, a higher
     * JMSXDeliveryCount), and a first arrival is flagged only if it is a redelivery.
     */
    private static void assertEveryRepeatFlagged(List<Message> received) throws JMSException {
        Map<String, Integer> lastCount = new HashMap<>();
        for (Message m : received) {
            String body = ((TextMessage) m).getText();
            int count = m.getIntProperty("JMSXDeliveryCount");
            assertThat(m.getJMSRedelivered()).as(body + " flagged iff its delivery count > 1")
                    .isEqualTo(count > 1);
            Integer before = lastCount.put(body, count);
            if (before != null) {
                assertThat(count).as(body + " again: its delivery count went up").isGreaterThan(before);
            }
        }
    }
}
