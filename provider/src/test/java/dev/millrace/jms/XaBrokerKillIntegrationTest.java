package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import javax.transaction.xa.XAException;
import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.cli.NodeProcess;
import jakarta.jms.Connection;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.XAConnection;
import jakarta.jms.XASession;

/**
 * The broker, a process of its own ({@code millrace server}), is killed with SIGKILL right after two XA branches
 * were prepared: after its restart on the same data directory both Xids are in a new connection's recover scan, their
 * messages are invisible, and the commit of one makes its message visible exactly once while the rollback of the
 * other makes its message never appear.
 */
@Timeout(180)
class XaBrokerKillIntegrationTest {

    @TempDir
    Path dir;

    @Test
    void shouldKeepBranchesPreparedAcrossASigkillOfTheBrokerAndCompleteThemAfterItsRestart() throws Exception {
        int port = TestBroker.freePort();
        List<String> args = List.of("--port", String.valueOf(port), "--data-dir", dir.resolve("data").toString(),
                "--set", "controller.port=" + TestBroker.freePort(),
                "--set", "group.share.auto.offset.reset=earliest");
        Path log = dir.resolve("broker.log");
        String bootstrap = "127.0.0.1:" + port;
        Xid toCommit = new XaResourceIntegrationTest.TestXid(4661, "kill-commit".getBytes(StandardCharsets.US_ASCII),
                new byte[] {1});
        Xid toRollBack = new XaResourceIntegrationTest.TestXid(4661,
                "kill-rollback".getBytes(StandardCharsets.US_ASCII), new byte[] {1});

        NodeProcess broker = NodeProcess.start(1, List.of(), args, log, List.of(port));
        try {
            broker.awaitListening(Duration.ofSeconds(60));
            MillraceXAConnectionFactory factory = new MillraceXAConnectionFactory(bootstrap);
            // a freshly started broker JVM may take seconds over its first answers when the machine is loaded (2 s
            // failed twice in full runs); no failover window: once the broker is killed, a call fails after one
            // request timeout
            factory.setRequestTimeoutMs(10_000);
            factory.setFailoverTimeoutMs(0);
            try (XAConnection xc = factory.createXAConnection()) {
                XASession xs = xc.createXASession();
                XAResource r = xs.getXAResource();
                Queue q = xs.createQueue("xa.kill");
                prepare(r, xs, q, toCommit, "committed-after-kill");
                prepare(r, xs, q, toRollBack, "rolled-back-after-kill");

                broker.kill(); // SIGKILL: nothing flushed or closed by the broker
                assertThatThrownBy(() -> r.commit(toCommit, false)).isInstanceOf(XAException.class)
                        .extracting(t -> ((XAException) t).errorCode).isEqualTo(XAException.XAER_RMFAIL);
            }
        } finally {
            broker.kill();
        }

        NodeProcess again = NodeProcess.start(1, List.of(), args, log, List.of(port));
        try {
            again.awaitListening(Duration.ofSeconds(60));
            MillraceXAConnectionFactory recovering = new MillraceXAConnectionFactory(bootstrap);
            recovering.setRequestTimeoutMs(10_000);
            try (XAConnection xc = recovering.createXAConnection();
                 Connection c = new MillraceConnectionFactory(bootstrap).createConnection()) {
                XAResource r = xc.createXASession().getXAResource();
                List<String> listed = Arrays.stream(r.recover(XAResource.TMSTARTRSCAN | XAResource.TMENDRSCAN))
                        .map(x -> new String(x.getGlobalTransactionId(), StandardCharsets.US_ASCII)).toList();
                assertThat(listed).as("in doubt after the kill and restart").contains("kill-commit", "kill-rollback");
                Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
                MessageConsumer reader = plain.createConsumer(plain.createQueue("xa.kill"));
                c.start();
                assertThat(reader.receive(1500)).as("nothing visible while both are in doubt").isNull();

                r.commit(toCommit, false);
                r.rollback(toRollBack);

                List<String> seen = new ArrayList<>();
                Message m = reader.receive(10_000);
                while (m != null) {
                    seen.add(((TextMessage) m).getText());
                    m = reader.receive(1500);
                }
                assertThat(seen).as("the committed message once, the rolled-back one never")
                        .containsExactly("committed-after-kill");
                assertThat(Arrays.stream(r.recover(XAResource.TMSTARTRSCAN | XAResource.TMENDRSCAN))
                        .map(x -> new String(x.getGlobalTransactionId(), StandardCharsets.US_ASCII)).toList())
                        .as("completed branches leave the recover list")
                        .doesNotContain("kill-commit", "kill-rollback");
            }
        } finally {
            again.kill();
        }
    }

    private static void prepare(XAResource r, XASession xs, Queue q, Xid xid, String text) throws Exception {
        r.start(xid, XAResource.TMNOFLAGS);
        xs.createProducer(q).send(xs.createTextMessage(text));
        r.end(xid, XAResource.TMSUCCESS);
        assertThat(r.prepare(xid)).isEqualTo(XAResource.XA_OK);
    }
}
