package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import javax.transaction.xa.XAException;
import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.Connection;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.TransactionInProgressException;
import jakarta.jms.TransactionInProgressRuntimeException;
import jakarta.jms.XAJMSContext;
import jakarta.jms.XAConnection;
import jakarta.jms.XASession;

/**
 * The XAResource contract of {@link MillraceXASession} against a broker in process, with direct XAResource calls
 * (as a transaction manager makes them): two-phase and one-phase commit, rollback before and after prepare,
 * read-only prepare, an unknown Xid, end with TMFAIL, join/suspend/resume, recover scans and completion from
 * another connection, queue receives in a branch.
 */
@Timeout(120)
class XaResourceIntegrationTest {

    private static final AtomicInteger GTRIDS = new AtomicInteger();

    @TempDir
    static Path dataDir;
    static TestBroker broker;
    static MillraceXAConnectionFactory factory;

    @BeforeAll
    static void startBroker() throws Exception {
        broker = TestBroker.start(dataDir, Map.of("group.share.record.lock.duration.ms", "30000",
                "transaction.abort.timed.out.transaction.cleanup.interval.ms", "200"));
        factory = new MillraceXAConnectionFactory(broker.bootstrap());
        factory.setRequestTimeoutMs(10_000);
    }

    @AfterAll
    static void stopBroker() throws Exception {
        broker.close();
    }

    /** A Xid as a transaction manager makes them: a new gtrid each time. */
    record TestXid(int formatId, byte[] gtrid, byte[] bqual) implements Xid {

        static TestXid next() {
            return new TestXid(4660, ("xa-test-" + GTRIDS.incrementAndGet() + "-" + System.nanoTime())
                    .getBytes(StandardCharsets.US_ASCII), new byte[] {1});
        }

        @Override
        public int getFormatId() {
            return formatId;
        }

        @Override
        public byte[] getGlobalTransactionId() {
            return gtrid.clone();
        }

        @Override
        public byte[] getBranchQualifier() {
            return bqual.clone();
        }
    }

    private static void send(Session s, Queue q, String... texts) throws Exception {
        var p = s.createProducer(q);
        for (String t : texts) {
            p.send(s.createTextMessage(t));
        }
        p.close();
    }

    /** Every text {@code consumer} receives until 1 s passes without one. */
    private static List<String> drain(MessageConsumer consumer) throws Exception {
        List<String> out = new ArrayList<>();
        Message m;
        while ((m = consumer.receive(out.isEmpty() ? 10_000 : 1000)) != null) {
            out.add(((TextMessage) m).getText());
        }
        return out;
    }

    private static int code(Throwable t) {
        return ((XAException) t).errorCode;
    }

    @Test
    void shouldMakeSendsVisibleOnlyWhenAPreparedBranchCommits() throws Exception {
        try (XAConnection xc = factory.createXAConnection(); Connection c = broker.factory().createConnection()) {
            XASession xs = xc.createXASession();
            XAResource r = xs.getXAResource();
            Queue q = xs.createQueue("xa.commit");
            Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
            MessageConsumer reader = plain.createConsumer(q);
            c.start();
            Xid xid = TestXid.next();

            r.start(xid, XAResource.TMNOFLAGS);
            send(xs, q, "a", "b");
            r.end(xid, XAResource.TMSUCCESS);
            assertThat(reader.receive(500)).as("nothing before prepare").isNull();
            assertThat(r.prepare(xid)).isEqualTo(XAResource.XA_OK);
            assertThat(reader.receive(1000)).as("nothing while prepared").isNull();
            Xid otherBranch = new TestXid(xid.getFormatId(), xid.getGlobalTransactionId(), new byte[] {9});
            assertThatThrownBy(() -> r.commit(otherBranch, false)).as("same gtrid, another branch qualifier")
                    .extracting(XaResourceIntegrationTest::code).isEqualTo(XAException.XAER_NOTA);
            Xid otherFormat = new TestXid(7, xid.getGlobalTransactionId(), xid.getBranchQualifier());
            assertThatThrownBy(() -> r.rollback(otherFormat)).as("another format id")
                    .extracting(XaResourceIntegrationTest::code).isEqualTo(XAException.XAER_NOTA);
            assertThatThrownBy(() -> r.commit(xid, true)).as("one-phase commit of a prepared branch")
                    .extracting(XaResourceIntegrationTest::code).isEqualTo(XAException.XAER_PROTO);
            r.commit(xid, false);
            assertThat(drain(reader)).containsExactly("a", "b");
            r.commit(xid, false); // a repeated commit (a lost answer) is answered XA_OK by the broker
        }
    }

