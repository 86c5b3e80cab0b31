package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;

import javax.transaction.xa.XAException;
import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.Connection;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.XAConnection;
import jakarta.jms.XASession;

/**
 * A prepared branch and a broker that goes away: while it is down the XAResource answers XAER_RMFAIL; after its
 * restart the branch is in a new connection's recover scan, its message still invisible, and the commit makes it
 * visible once.
 */
@Timeout(120)
class XaBrokerRestartIntegrationTest {

    @TempDir
    Path dataDir;

    @Test
    void shouldAnswerRmFailWhileTheBrokerIsDownAndCommitAPreparedBranchAfterItsRestart() throws Exception {
        try (TestBroker broker = TestBroker.restartable(dataDir)) {
            MillraceXAConnectionFactory factory = new MillraceXAConnectionFactory(broker.bootstrap());
            factory.setRequestTimeoutMs(2000);
            factory.setFailoverTimeoutMs(0); // no failover window: an unreachable broker fails the call at once
            Xid xid = new XaResourceIntegrationTest.TestXid(4660, "restart-1".getBytes(StandardCharsets.US_ASCII),
                    new byte[] {2});
            Queue q;
            try (XAConnection xc = factory.createXAConnection()) {
                XASession xs = xc.createXASession();
                XAResource r = xs.getXAResource();
                q = xs.createQueue("xa.restart");
                r.start(xid, XAResource.TMNOFLAGS);
                xs.createProducer(q).send(xs.createTextMessage("prepared-before-restart"));
                r.end(xid, XAResource.TMSUCCESS);
                assertThat(r.prepare(xid)).isEqualTo(XAResource.XA_OK);

                broker.stop();
                assertThatThrownBy(() -> r.commit(xid, false)).isInstanceOf(XAException.class)
                        .extracting(t -> ((XAException) t).errorCode).isEqualTo(XAException.XAER_RMFAIL);
                assertThatThrownBy(() -> r.recover(XAResource.TMSTARTRSCAN)).isInstanceOf(XAException.class)
                        .extracting(t -> ((XAException) t).errorCode).isEqualTo(XAException.XAER_RMFAIL);
            }
            broker.restart();

            MillraceXAConnectionFactory recovering = new MillraceXAConnectionFactory(broker.bootstrap());
            recovering.setRequestTimeoutMs(10_000);
            try (XAConnection xc = recovering.createXAConnection();
                 Connection c = broker.factory().createConnection()) {
                XAResource r = xc.createXASession().getXAResource();
                Xid[] listed = r.recover(XAResource.TMSTARTRSCAN | XAResource.TMENDRSCAN);
                assertThat(Arrays.stream(listed).map(x -> new String(x.getGlobalTransactionId(),
                        StandardCharsets.US_ASCII))).contains("restart-1");
                Session plain = c.createSession(Session.AUTO_ACKNOWLEDGE);
                MessageConsumer reader = plain.createConsumer(q);
                c.start();
                assertThat(reader.receive(1500)).as("invisible while in doubt").isNull();
                r.commit(xid, false);
                assertThat(((TextMessage) reader.receive(10_000)).getText()).isEqualTo("prepared-before-restart");
                assertThat(reader.receive(1000)).as("once").isNull();
            }
        }
    }
}
