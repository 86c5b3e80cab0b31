package dev.millrace.ra.outbound;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.millrace.jms.MillraceConnectionFactory;
import dev.millrace.ra.it.MillraceBrokerExtension;
import jakarta.jms.CompletionListener;
import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.IllegalStateException;
import jakarta.jms.IllegalStateRuntimeException;
import jakarta.jms.JMSConsumer;
import jakarta.jms.JMSContext;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;

/**
 * The outbound side without a container, against a real broker in this JVM: the connection handles' JMS 3.1 EE
 * rules, local transactions of a managed connection, cleanup and matching.
 */
@ExtendWith(MillraceBrokerExtension.class)
@Timeout(60)
class ManagedConnectionIntegrationTest {

    private static MillraceManagedConnectionFactory managedFactory() {
        MillraceManagedConnectionFactory f = new MillraceManagedConnectionFactory();
        f.setBrokers(MillraceBrokerExtension.bootstrap());
        f.setRequestTimeoutMs(10_000);
        return f;
    }

    private static JMSContext client() {
        MillraceConnectionFactory f = new MillraceConnectionFactory(MillraceBrokerExtension.bootstrap());
        f.setRequestTimeoutMs(10_000);
        return f.createContext();
    }

    @Test
    void shouldAllowOneSessionPerConnectionAndRefuseWhatEeContainersForbid() throws Exception {
        ConnectionFactory factory = (ConnectionFactory) managedFactory().createConnectionFactory();
        try (Connection connection = factory.createConnection()) {
            Session session = connection.createSession(true, Session.SESSION_TRANSACTED);
            assertThatThrownBy(connection::createSession).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("one session");
            assertThatThrownBy(() -> session.setMessageListener(m -> { })).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> connection.setExceptionListener(e -> { }))
                    .isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> connection.setClientID("someone")).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(connection::stop).isInstanceOf(IllegalStateException.class);
            MessageConsumer consumer = session.createConsumer(session.createQueue("ra.unit.rules"));
            assertThatThrownBy(() -> consumer.setMessageListener(m -> { }))
                    .isInstanceOf(IllegalStateException.class);
            MessageProducer producer = session.createProducer(session.createQueue("ra.unit.rules"));
            assertThatThrownBy(() -> producer.send(session.createTextMessage("async"), new CompletionListener() {
                @Override
                public void onCompletion(Message message) {
                }

                @Override
                public void onException(Message message, Exception exception) {
                }
            })).isInstanceOf(IllegalStateException.class);
            session.close();
            connection.createSession().close();
        }
    }

    @Test
    void shouldServeContextsAndRefuseWhatEeContainersForbid() throws Exception {
        ConnectionFactory factory = (ConnectionFactory) managedFactory().createConnectionFactory();
        try (JMSContext context = factory.createContext(JMSContext.CLIENT_ACKNOWLEDGE)) {
            context.createProducer().send(context.createQueue("ra.unit.context"), "hello");
            JMSConsumer consumer = context.createConsumer(context.createQueue("ra.unit.context"));
            assertThat(consumer.receiveBody(String.class, 10_000)).isEqualTo("hello");
            assertThatThrownBy(() -> consumer.setMessageListener(m -> { }))
                    .isInstanceOf(IllegalStateRuntimeException.class);
            assertThatThrownBy(() -> context.setClientID("someone")).isInstanceOf(IllegalStateRuntimeException.class);
            assertThatThrownBy(() -> context.createContext(JMSContext.AUTO_ACKNOWLEDGE))
                    .isInstanceOf(IllegalStateRuntimeException.class);
            assertThatThrownBy(context::stop).isInstanceOf(IllegalStateRuntimeException.class);
            assertThatThrownBy(() -> context.createProducer().setAsync(new CompletionListener() {
                @Override
                public void onCompletion(Message message) {
                }

                @Override
                public void onException(Message message, Exception exception) {
                }
            })).isInstanceOf(IllegalStateRuntimeException.class);
        }
    }

    @Test
    void shouldCommitAndRollBackLocalTransactionsOfTheSession() throws Exception {
        MillraceManagedConnection mc = (MillraceManagedConnection) managedFactory().createManagedConnection(null, null);
        try {
            Connection handle = (Connection) mc.getConnection(null, null);
            Session session = handle.createSession();
            MessageProducer producer = session.createProducer(session.createQueue("ra.unit.local"));
            mc.getLocalTransaction().begin();
            producer.send(session.createTextMessage("rolled-back"));
            mc.getLocalTransaction().rollback();
            mc.getLocalTransaction().begin();
            producer.send(session.createTextMessage("committed"));
            mc.getLocalTransaction().commit();
            handle.close();
        } finally {
            mc.destroy();
        }
        try (JMSContext client = client()) {
            JMSConsumer consumer = client.createConsumer(client.createQueue("ra.unit.local"));
            assertThat(consumer.receiveBody(String.class, 10_000)).isEqualTo("committed");
            assertThat(consumer.receiveBody(String.class, 500)).isNull();
        }
    }

    @Test
    void shouldCloseWhatHandlesMadeOnCleanupAndMatchOnlyEqualFactoryAndCredentials() throws Exception {
        MillraceManagedConnectionFactory factory = managedFactory();
        MillraceManagedConnection mc = (MillraceManagedConnection) factory.createManagedConnection(null, null);
        try {
            Connection handle = (Connection) mc.getConnection(null, null);
            Session session = handle.createSession();
            MessageConsumer consumer = session.createConsumer(session.createQueue("ra.unit.cleanup"));
            mc.cleanup();
            assertThatThrownBy(consumer::receiveNoWait).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(handle::createSession).isInstanceOf(IllegalStateException.class);

            Set<MillraceManagedConnection> pool = Set.of(mc);
            assertThat(factory.matchManagedConnections(pool, null, null)).isSameAs(mc);
            assertThat(factory.matchManagedConnections(pool, null, new Credentials("other", "secret"))).isNull();
            MillraceManagedConnectionFactory other = managedFactory();
            other.setPrefetch(5);
            assertThat(other).isNotEqualTo(factory);
            assertThat(other.matchManagedConnections(pool, null, null)).isNull();
            assertThat(managedFactory()).isEqualTo(factory).hasSameHashCodeAs(factory);

            Connection again = (Connection) mc.getConnection(null, null);
            again.createSession().close();
            again.close();
        } finally {
            mc.destroy();
        }
    }

    @Test
    void shouldNameTheOptionWhenAPropertyIsInvalid() {
        MillraceManagedConnectionFactory factory = managedFactory();
        assertThatThrownBy(() -> factory.setPrefetch(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("prefetch");
        assertThatThrownBy(() -> factory.setBrokers("nowhere")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("host:port");
    }
}