    @Test
    void shouldDiscardSendsOfARolledBackBranchBeforeAndAfterPrepare() throws Exception {
        try (XAConnection xc = factory.createXAConnection(); Connection c = broker.factory().createConnection()) {
            XASession xs = xc.createXASession();
            XAResource r = xs.getXAResource();
            Queue q = xs.createQueue("xa.rollback");
            Xid before = TestXid.next();
            r.start(before, XAResource.TMNOFLAGS);
            send(xs, q, "rolled-back-before-prepare");
            r.end(before, XAResource.TMSUCCESS);
            r.rollback(before);
            Xid after = TestXid.next();
            r.start(after, XAResource.TMNOFLAGS);
            send(xs, q, "rolled-back-after-prepare");
            r.end(after, XAResource.TMSUCCESS);
            assertThat(r.prepare(after)).isEqualTo(XAResource.XA_OK);
            r.rollback(after);
            assertThatThrownBy(() -> r.commit(after, false)).as("commit of a rolled-back branch")
                    .isInstanceOf(XAException.class).extracting(XaResourceIntegrationTest::code)
                    .isEqualTo(XAException.XA_RBROLLBACK);
            Xid committed = TestXid.next();
            r.start(committed, XAResource.TMNOFLAGS);
            send(xs, q, "one-phase");
            r.end(committed, XAResource.TMSUCCESS);
            r.commit(committed, true);

            Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
            MessageConsumer reader = plain.createConsumer(q);
            c.start();
            assertThat(drain(reader)).containsExactly("one-phase");
        }
    }

    @Test
    void shouldAnswerReadOnlyForABranchThatDidNothingAndForgetIt() throws Exception {
        try (XAConnection xc = factory.createXAConnection()) {
            XAResource r = xc.createXASession().getXAResource();
            Xid xid = TestXid.next();
            r.start(xid, XAResource.TMNOFLAGS);
            r.end(xid, XAResource.TMSUCCESS);
            assertThat(r.prepare(xid)).isEqualTo(XAResource.XA_RDONLY);
            assertThatThrownBy(() -> r.commit(xid, false)).isInstanceOf(XAException.class)
                    .extracting(XaResourceIntegrationTest::code).isEqualTo(XAException.XAER_NOTA);
        }
    }

    @Test
    void shouldAnswerNotaForAnUnknownXidAndInvalForAMalformedOne() throws Exception {
        try (XAConnection xc = factory.createXAConnection()) {
            XAResource r = xc.createXASession().getXAResource();
            Xid unknown = TestXid.next();
            assertThatThrownBy(() -> r.commit(unknown, false)).extracting(XaResourceIntegrationTest::code)
                    .isEqualTo(XAException.XAER_NOTA);
            assertThatThrownBy(() -> r.rollback(unknown)).extracting(XaResourceIntegrationTest::code)
                    .isEqualTo(XAException.XAER_NOTA);
            assertThatThrownBy(() -> r.prepare(unknown)).extracting(XaResourceIntegrationTest::code)
                    .isEqualTo(XAException.XAER_NOTA);
            assertThatThrownBy(() -> r.forget(unknown)).extracting(XaResourceIntegrationTest::code)
                    .isEqualTo(XAException.XAER_NOTA);
            assertThatThrownBy(() -> r.end(unknown, XAResource.TMSUCCESS)).extracting(XaResourceIntegrationTest::code)
                    .isEqualTo(XAException.XAER_NOTA);
            assertThatThrownBy(() -> r.start(unknown, XAResource.TMJOIN)).extracting(XaResourceIntegrationTest::code)
                    .isEqualTo(XAException.XAER_NOTA);
            assertThatThrownBy(() -> r.start(unknown, XAResource.TMRESUME))
                    .extracting(XaResourceIntegrationTest::code).isEqualTo(XAException.XAER_NOTA);
            Xid malformed = new TestXid(1, new byte[0], new byte[0]);
            assertThatThrownBy(() -> r.start(malformed, XAResource.TMNOFLAGS))
                    .extracting(XaResourceIntegrationTest::code).isEqualTo(XAException.XAER_INVAL);
            assertThatThrownBy(() -> r.start(null, XAResource.TMNOFLAGS))
                    .extracting(XaResourceIntegrationTest::code).isEqualTo(XAException.XAER_INVAL);
            assertThatThrownBy(() -> r.start(unknown, XAResource.TMSUCCESS))
                    .extracting(XaResourceIntegrationTest::code).isEqualTo(XAException.XAER_INVAL);
        }
    }

