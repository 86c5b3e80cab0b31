package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.Connection;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSSecurityException;
import jakarta.jms.JMSSecurityRuntimeException;
import jakarta.jms.Session;

/**
 * Sends and receives refused by the broker's ACLs: a user without WRITE on a destination's topic gets a
 * {@link JMSSecurityException} (a {@link JMSSecurityRuntimeException} from a JMSContext) that names the destination
 * and the operation, while a destination the user may write to works on the same connection; a queue consumer whose
 * share group the user may not read gets one naming the queue.
 */
@Timeout(120)
class AuthorizationIntegrationTest {

    @TempDir
    static Path tmp;

    private static TestBroker broker;

    @BeforeAll
    static void startBroker() throws Exception {
        Map<String, String> settings = new HashMap<>();
        settings.put("listeners", "SASL_PLAINTEXT://127.0.0.1:0");
        settings.put("sasl.enabled.mechanisms", "PLAIN");
        settings.put("listener.name.sasl_plaintext.plain.sasl.jaas.config",
                "org.apache.kafka.common.security.plain.PlainLoginModule required user_admin=\"admin-secret\" "
                        + "user_alice=\"alice-secret\";");
        settings.put("authorizer.class.name", "acl");
        settings.put("super.users", "User:admin");
        broker = TestBroker.start(tmp.resolve("data"), settings);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", broker.bootstrap("SASL_PLAINTEXT"),
                "security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "PLAIN", "sasl.jaas.config",
                "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"admin\" "
                        + "password=\"admin-secret\";"))) {
            admin.createTopics(List.of(new NewTopic("open.orders", 1, (short) 1),
                    new NewTopic("closed.orders", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            admin.createAcls(List.of(
                    allow("open.orders", AclOperation.WRITE), allow("open.orders", AclOperation.DESCRIBE),
                    allow("closed.orders", AclOperation.DESCRIBE)))
                    .all().get(30, TimeUnit.SECONDS);
        }
    }

    private static AclBinding allow(String topic, AclOperation operation) {
        return new AclBinding(new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL),
                new AccessControlEntry("User:alice", "*", operation, AclPermissionType.ALLOW));
    }

    @AfterAll
    static void stopBroker() throws Exception {
        if (broker != null) {
            broker.close();
        }
    }

    private static MillraceConnectionFactory factory() {
        MillraceConnectionFactory factory = new MillraceConnectionFactory(broker.bootstrap("SASL_PLAINTEXT"));
        factory.setSecurityProtocol("SASL_PLAINTEXT");
        factory.setSaslMechanism("PLAIN");
        factory.setRequestTimeoutMs(10_000);
        factory.setAutoCreateDestinations(false);
        return factory;
    }

    @Test
    void shouldRefuseASendToATopicTheUserMayNotWriteNamingTheDestinationAndTheOperation() throws Exception {
        try (Connection connection = factory().createConnection("alice", "alice-secret")) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            session.createProducer(session.createTopic("open.orders")).send(session.createTextMessage("allowed"));
            var refused = session.createProducer(session.createTopic("closed.orders"));
            assertThatThrownBy(() -> refused.send(session.createTextMessage("refused")))
                    .isInstanceOf(JMSSecurityException.class)
                    .hasMessageContaining("send to")
                    .hasMessageContaining("closed.orders")
                    .hasMessageContaining("not authorized");
        }
    }

    @Test
    void shouldRefuseAReceiveFromAQueueWhoseShareGroupTheUserMayNotReadNamingTheQueue() throws Exception {
        try (Connection connection = factory().createConnection("alice", "alice-secret")) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            connection.start();
            assertThatThrownBy(() -> session.createConsumer(session.createQueue("closed.orders")).receive(30_000))
                    .isInstanceOf(JMSSecurityException.class)
                    .hasMessageContaining("closed.orders")
                    .hasMessageContaining("not authorized");
        }
    }

    @Test
    void shouldRefuseAReceiveFromATopicTheUserMayNotReadNamingTheTopic() throws Exception {
        try (Connection connection = factory().createConnection("alice", "alice-secret")) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            connection.start();
            assertThatThrownBy(() -> session.createConsumer(session.createTopic("closed.orders")).receive(30_000))
                    .isInstanceOf(JMSSecurityException.class)
                    .hasMessageContaining("closed.orders")
                    .hasMessageContaining("not authorized");
        }
    }

    @Test
    void shouldRefuseASendFromAContextWithTheRuntimeException() {
        try (JMSContext context = factory().createContext("alice", "alice-secret")) {
            assertThatThrownBy(() -> context.createProducer().send(context.createTopic("closed.orders"), "refused"))
                    .isInstanceOf(JMSSecurityRuntimeException.class)
                    .hasMessageContaining("closed.orders");
            assertThat(context.createProducer().send(context.createTopic("open.orders"), "allowed")).isNotNull();
        }
    }
}
