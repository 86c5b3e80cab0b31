package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import javax.sql.XAConnection;
import javax.transaction.xa.XAException;
import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;

import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import com.arjuna.ats.arjuna.common.arjPropertyManager;

import jakarta.jms.Connection;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.XASession;
import jakarta.transaction.RollbackException;
import jakarta.transaction.Transaction;
import jakarta.transaction.TransactionManager;

/**
 * A real transaction manager (Narayana JTA, standalone) runs global transactions over a Millrace XA session and an
 * H2 database enlisted through its own XADataSource: each transaction consumes a message from one queue, sends one
 * to another and inserts a row. Commit makes all three happen, rollback none, and a third resource voting no at
 * prepare (after Millrace and H2 prepared) none either.
 */
@Timeout(120)
class XaNarayanaIntegrationTest {

    @TempDir
    static Path dataDir;
    @TempDir
    static Path tmDir;
    static TestBroker broker;
    static JdbcDataSource database;
    static TransactionManager tm;

    @BeforeAll
    static void start() throws Exception {
        broker = TestBroker.start(dataDir, Map.of("group.share.record.lock.duration.ms", "30000"));
        arjPropertyManager.getObjectStoreEnvironmentBean().setObjectStoreDir(tmDir.resolve("store").toString());
        arjPropertyManager.getCoreEnvironmentBean().setNodeIdentifier("millrace-xa-test");
        tm = com.arjuna.ats.jta.TransactionManager.transactionManager();
        database = new JdbcDataSource();
        database.setURL("jdbc:h2:" + tmDir.resolve("db") + ";DB_CLOSE_DELAY=-1");
        try (java.sql.Connection c = database.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE transfers (id VARCHAR(100) PRIMARY KEY)");
        }
    }

    @AfterAll
    static void stop() throws Exception {
        broker.close();
    }

    /** Consumes one message from {@code in}, sends "out-" + its text to {@code out}, inserts a row: one transaction. */
    private static String transfer(XASession xs, MessageConsumer consumer, Queue out, XAConnection db,
                                   XAResource extra) throws Exception {
        // the JDBC handle first: H2 resets auto-commit when a handle is opened, enlisting (start) turns it off
        java.sql.Connection jdbc = db.getConnection();
        tm.begin();
        Transaction tx = tm.getTransaction();
        tx.enlistResource(xs.getXAResource());
        tx.enlistResource(db.getXAResource());
        if (extra != null) {
            tx.enlistResource(extra);
        }
        Message m = consumer.receive(10_000);
        assertThat(m).as("a message to transfer").isNotNull();
        String text = ((TextMessage) m).getText();
        xs.createProducer(out).send(xs.createTextMessage("out-" + text));
        try (Statement s = jdbc.createStatement()) {
            s.executeUpdate("INSERT INTO transfers VALUES ('" + text + "')");
        }
        tx.delistResource(xs.getXAResource(), XAResource.TMSUCCESS);
        tx.delistResource(db.getXAResource(), XAResource.TMSUCCESS);
        return text;
    }

    private static List<String> rows() throws Exception {
        List<String> out = new ArrayList<>();
        try (java.sql.Connection c = database.getConnection(); Statement s = c.createStatement();
             ResultSet r = s.executeQuery("SELECT id FROM transfers ORDER BY id")) {
            while (r.next()) {
                out.add(r.getString(1));
            }
        }
        return out;
    }

    private static List<String> drain(MessageConsumer consumer, long firstWaitMs) throws Exception {
        List<String> out = new ArrayList<>();
        Message m;
        while ((m = consumer.receive(out.isEmpty() ? firstWaitMs : 1000)) != null) {
            out.add(((TextMessage) m).getText());
        }
        return out;
    }

    @Test
    void shouldCommitAllThreeOrNoneOnCommitRollbackAndANoVote() throws Exception {
        MillraceXAConnectionFactory factory = new MillraceXAConnectionFactory(broker.bootstrap());
        factory.setRequestTimeoutMs(10_000);
        try (jakarta.jms.XAConnection xc = factory.createXAConnection();
             Connection c = broker.factory().createConnection()) {
            Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue in = plain.createQueue("narayana.in");
            Queue out = plain.createQueue("narayana.out");
            var p = plain.createProducer(in);
            p.send(plain.createTextMessage("m1"));
            p.send(plain.createTextMessage("m2"));
            XASession xs = xc.createXASession();
            MessageConsumer consumer = xs.createConsumer(in);
            xc.start();
            XAConnection db = database.getXAConnection();

            String committed = transfer(xs, consumer, out, db, null);
            tm.commit();

            String rolledBack = transfer(xs, consumer, out, db, null);
            tm.rollback();

            String votedNo = transfer(xs, consumer, out, db, new NoVote());
            assertThatThrownBy(tm::commit).isInstanceOf(RollbackException.class);

            String again = transfer(xs, consumer, out, db, null);
            tm.commit();

            assertThat(List.of(committed, rolledBack)).containsExactlyInAnyOrder("m1", "m2");
            assertThat(votedNo).as("delivered again after the rollback").isEqualTo(rolledBack);
            assertThat(again).as("delivered again after the no vote").isEqualTo(rolledBack);
            assertThat(rows()).containsExactlyInAnyOrder("m1", "m2");
            MessageConsumer outputs = plain.createConsumer(out);
            c.start();
            assertThat(drain(outputs, 10_000)).containsExactlyInAnyOrder("out-m1", "out-m2");
            consumer.close();
            MessageConsumer inputs = plain.createConsumer(in);
            assertThat(inputs.receive(1500)).as("both inputs accepted by their commits").isNull();
            db.close();
        }
    }

    /** A resource that votes no at prepare (enlisted last, so the others are prepared first). */
    static final class NoVote implements XAResource {

        @Override
        public int prepare(Xid xid) throws XAException {
            throw new XAException(XAException.XA_RBROLLBACK);
        }

        @Override
        public void commit(Xid xid, boolean onePhase) {
        }

        @Override
        public void end(Xid xid, int flags) {
        }

        @Override
        public void forget(Xid xid) {
        }

        @Override
        public int getTransactionTimeout() {
            return 0;
        }

        @Override
        public boolean isSameRM(XAResource other) {
            return other == this;
        }

        @Override
        public Xid[] recover(int flag) {
            return new Xid[0];
        }

        @Override
        public void rollback(Xid xid) {
        }

        @Override
        public boolean setTransactionTimeout(int seconds) {
            return false;
        }

        @Override
        public void start(Xid xid, int flags) {
        }
    }
}