    @Test
    void shouldRollBackABranchEndedWithTmFail() throws Exception {
        try (XAConnection xc = factory.createXAConnection(); Connection c = broker.factory().createConnection()) {
            XASession xs = xc.createXASession();
            XAResource r = xs.getXAResource();
            Queue q = xs.createQueue("xa.tmfail");
            Xid prepared = TestXid.next();
            r.start(prepared, XAResource.TMNOFLAGS);
            send(xs, q, "failed-1");
            r.end(prepared, XAResource.TMFAIL);
            assertThatThrownBy(() -> r.start(prepared, XAResource.TMJOIN)).extracting(XaResourceIntegrationTest::code)
                    .isEqualTo(XAException.XA_RBROLLBACK);
            assertThatThrownBy(() -> r.prepare(prepared)).extracting(XaResourceIntegrationTest::code)
                    .isEqualTo(XAException.XA_RBROLLBACK);
            Xid rolledBack = TestXid.next();
            r.start(rolledBack, XAResource.TMNOFLAGS);
            send(xs, q, "failed-2");
            r.end(rolledBack, XAResource.TMFAIL);
            r.rollback(rolledBack);
            Xid onePhase = TestXid.next();
            r.start(onePhase, XAResource.TMNOFLAGS);
            send(xs, q, "failed-3");
            r.end(onePhase, XAResource.TMFAIL);
            assertThatThrownBy(() -> r.commit(onePhase, true)).extracting(XaResourceIntegrationTest::code)
                    .isEqualTo(XAException.XA_RBROLLBACK);

            Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
            MessageConsumer reader = plain.createConsumer(q);
            c.start();
            assertThat(reader.receive(1500)).as("no failed branch wrote anything").isNull();
        }
    }

    @Test
    void shouldJoinSuspendAndResumeBranches() throws Exception {
        try (XAConnection xc = factory.createXAConnection(); XAConnection other = factory.createXAConnection();
             Connection c = broker.factory().createConnection()) {
            XASession a = xc.createXASession();
            XASession b = other.createXASession();
            XAResource ra = a.getXAResource();
            XAResource rb = b.getXAResource();
            assertThat(ra.isSameRM(rb)).as("same cluster").isTrue();
            Queue q = a.createQueue("xa.join");
            Xid x = TestXid.next();
            Xid y = TestXid.next();

            ra.start(x, XAResource.TMNOFLAGS);
            send(a, q, "x1");
            assertThatThrownBy(() -> ra.start(y, XAResource.TMNOFLAGS)).as("one branch at a time")
                    .extracting(XaResourceIntegrationTest::code).isEqualTo(XAException.XAER_PROTO);
            ra.end(x, XAResource.TMSUSPEND);
            assertThatThrownBy(() -> rb.start(x, XAResource.TMRESUME)).as("only the suspender resumes")
                    .extracting(XaResourceIntegrationTest::code).isEqualTo(XAException.XAER_PROTO);
            assertThatThrownBy(() -> ra.prepare(x)).as("prepare of a suspended branch")
                    .extracting(XaResourceIntegrationTest::code).isEqualTo(XAException.XAER_PROTO);
            ra.start(y, XAResource.TMNOFLAGS);
            send(a, q, "y1");
            ra.end(y, XAResource.TMSUCCESS);
            ra.start(x, XAResource.TMRESUME);
            send(a, q, "x2");
            ra.end(x, XAResource.TMSUCCESS);
            rb.start(x, XAResource.TMJOIN);
            send(b, q, "x3");
            assertThatThrownBy(() -> ra.prepare(x)).as("prepare while another resource works on it")
                    .extracting(XaResourceIntegrationTest::code).isEqualTo(XAException.XAER_PROTO);
            rb.end(x, XAResource.TMSUCCESS);
            assertThatThrownBy(() -> rb.start(x, XAResource.TMNOFLAGS)).as("a new branch with a known Xid")
                    .extracting(XaResourceIntegrationTest::code).isEqualTo(XAException.XAER_DUPID);

            assertThat(rb.prepare(x)).isEqualTo(XAResource.XA_OK);
            assertThat(ra.prepare(y)).isEqualTo(XAResource.XA_OK);
            ra.commit(x, false);
            rb.rollback(y);

            Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
            MessageConsumer reader = plain.createConsumer(q);
            c.start();
            assertThat(drain(reader)).containsExactlyInAnyOrder("x1", "x2", "x3");
        }
    }

