package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.Connection;
import jakarta.jms.IllegalStateException;
import jakarta.jms.JMSContext;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.TransactionRolledBackException;

/**
 * Transacted sessions on broker transactions: sends and queue acknowledgements take effect together at commit and
 * not at all at rollback; a broker-aborted transaction fails its commit; a consume-transform-produce loop with
 * random rollbacks, after a transacting consumer process was killed mid-transaction, produces each output once.
 */
@Timeout(120)
class TransactedSessionIntegrationTest {

    @TempDir
    static Path dataDir;
    static TestBroker broker;

    @BeforeAll
    static void startBroker() throws Exception {
        broker = TestBroker.start(dataDir, Map.of("group.share.session.timeout.ms", "2000",
                "group.share.heartbeat.interval.ms", "300", "group.share.record.lock.duration.ms", "4000",
                "transaction.abort.timed.out.transaction.cleanup.interval.ms", "200"));
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

    @Test
    void sendsAppearOnlyAtCommitAndNotAtAllAfterRollback() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session tx = c.createSession(true, Session.SESSION_TRANSACTED);
            assertThat(tx.getTransacted()).isTrue();
            assertThat(tx.getAcknowledgeMode()).isEqualTo(Session.SESSION_TRANSACTED);
            Queue q = tx.createQueue("tx.sends");
            Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
            MessageConsumer reader = plain.createConsumer(q);
            c.start();

            send(tx, q, "rolled-back-1", "rolled-back-2");
            tx.rollback();
            send(tx, q, "a", "b");
            assertThat(reader.receive(1000)).as("nothing before commit").isNull();
            tx.commit();
            assertThat(((TextMessage) reader.receive(10_000)).getText()).isEqualTo("a");
            assertThat(((TextMessage) reader.receive(10_000)).getText()).isEqualTo("b");
            assertThat(reader.receive(1000)).as("rolled-back sends never appear").isNull();
        }
    }

    @Test
    void consumedQueueMessagesAreRedeliveredAfterRollbackAndGoneAfterCommit() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue in = plain.createQueue("tx.in");
            Queue out = plain.createQueue("tx.out");
            send(plain, in, "x");
            Session tx = c.createSession(Session.SESSION_TRANSACTED);
            MessageConsumer consumer = tx.createConsumer(in);
            MessageProducer producer = tx.createProducer(out);
            c.start();

            Message first = consumer.receive(10_000);
            assertThat(first.getJMSRedelivered()).isFalse();
            producer.send(tx.createTextMessage("from-x"));
            tx.rollback();
            Message again = consumer.receive(10_000);
            assertThat(((TextMessage) again).getText()).isEqualTo("x");
            assertThat(again.getJMSRedelivered()).isTrue();
            assertThat(again.getIntProperty("JMSXDeliveryCount")).isEqualTo(2);
            producer.send(tx.createTextMessage("from-x"));
            tx.commit();

            MessageConsumer outputs = plain.createConsumer(out);
            assertThat(((TextMessage) outputs.receive(10_000)).getText()).isEqualTo("from-x");
            assertThat(outputs.receive(1000)).isNull();
            consumer.close();
            MessageConsumer other = plain.createConsumer(in);
            assertThat(other.receive(1000)).as("the committed input is gone").isNull();
        }
    }

    @Test
    void aDurableSubscriptionsOffsetsAreCommittedByTheTransaction() throws Exception {
        MillraceConnectionFactory f = broker.factory();
        f.setClientId("tx-durable");
        try (Connection c = f.createConnection(); Admin admin = Admin.create(Map.of("bootstrap.servers",
                broker.bootstrap()))) {
            Session tx = c.createSession(Session.SESSION_TRANSACTED);
            jakarta.jms.Topic topic = tx.createTopic("tx.durable");
            MessageConsumer subscriber = tx.createDurableConsumer(topic, "sub");
            MessageProducer out = tx.createProducer(tx.createQueue("tx.durable.out"));
            Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
            plain.createProducer(topic).send(plain.createTextMessage("t1"));
            c.start();

            assertThat(((TextMessage) subscriber.receive(10_000)).getText()).isEqualTo("t1");
            out.send(tx.createTextMessage("from-t1"));
            tx.rollback();
            Message again = subscriber.receive(10_000);
            assertThat(((TextMessage) again).getText()).isEqualTo("t1");
            assertThat(again.getJMSRedelivered()).isTrue();
            out.send(tx.createTextMessage("from-t1"));
            tx.commit();

            var offsets = admin.listConsumerGroupOffsets("millrace.sub.tx-durable.sub").partitionsToOffsetAndMetadata()
                    .get();
            assertThat(offsets.values()).extracting(o -> o.offset()).containsExactly(1L);
        }
    }

    @Test
    void commitAndRollbackNeedATransactedSessionAndRecoverNeedsAnotherOne() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
            assertThatThrownBy(plain::commit).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("not transacted");
            assertThatThrownBy(plain::rollback).isInstanceOf(IllegalStateException.class);
            Session tx = c.createSession(Session.SESSION_TRANSACTED);
            assertThatThrownBy(tx::recover).isInstanceOf(IllegalStateException.class);
        }
        try (JMSContext context = broker.factory().createContext(JMSContext.SESSION_TRANSACTED)) {
            Queue q = context.createQueue("tx.context");
            context.createProducer().send(q, "ctx");
            context.commit();
            try (JMSContext reader = context.createContext(JMSContext.AUTO_ACKNOWLEDGE)) {
                assertThat(reader.createConsumer(q).receiveBody(String.class, 10_000)).isEqualTo("ctx");
            }
        }
    }

    @Test
    void aTransactionTheBrokerAbortedFailsItsCommit() throws Exception {
        MillraceConnectionFactory f = broker.factory();
        f.setTransactionTimeoutMs(500);
        try (Connection c = f.createConnection(); Admin admin = Admin.create(Map.of("bootstrap.servers",
                broker.bootstrap()))) {
            Session tx = c.createSession(Session.SESSION_TRANSACTED);
            Queue q = tx.createQueue("tx.timeout");
            send(tx, q, "too-late");
            tx.commit(); // the producer exists now; the next transaction times out
            send(tx, q, "never");
            // wait until the broker has aborted it: no transaction of this connection is Ongoing any more
            while (ongoing(admin)) {
                Thread.onSpinWait();
            }
            assertThatThrownBy(tx::commit).isInstanceOf(TransactionRolledBackException.class);
            // the session goes on with a new transaction
            send(tx, q, "after");
            tx.commit();
            Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
            MessageConsumer reader = plain.createConsumer(q);
            c.start();
            assertThat(((TextMessage) reader.receive(10_000)).getText()).isEqualTo("too-late");
            assertThat(((TextMessage) reader.receive(10_000)).getText()).isEqualTo("after");
            assertThat(reader.receive(1000)).isNull();
        }
    }

    private static boolean ongoing(Admin admin) throws Exception {
        for (TransactionListing t : admin.listTransactions().all().get()) {
            if (t.state() == TransactionState.ONGOING) {
                return true;
            }
        }
        return false;
    }

    @Test
    void transformLoopWithRandomRollbacksAndAKilledConsumerProducesEachOutputOnce() throws Exception {
        int total = 200;
        Set<String> inputs = new HashSet<>();
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            MessageProducer producer = s.createProducer(s.createQueue("tx.loop.in"));
            for (int i = 0; i < total; i++) {
                inputs.add("m" + i);
                producer.send(s.createTextMessage("m" + i));
            }
        }
        try (ChildClient.Handle child = ChildClient.Handle.start("transform", broker.bootstrap(), "tx.loop.in",
                "tx.loop.out", "20", "5")) {
            List<String> lines = child.awaitReady();
            assertThat(lines).filteredOn("committed"::equals).hasSize(4);
            assertThat(lines).contains("mid-transaction");
            child.kill(); // one received input and one sent output in an open transaction
        }

        Random random = new Random(42);
        int rollbacks = 0;
        MillraceConnectionFactory f = broker.factory();
        f.setPrefetch(10);
        try (Connection c = f.createConnection()) {
            Session tx = c.createSession(Session.SESSION_TRANSACTED);
            MessageConsumer consumer = tx.createConsumer(tx.createQueue("tx.loop.in"));
            MessageProducer producer = tx.createProducer(tx.createQueue("tx.loop.out"));
            c.start();
            int committed = 20;
            List<String> batch = new ArrayList<>();
            int target = 1 + random.nextInt(7);
            while (committed < total) {
                // a transaction ends at its size, or when no more input comes for a while: a consumer holds at
                // most `prefetch` unsettled messages, so a transaction spanning fetches could wait for good
                TextMessage m = (TextMessage) consumer.receive(1000); // the child's records come back in ~2-4 s
                if (m != null) {
                    producer.send(tx.createTextMessage("out-" + m.getText()));
                    batch.add(m.getText());
                }
                if (!batch.isEmpty() && (m == null || batch.size() == target)) {
                    if (random.nextInt(4) == 0) {
                        tx.rollback();
                        rollbacks++;
                    } else {
                        tx.commit();
                        committed += batch.size();
                    }
                    batch.clear();
                    target = 1 + random.nextInt(7);
                }
            }
        }
        assertThat(rollbacks).isPositive();

        List<String> outputs = new ArrayList<>();
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            MessageConsumer reader = s.createConsumer(s.createQueue("tx.loop.out"));
            c.start();
            Message m;
            while ((m = reader.receive(outputs.size() < total ? 30_000 : 1_000)) != null) {
                outputs.add(((TextMessage) m).getText());
            }
        }
        List<String> expected = inputs.stream().map(i -> "out-" + i).toList();
        assertThat(outputs).containsExactlyInAnyOrderElementsOf(expected);
    }
}
