package dev.millrace.tck;

import static dev.millrace.tck.support.Jms.NOTHING_MS;
import static dev.millrace.tck.support.Jms.RECEIVE_MS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Collections;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.tck.support.Jms;
import dev.millrace.tck.support.TckTest;
import jakarta.jms.Connection;
import jakarta.jms.ConnectionMetaData;
import jakarta.jms.ExceptionListener;
import jakarta.jms.IllegalStateException;
import jakarta.jms.InvalidClientIDException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Queue;
import jakarta.jms.Session;

/** Connections: client identifier, start/stop, close, metadata, exception listener. */
@TckTest
@Timeout(30)
@DisplayName("6.1 Connections and client identifiers")
class ConnectionTest {

    @Test
    @DisplayName("6.1.2 client id: set once, read back")
    void shouldKeepTheClientIdSetOnce(Jms jms) throws Exception {
        Connection c = jms.connection();
        String id = jms.name("client");
        c.setClientID(id);
        assertThat(c.getClientID()).isEqualTo(id);
    }

    @Test
    @DisplayName("6.1.2 client id: setting it twice throws IllegalStateException")
    void shouldRefuseASecondClientId(Jms jms) throws Exception {
        Connection c = jms.connection();
        c.setClientID(jms.name("client"));
        assertThatThrownBy(() -> c.setClientID(jms.name("client"))).isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("6.1.2 client id: setting it after the connection was used throws IllegalStateException")
    void shouldRefuseAClientIdAfterUse(Jms jms) throws Exception {
        Connection c = jms.connection();
        c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        assertThatThrownBy(() -> c.setClientID(jms.name("client"))).isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("6.1.2 client id: a second connection with an id in use gets InvalidClientIDException")
    void shouldRefuseAClientIdInUseByAnotherConnection(Jms jms) throws Exception {
        String id = jms.name("client");
        jms.connection().setClientID(id);
        Connection second = jms.connection();
        assertThatThrownBy(() -> second.setClientID(id)).isInstanceOf(InvalidClientIDException.class);
    }

    @Test
    @DisplayName("6.1.2 client id: free again once its connection is closed")
    void shouldFreeTheClientIdOnClose(Jms jms) throws Exception {
        String id = jms.name("client");
        Connection first = jms.connection();
        first.setClientID(id);
        first.close();
        Connection second = jms.connection();
        second.setClientID(id);
        assertThat(second.getClientID()).isEqualTo(id);
    }

    @Test
    @DisplayName("6.1.4 a stopped connection delivers nothing; start() delivers")
    void shouldDeliverOnlyWhenStarted(Jms jms) throws Exception {
        Connection c = jms.connection();
        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        Queue q = jms.queue();
        s.createProducer(q).send(s.createTextMessage("x"));
        MessageConsumer consumer = s.createConsumer(q);
        assertThat(consumer.receive(NOTHING_MS)).isNull();
        c.start();
        assertThat(consumer.receive(RECEIVE_MS)).isNotNull();
    }

    @Test
    @DisplayName("6.1.4 stop() pauses delivery until start()")
    void shouldPauseDeliveryOnStop(Jms jms) throws Exception {
        Connection c = jms.startedConnection();
        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        Queue q = jms.queue();
        MessageConsumer consumer = s.createConsumer(q);
        c.stop();
        s.createProducer(q).send(s.createTextMessage("x"));
        assertThat(consumer.receive(NOTHING_MS)).isNull();
        c.start();
        assertThat(consumer.receive(RECEIVE_MS)).isNotNull();
    }

    @Test
    @DisplayName("6.1.4 start() of a started and stop() of a stopped connection are ignored")
    void shouldIgnoreRepeatedStartAndStop(Jms jms) throws Exception {
        Connection c = jms.connection();
        c.stop();
        c.start();
        c.start();
        c.stop();
        c.stop();
        c.start();
        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        Queue q = jms.queue();
        s.createProducer(q).send(s.createTextMessage("x"));
        assertThat(s.createConsumer(q).receive(RECEIVE_MS)).isNotNull();
    }

    @Test
    @DisplayName("6.1.5 close() of a closed connection is ignored")
    void shouldIgnoreASecondClose(Jms jms) throws Exception {
        Connection c = jms.connection();
        c.close();
        c.close();
    }

    @Test
    @DisplayName("6.1.5 a closed connection's methods throw IllegalStateException")
    void shouldThrowFromAClosedConnection(Jms jms) throws Exception {
        Connection c = jms.connection();
        c.close();
        assertThatThrownBy(() -> c.createSession(false, Session.AUTO_ACKNOWLEDGE))
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(c::start).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> c.setClientID("x")).isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("6.1.5 closing a connection closes its sessions, producers and consumers")
    void shouldCloseEverythingOfTheConnection(Jms jms) throws Exception {
        Connection c = jms.startedConnection();
        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        Queue q = jms.queue();
        MessageConsumer consumer = s.createConsumer(q);
        var producer = s.createProducer(q);
        c.close();
        assertThatThrownBy(() -> s.createTextMessage("x")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> consumer.receive(NOTHING_MS)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> producer.send(s.createMessage())).isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("6.1.5 close() ends a receive() blocked in another thread, which returns null")
    void shouldEndABlockedReceiveOnClose(Jms jms) throws Exception {
        Connection c = jms.startedConnection();
        MessageConsumer consumer = c.createSession(false, Session.AUTO_ACKNOWLEDGE).createConsumer(jms.queue());
        CompletableFuture<Message> received = CompletableFuture.supplyAsync(() -> {
            try {
                return consumer.receive();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        // give the other thread time to block in receive() (the consumer is not used concurrently)
        assertThatThrownBy(() -> received.get(NOTHING_MS, TimeUnit.MILLISECONDS))
                .isInstanceOf(java.util.concurrent.TimeoutException.class);
        c.close();
        assertThat(received.get(RECEIVE_MS, TimeUnit.MILLISECONDS)).isNull();
    }

    @Test
    @DisplayName("6.1.7 ConnectionMetaData: provider name, JMS version >= 2.0, JMSXDeliveryCount supported")
    void shouldDescribeTheProvider(Jms jms) throws Exception {
        ConnectionMetaData meta = jms.connection().getMetaData();
        assertThat(meta.getJMSProviderName()).isNotBlank();
        assertThat(meta.getJMSMajorVersion()).isGreaterThanOrEqualTo(2);
        assertThat(Collections.list(meta.getJMSXPropertyNames())).contains("JMSXDeliveryCount");
    }

    @Test
    @DisplayName("6.1.8 ExceptionListener: set and read back")
    void shouldKeepTheExceptionListener(Jms jms) throws Exception {
        Connection c = jms.connection();
        assertThat(c.getExceptionListener()).isNull();
        ExceptionListener listener = e -> { };
        c.setExceptionListener(listener);
        assertThat(c.getExceptionListener()).isSameAs(listener);
    }

    @Test
    @DisplayName("6.1.6 createSession: transacted sessions report SESSION_TRANSACTED, others their mode")
    void shouldReportTheSessionMode(Jms jms) throws Exception {
        Connection c = jms.connection();
        Session transacted = c.createSession(true, Session.AUTO_ACKNOWLEDGE);
        assertThat(transacted.getTransacted()).isTrue();
        assertThat(transacted.getAcknowledgeMode()).isEqualTo(Session.SESSION_TRANSACTED);
        assertThat(c.createSession(Session.CLIENT_ACKNOWLEDGE).getAcknowledgeMode())
                .isEqualTo(Session.CLIENT_ACKNOWLEDGE);
        assertThat(c.createSession(Session.DUPS_OK_ACKNOWLEDGE).getAcknowledgeMode())
                .isEqualTo(Session.DUPS_OK_ACKNOWLEDGE);
        assertThat(c.createSession().getAcknowledgeMode()).isEqualTo(Session.AUTO_ACKNOWLEDGE);
        assertThat(c.createSession(Session.SESSION_TRANSACTED).getTransacted()).isTrue();
    }

    @Test
    @DisplayName("6.1.6 createSession with an unknown acknowledge mode throws JMSException")
    void shouldRefuseAnUnknownAcknowledgeMode(Jms jms) throws Exception {
        Connection c = jms.connection();
        assertThatThrownBy(() -> c.createSession(false, 12345)).isInstanceOf(jakarta.jms.JMSException.class);
    }
}