    @Test
    void shouldListPreparedBranchesInARecoverScanAndCompleteThemFromAnotherConnection() throws Exception {
        Queue q;
        Xid toCommit = TestXid.next();
        Xid toRollBack = TestXid.next();
        try (XAConnection xc = factory.createXAConnection()) {
            XASession xs = xc.createXASession();
            XAResource r = xs.getXAResource();
            q = xs.createQueue("xa.recover");
            for (Xid xid : List.of(toCommit, toRollBack)) {
                r.start(xid, XAResource.TMNOFLAGS);
                send(xs, q, xid == toCommit ? "committed" : "rolled-back");
                r.end(xid, XAResource.TMSUCCESS);
                assertThat(r.prepare(xid)).isEqualTo(XAResource.XA_OK);
            }
        }
        try (XAConnection recovering = factory.createXAConnection();
             Connection c = broker.factory().createConnection()) {
            XAResource r = recovering.createXASession().getXAResource();
            assertThatThrownBy(() -> r.recover(XAResource.TMNOFLAGS)).as("no scan open")
                    .extracting(XaResourceIntegrationTest::code).isEqualTo(XAException.XAER_PROTO);
            assertThatThrownBy(() -> r.recover(XAResource.TMSUCCESS)).extracting(XaResourceIntegrationTest::code)
                    .isEqualTo(XAException.XAER_INVAL);
            List<String> listed = Arrays.stream(r.recover(XAResource.TMSTARTRSCAN))
                    .map(x -> new String(x.getGlobalTransactionId(), StandardCharsets.US_ASCII)).toList();
            assertThat(listed).contains(new String(toCommit.getGlobalTransactionId(), StandardCharsets.US_ASCII),
                    new String(toRollBack.getGlobalTransactionId(), StandardCharsets.US_ASCII));
            assertThat(r.recover(XAResource.TMNOFLAGS)).as("everything came with TMSTARTRSCAN").isEmpty();
            assertThat(r.recover(XAResource.TMENDRSCAN)).isEmpty();
            assertThatThrownBy(() -> r.recover(XAResource.TMENDRSCAN)).as("the scan is over")
                    .extracting(XaResourceIntegrationTest::code).isEqualTo(XAException.XAER_PROTO);

            r.commit(toCommit, false);
            // a resource that never scanned finds the branch by itself
            try (XAConnection third = factory.createXAConnection()) {
                third.createXASession().getXAResource().rollback(toRollBack);
            }
            Xid[] left = r.recover(XAResource.TMSTARTRSCAN | XAResource.TMENDRSCAN);
            assertThat(Arrays.stream(left).map(x -> new String(x.getGlobalTransactionId(),
                    StandardCharsets.US_ASCII))).doesNotContain(new String(toCommit.getGlobalTransactionId(),
                    StandardCharsets.US_ASCII), new String(toRollBack.getGlobalTransactionId(),
                    StandardCharsets.US_ASCII));

            Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
            MessageConsumer reader = plain.createConsumer(q);
            c.start();
            assertThat(drain(reader)).containsExactly("committed");
        }
    }

