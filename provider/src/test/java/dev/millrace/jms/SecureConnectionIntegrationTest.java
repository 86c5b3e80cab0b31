package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import javax.naming.InitialContext;
import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSSecurityException;
import jakarta.jms.JMSSecurityRuntimeException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Queue;
import jakarta.jms.QueueBrowser;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;
import jakarta.jms.XAConnection;
import jakarta.jms.XASession;

/**
 * The JMS provider against a broker whose listeners use TLS and SASL: every path the provider takes to the broker
 * (kafka-clients for sends, topic consumers and the liveness check; its own share-group client for queue consumers;
 * its extension client for queue browsing) authenticates, and wrong credentials fail at createConnection and
 * createContext.
 */
@Timeout(120)
class SecureConnectionIntegrationTest {

    @TempDir
    static Path tmp;

    private static TestTls tls;
    private static TestBroker broker;

    @BeforeAll
    static void startBroker() throws Exception {
        tls = TestTls.create(tmp);
        Map<String, String> settings = new HashMap<>();
        settings.put("listeners", "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,"
                + "SSL://127.0.0.1:0");
        settings.put("ssl.keystore.location", tls.brokerKeystore.toString());
        settings.put("ssl.keystore.password", TestTls.PASSWORD);
        settings.put("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-512");
        String plain = "org.apache.kafka.common.security.plain.PlainLoginModule required user_alice=\"alice-secret\";";
        settings.put("listener.name.sasl_ssl.plain.sasl.jaas.config", plain);
        settings.put("listener.name.sasl_plaintext.plain.sasl.jaas.config", plain);
        broker = TestBroker.start(tmp.resolve("data"), settings);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", broker.bootstrap("PLAINTEXT")))) {
            admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("carol",
                    new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), "carol-secret")))
                    .all().get(30, TimeUnit.SECONDS);
        }
    }

    @AfterAll
    static void stopBroker() throws Exception {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void shouldSendReceiveAndBrowseOverSaslSslWithScram() throws Exception {
        MillraceConnectionFactory factory = saslSsl("SCRAM-SHA-512");
        try (Connection connection = factory.createConnection("carol", "carol-secret")) {
            Session session = connection.createSession(false, Session.CLIENT_ACKNOWLEDGE);
            Queue queue = session.createQueue("secure-queue");
            Topic topic = session.createTopic("secure-topic");
            MessageConsumer topicConsumer = session.createConsumer(topic);
            connection.start();
            session.createProducer(queue).send(session.createTextMessage("to the queue"));
            session.createProducer(topic).send(session.createTextMessage("to the topic"));

            QueueBrowser browser = session.createBrowser(queue);
            Enumeration<?> browsed = browser.getEnumeration();
            assertThat(browsed.hasMoreElements()).isTrue();
            assertThat(((TextMessage) browsed.nextElement()).getText()).isEqualTo("to the queue");
            browser.close();

            Message fromQueue = session.createConsumer(queue).receive(30_000);
            assertThat(fromQueue).isNotNull();
            assertThat(((TextMessage) fromQueue).getText()).isEqualTo("to the queue");
            fromQueue.acknowledge();
            Message fromTopic = topicConsumer.receive(30_000);
            assertThat(fromTopic).isNotNull();
            assertThat(((TextMessage) fromTopic).getText()).isEqualTo("to the topic");
        }
    }

    @Test
    void shouldRunATwoPhaseCommitOverSaslSsl() throws Exception {
        MillraceXAConnectionFactory factory = new MillraceXAConnectionFactory(broker.bootstrap("SASL_SSL"));
        factory.setRequestTimeoutMs(10_000);
        factory.setSecurityProtocol("SASL_SSL");
        factory.setSslTruststoreLocation(tls.truststore.toString());
        factory.setSslTruststorePassword(TestTls.PASSWORD);
        try (XAConnection xc = factory.createXAConnection("carol", "carol-secret")) {
            XASession xs = xc.createXASession();
            XAResource resource = xs.getXAResource();
            Queue queue = xs.createQueue("secure-xa");
            Xid xid = new XaResourceIntegrationTest.TestXid(4660, "secure-xa-gtrid".getBytes(
                    java.nio.charset.StandardCharsets.UTF_8), new byte[] {1});
            resource.start(xid, XAResource.TMNOFLAGS);
            xs.getSession().createProducer(queue).send(xs.createTextMessage("two-phase"));
            resource.end(xid, XAResource.TMSUCCESS);
            assertThat(resource.prepare(xid)).isEqualTo(XAResource.XA_OK);
            resource.commit(xid, false);
            Session session = xc.createSession(false, Session.AUTO_ACKNOWLEDGE);
            xc.start();
            Message received = session.createConsumer(queue).receive(30_000);
            assertThat(received).isNotNull();
            assertThat(((TextMessage) received).getText()).isEqualTo("two-phase");
        }
        assertThatThrownBy(() -> factory.createXAConnection("carol", "wrong").close())
                .isInstanceOf(JMSSecurityException.class);
    }

    @Test
    void shouldFailCreateConnectionAndCreateContextWithWrongCredentials() {
        MillraceConnectionFactory factory = saslSsl("SCRAM-SHA-512");
        assertThatThrownBy(() -> factory.createConnection("carol", "wrong").close())
                .isInstanceOf(JMSSecurityException.class).hasMessageContaining("refused");
        assertThatThrownBy(() -> factory.createConnection("nobody", "carol-secret").close())
                .isInstanceOf(JMSSecurityException.class);
        assertThatThrownBy(() -> factory.createContext("carol", "wrong").close())
                .isInstanceOf(JMSSecurityRuntimeException.class);
        assertThatThrownBy(() -> factory.createConnection().close())
                .isInstanceOf(JMSSecurityException.class).hasMessageContaining("give a user and a password");
        // the right credentials still work after the refusals (no client shared with a refused connection)
        try (JMSContext context = factory.createContext("carol", "carol-secret")) {
            context.createProducer().send(context.createQueue("after-refusals"), "ok");
        }
    }

    @Test
    void shouldAuthenticateWithPlainFromJndiOptions() throws Exception {
        Hashtable<String, String> env = new Hashtable<>();
        env.put("java.naming.factory.initial", "dev.millrace.jms.jndi.MillraceInitialContextFactory");
        env.put("connectionFactory.cf", broker.bootstrap("SASL_PLAINTEXT") + "?securityProtocol=SASL_PLAINTEXT"
                + "&saslMechanism=PLAIN&user=alice&password=alice-secret");
        ConnectionFactory factory = (ConnectionFactory) new InitialContext(env).lookup("cf");
        try (JMSContext context = factory.createContext()) {
            Queue queue = context.createQueue("plain-queue");
            context.createProducer().send(queue, "plain");
            assertThat(context.createConsumer(queue).receiveBody(String.class, 30_000)).isEqualTo("plain");
        }
        assertThatThrownBy(() -> factory.createContext("alice", "wrong").close())
                .isInstanceOf(JMSSecurityRuntimeException.class);
    }

    @Test
    void shouldConnectOverTlsWithTheTruststoreAndRefuseWithoutIt() throws Exception {
        MillraceConnectionFactory factory = new MillraceConnectionFactory(broker.bootstrap("SSL"));
        factory.setRequestTimeoutMs(10_000);
        factory.setSecurityProtocol("SSL");
        factory.setSslTruststoreLocation(tls.truststore.toString());
        factory.setSslTruststorePassword(TestTls.PASSWORD);
        try (JMSContext context = factory.createContext()) {
            Queue queue = context.createQueue("tls-queue");
            context.createProducer().send(queue, "over TLS");
            assertThat(context.createConsumer(queue).receiveBody(String.class, 30_000)).isEqualTo("over TLS");
        }
        MillraceConnectionFactory untrusting = new MillraceConnectionFactory(broker.bootstrap("SSL"));
        untrusting.setSecurityProtocol("SSL");
        assertThatThrownBy(() -> untrusting.createConnection().close()).isInstanceOf(JMSSecurityException.class);
    }

    private static MillraceConnectionFactory saslSsl(String mechanism) {
        MillraceConnectionFactory factory = new MillraceConnectionFactory(broker.bootstrap("SASL_SSL"));
        factory.setRequestTimeoutMs(10_000);
        factory.setSecurityProtocol("SASL_SSL");
        factory.setSaslMechanism(mechanism);
        factory.setSslTruststoreLocation(tls.truststore.toString());
        factory.setSslTruststorePassword(TestTls.PASSWORD);
        return factory;
    }
}