    @Test
    void shouldTakeQueueReceivesIntoTheBranch() throws Exception {
        try (XAConnection xc = factory.createXAConnection(); Connection c = broker.factory().createConnection()) {
            Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue in = plain.createQueue("xa.receive.in");
            Queue out = plain.createQueue("xa.receive.out");
            send(plain, in, "input");
            XASession xs = xc.createXASession();
            XAResource r = xs.getXAResource();
            MessageConsumer consumer = xs.createConsumer(in);
            xc.start();

            Xid rolledBack = TestXid.next();
            r.start(rolledBack, XAResource.TMNOFLAGS);
            Message first = consumer.receive(10_000);
            assertThat(((TextMessage) first).getText()).isEqualTo("input");
            send(xs, out, "output-rolled-back");
            r.end(rolledBack, XAResource.TMSUCCESS);
            assertThat(r.prepare(rolledBack)).isEqualTo(XAResource.XA_OK);
            r.rollback(rolledBack);

            Xid committed = TestXid.next();
            r.start(committed, XAResource.TMNOFLAGS);
            Message again = consumer.receive(10_000);
            assertThat(((TextMessage) again).getText()).isEqualTo("input");
            assertThat(again.getJMSRedelivered()).as("delivered again after the rollback").isTrue();
            send(xs, out, "output");
            r.end(committed, XAResource.TMSUCCESS);
            assertThat(r.prepare(committed)).isEqualTo(XAResource.XA_OK);
            r.commit(committed, false);

            MessageConsumer outputs = plain.createConsumer(out);
            c.start();
            assertThat(drain(outputs)).containsExactly("output");
            consumer.close();
            MessageConsumer other = plain.createConsumer(in);
            assertThat(other.receive(1500)).as("the committed input is accepted").isNull();
        }
    }

    @Test
    void shouldPrepareABranchThatOnlyReceivedFromAQueue() throws Exception {
        try (XAConnection xc = factory.createXAConnection(); Connection c = broker.factory().createConnection()) {
            Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue in = plain.createQueue("xa.receive.only");
            send(plain, in, "only");
            XASession xs = xc.createXASession();
            XAResource r = xs.getXAResource();
            MessageConsumer consumer = xs.createConsumer(in);
            xc.start();
            Xid xid = TestXid.next();
            r.start(xid, XAResource.TMNOFLAGS);
            assertThat(((TextMessage) consumer.receive(10_000)).getText()).isEqualTo("only");
            r.end(xid, XAResource.TMSUCCESS);
            assertThat(r.prepare(xid)).as("the acceptance is work on the broker").isEqualTo(XAResource.XA_OK);
            r.commit(xid, false);
            consumer.close();
            MessageConsumer other = plain.createConsumer(in);
            c.start();
            assertThat(other.receive(1500)).as("accepted by the commit").isNull();
        }
    }

    @Test
    void shouldBehaveAsAnXaSessionOutsideABranch() throws Exception {
        try (XAConnection xc = factory.createXAConnection(); Connection c = broker.factory().createConnection()) {
            XASession xs = xc.createXASession();
            assertThat(xs.getTransacted()).isTrue();
            assertThat(xs.getSession()).isSameAs(xs);
            assertThatThrownBy(xs::commit).isInstanceOf(TransactionInProgressException.class);
            assertThatThrownBy(xs::rollback).isInstanceOf(TransactionInProgressException.class);
            Queue q = xs.createQueue("xa.outside");
            send(xs, q, "sent-at-once");
            Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
            MessageConsumer reader = plain.createConsumer(q);
            c.start();
            assertThat(drain(reader)).containsExactly("sent-at-once");

            XAResource r = xs.getXAResource();
            assertThat(r.getTransactionTimeout()).isEqualTo(60);
            assertThat(r.setTransactionTimeout(5)).isTrue();
            assertThat(r.getTransactionTimeout()).isEqualTo(5);
            assertThatThrownBy(() -> r.setTransactionTimeout(-1)).extracting(XaResourceIntegrationTest::code)
                    .isEqualTo(XAException.XAER_INVAL);
            r.setTransactionTimeout(0);
            assertThat(r.getTransactionTimeout()).isEqualTo(60);
        }
    }

    @Test
    void shouldRollBackABranchTheBrokerTimedOutBeforePrepare() throws Exception {
        try (XAConnection xc = factory.createXAConnection(); Connection c = broker.factory().createConnection();
             Admin admin = Admin.create(Map.of("bootstrap.servers", broker.bootstrap()))) {
            XASession xs = xc.createXASession();
            XAResource r = xs.getXAResource();
            Queue q = xs.createQueue("xa.timeout");
            r.setTransactionTimeout(1);
            java.util.Set<String> abortedBefore = abortedXa(admin);
            Xid xid = TestXid.next();
            r.start(xid, XAResource.TMNOFLAGS);
            send(xs, q, "timed-out");
            r.end(xid, XAResource.TMSUCCESS);
            // wait until the broker has aborted it: an XA transactional id not aborted before is aborted now (waiting
            // for "none Ongoing" could end before the branch's transaction was ever listed as Ongoing)
            while (abortedBefore.containsAll(abortedXa(admin))) {
                Thread.onSpinWait();
            }
            assertThatThrownBy(() -> r.prepare(xid)).isInstanceOf(XAException.class)
                    .extracting(XaResourceIntegrationTest::code).matches(
                            code -> code >= XAException.XA_RBBASE && code <= XAException.XA_RBEND, "an XA_RB* code");
            assertThatThrownBy(() -> r.commit(xid, false)).as("gone after its rollback")
                    .extracting(XaResourceIntegrationTest::code).isEqualTo(XAException.XAER_NOTA);
            Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
            MessageConsumer reader = plain.createConsumer(q);
            c.start();
            assertThat(reader.receive(1500)).isNull();
        }
    }

    /** The XA transactional ids whose last transaction was aborted (or is being aborted). */
    private static java.util.Set<String> abortedXa(Admin admin) throws Exception {
        java.util.Set<String> out = new java.util.HashSet<>();
        for (TransactionListing t : admin.listTransactions().all().get()) {
            if ((t.state() == TransactionState.PREPARE_ABORT || t.state() == TransactionState.COMPLETE_ABORT)
                    && t.transactionalId().startsWith("millrace-xa-")) {
                out.add(t.transactionalId());
            }
        }
        return out;
    }

    @Test
    void shouldCommitADurableSubscriptionsOffsetsWithTheBranch() throws Exception {
        MillraceXAConnectionFactory f = new MillraceXAConnectionFactory(broker.bootstrap());
        f.setClientId("xa-durable");
        try (XAConnection xc = f.createXAConnection(); Connection c = broker.factory().createConnection();
             Admin admin = Admin.create(Map.of("bootstrap.servers", broker.bootstrap()))) {
            XASession xs = xc.createXASession();
            XAResource r = xs.getXAResource();
            jakarta.jms.Topic topic = xs.createTopic("xa.durable");
            MessageConsumer subscriber = xs.createDurableConsumer(topic, "sub");
            Queue out = xs.createQueue("xa.durable.out");
            Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
            plain.createProducer(topic).send(plain.createTextMessage("t1"));
            xc.start();

            Xid rolledBack = TestXid.next();
            r.start(rolledBack, XAResource.TMNOFLAGS);
            assertThat(((TextMessage) subscriber.receive(10_000)).getText()).isEqualTo("t1");
            r.end(rolledBack, XAResource.TMSUCCESS);
            assertThat(r.prepare(rolledBack)).as("the offsets are work on the broker").isEqualTo(XAResource.XA_OK);
            r.rollback(rolledBack);
            Xid committed = TestXid.next();
            r.start(committed, XAResource.TMNOFLAGS);
            Message again = subscriber.receive(10_000);
            assertThat(((TextMessage) again).getText()).isEqualTo("t1");
            send(xs, out, "from-t1");
            r.end(committed, XAResource.TMSUCCESS);
            assertThat(r.prepare(committed)).isEqualTo(XAResource.XA_OK);
            r.commit(committed, false);

            var offsets = admin.listConsumerGroupOffsets("millrace.sub.xa-durable.sub")
                    .partitionsToOffsetAndMetadata().get();
            assertThat(offsets.values()).extracting(o -> o.offset()).containsExactly(1L);
        }
    }

    @Test
    void shouldRunAnXaContextsWorkInItsBranch() throws Exception {
        try (XAJMSContext context = factory.createXAContext(); Connection c = broker.factory().createConnection()) {
            assertThat(context.getContext()).isSameAs(context);
            assertThat(context.getTransacted()).isTrue();
            assertThatThrownBy(context::commit).isInstanceOf(TransactionInProgressRuntimeException.class);
            Queue q = context.createQueue("xa.context");
            XAResource r = context.getXAResource();
            Xid xid = TestXid.next();
            r.start(xid, XAResource.TMNOFLAGS);
            context.createProducer().send(q, "in-context");
            r.end(xid, XAResource.TMSUCCESS);
            assertThat(r.prepare(xid)).isEqualTo(XAResource.XA_OK);
            Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
            MessageConsumer reader = plain.createConsumer(q);
            c.start();
            assertThat(reader.receive(1000)).as("nothing before commit").isNull();
            r.commit(xid, false);
            assertThat(drain(reader)).containsExactly("in-context");
        }
    }

    @Test
    void shouldReportAnAdministratorsHeuristicCommitAndForgetIt() throws Exception {
        try (XAConnection xc = factory.createXAConnection(); Connection c = broker.factory().createConnection();
             dev.millrace.broker.cli.XaClient admin = new dev.millrace.broker.cli.XaClient(broker.bootstrap(),
                     java.time.Duration.ofSeconds(10))) {
            XASession xs = xc.createXASession();
            XAResource r = xs.getXAResource();
            Queue q = xs.createQueue("xa.heuristic");
            Xid xid = TestXid.next();
            r.start(xid, XAResource.TMNOFLAGS);
            send(xs, q, "resolved-by-hand");
            r.end(xid, XAResource.TMSUCCESS);
            assertThat(r.prepare(xid)).isEqualTo(XAResource.XA_OK);
            assertThatThrownBy(() -> r.forget(xid)).as("forget of a prepared branch")
                    .extracting(XaResourceIntegrationTest::code).isEqualTo(XAException.XAER_PROTO);

            var xaXid = new dev.millrace.protocol.ext.XaXid(xid.getFormatId(), xid.getGlobalTransactionId(),
                    xid.getBranchQualifier());
            assertThat(admin.complete(xaXid, dev.millrace.protocol.ext.XaComplete.Action.COMMIT, true).xaCode())
                    .isEqualTo(dev.millrace.protocol.ext.XaCodes.XA_OK);
            assertThatThrownBy(() -> r.commit(xid, false)).as("the transaction manager learns of it")
                    .extracting(XaResourceIntegrationTest::code).isEqualTo(XAException.XA_HEURCOM);
            assertThat(Arrays.stream(r.recover(XAResource.TMSTARTRSCAN | XAResource.TMENDRSCAN))
                    .map(XaResourceIntegrationTest::gtrid)).as("listed until forgotten").contains(gtrid(xid));
            r.forget(xid);
            assertThat(Arrays.stream(r.recover(XAResource.TMSTARTRSCAN | XAResource.TMENDRSCAN))
                    .map(XaResourceIntegrationTest::gtrid)).doesNotContain(gtrid(xid));
            assertThatThrownBy(() -> r.forget(xid)).extracting(XaResourceIntegrationTest::code)
                    .isEqualTo(XAException.XAER_NOTA);

            Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
            MessageConsumer reader = plain.createConsumer(q);
            c.start();
            assertThat(drain(reader)).containsExactly("resolved-by-hand");
        }
    }

    /**
     * The connection's successive branches, two-phase, committed or rolled back, sending or only receiving, run on
     * one producer: the broker lists every prepared branch with the producer id it was written with, and that id is
     * the same each time (a new KafkaProducer per branch would get a new producer id from InitProducerId).
     */
    @Test
    void shouldRunSuccessiveTwoPhaseBranchesOnOneProducer() throws Exception {
        try (XAConnection xc = factory.createXAConnection(); Connection c = broker.factory().createConnection();
             dev.millrace.broker.cli.XaClient admin = new dev.millrace.broker.cli.XaClient(broker.bootstrap(),
                     java.time.Duration.ofSeconds(10))) {
            Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue in = plain.createQueue("xa.one-producer.in");
            Queue out = plain.createQueue("xa.one-producer.out");
            send(plain, in, "input");
            XASession xs = xc.createXASession();
            XAResource r = xs.getXAResource();
            MessageConsumer consumer = xs.createConsumer(in);
            xc.start();
            List<Long> producerIds = new ArrayList<>();
            String[] kinds = {"send-commit", "send-rollback", "receive-only-commit", "send-commit-again"};
            for (String kind : kinds) {
                Xid xid = TestXid.next();
                r.start(xid, XAResource.TMNOFLAGS);
                if (kind.startsWith("receive")) {
                    assertThat(((TextMessage) consumer.receive(10_000)).getText()).isEqualTo("input");
                } else {
                    send(xs, out, kind);
                }
                r.end(xid, XAResource.TMSUCCESS);
                assertThat(r.prepare(xid)).isEqualTo(XAResource.XA_OK);
                producerIds.add(admin.recoverAll(null).stream().filter(l -> gtrid(xid).equals(
                        new String(l.branch().xid().gtrid(), StandardCharsets.US_ASCII))).findFirst()
                        .orElseThrow().branch().producerId());
                if (kind.contains("rollback")) {
                    r.rollback(xid);
                } else {
                    r.commit(xid, false);
                }
            }
            assertThat(producerIds).as("producer id of each prepared branch").hasSize(kinds.length)
                    .containsOnly(producerIds.get(0));

            MessageConsumer outputs = plain.createConsumer(out);
            c.start();
            assertThat(drain(outputs)).containsExactly("send-commit", "send-commit-again");
            consumer.close();
            assertThat(plain.createConsumer(in).receive(1500)).as("the input accepted by its commit").isNull();
        }
    }

    /**
     * A container may close a pooled connection between prepare and commit (GlassFish does while undeploying): the
     * transaction manager's commit and rollback through that connection's XAResource still complete the branches.
     */
    @Test
    void shouldCompletePreparedBranchesThroughTheXaResourceOfAClosedConnection() throws Exception {
        XAConnection xc = factory.createXAConnection();
        XASession xs = xc.createXASession();
        XAResource r = xs.getXAResource();
        Queue q = xs.createQueue("xa.closed-connection");
        Xid toCommit = TestXid.next();
        Xid toRollBack = TestXid.next();
        for (Xid xid : List.of(toCommit, toRollBack)) {
            r.start(xid, XAResource.TMNOFLAGS);
            send(xs, q, xid == toCommit ? "committed" : "rolled-back");
            r.end(xid, XAResource.TMSUCCESS);
            assertThat(r.prepare(xid)).isEqualTo(XAResource.XA_OK);
        }
        xc.close();
        assertThat(Arrays.stream(r.recover(XAResource.TMSTARTRSCAN | XAResource.TMENDRSCAN))
                .map(XaResourceIntegrationTest::gtrid)).contains(gtrid(toCommit), gtrid(toRollBack));
        r.commit(toCommit, false);
        r.rollback(toRollBack);
        try (Connection c = broker.factory().createConnection()) {
            Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
            MessageConsumer reader = plain.createConsumer(q);
            c.start();
            assertThat(drain(reader)).containsExactly("committed");
        }
    }

    /**
     * XA rollback of a branch that was ended but not prepared, through the XAResource of a connection already closed
     * (what GlassFish does when it undeploys an application while its MDBs are in transactions): the rollback must
     * not throw a RuntimeException (it threw kafka-clients' IllegalStateException: producer closed) and must abort
     * the broker transaction at once: an open transaction holds back every later message of the queues it wrote.
     */
    @Test
    void shouldAbortAnUnpreparedBranchRolledBackAfterItsConnectionClosed() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue in = plain.createQueue("xa.closed.unprepared.in");
            Queue out = plain.createQueue("xa.closed.unprepared.out");
            send(plain, in, "input");
            XAConnection xc = factory.createXAConnection();
            XASession xs = xc.createXASession();
            XAResource r = xs.getXAResource();
            assertThat(r.setTransactionTimeout(600)).isTrue();
            MessageConsumer consumer = xs.createConsumer(in);
            xc.start();
            Xid xid = TestXid.next();
            r.start(xid, XAResource.TMNOFLAGS);
            assertThat(((TextMessage) consumer.receive(10_000)).getText()).isEqualTo("input");
            send(xs, out, "in-the-branch");
            r.end(xid, XAResource.TMSUCCESS);
            xc.close();

            r.rollback(xid);

            send(plain, out, "after");
            MessageConsumer outputs = plain.createConsumer(out);
            MessageConsumer inputs = plain.createConsumer(in);
            c.start();
            assertThat(drain(outputs)).as("the branch's transaction aborted at once, not at its 600 s timeout, "
                    + "which would hold back the later message").containsExactly("after");
            assertThat(((TextMessage) inputs.receive(10_000)).getText()).isEqualTo("input");
        }
    }

    private static String gtrid(Xid xid) {
        return new String(xid.getGlobalTransactionId(), StandardCharsets.US_ASCII);
    }
}
