package dev.millrace.tck;

import static dev.millrace.tck.support.Jms.NOTHING_MS;
import static dev.millrace.tck.support.Jms.RECEIVE_MS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.tck.support.Jms;
import dev.millrace.tck.support.TckTest;
import jakarta.jms.Connection;
import jakarta.jms.IllegalStateException;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

/** Sessions: close, ordering, serial execution of listeners, producers with and without destination. */
@TckTest
@Timeout(30)
@DisplayName("6.2 Sessions and threading")
class SessionTest {

    @Test
    @DisplayName("6.2.1 close() of a closed session is ignored")
    void shouldIgnoreASecondClose(Jms jms) throws Exception {
        Session s = jms.session();
        s.close();
        s.close();
    }

    @Test
    @DisplayName("6.2.1 a closed session's methods throw IllegalStateException")
    void shouldThrowFromAClosedSession(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        s.close();
        assertThatThrownBy(() -> s.createTextMessage("x")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> s.createProducer(q)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> s.createConsumer(q)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(s::getAcknowledgeMode).isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("6.2.1 closing a session closes its consumers and producers")
    void shouldCloseConsumersAndProducers(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        MessageConsumer consumer = s.createConsumer(q);
        MessageProducer producer = s.createProducer(q);
        s.close();
        assertThatThrownBy(() -> consumer.receive(NOTHING_MS)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(producer::getDeliveryMode).isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("6.2.1 closing a session does not close its connection")
    void shouldKeepTheConnectionOpen(Jms jms) throws Exception {
        Connection c = jms.startedConnection();
        c.createSession(false, Session.AUTO_ACKNOWLEDGE).close();
        Session other = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        Queue q = jms.queue();
        other.createProducer(q).send(other.createTextMessage("x"));
        assertThat(other.createConsumer(q).receive(RECEIVE_MS)).isNotNull();
    }

    @Test
    @DisplayName("6.2.4 createQueue/createTopic: the name is kept")
    void shouldKeepDestinationNames(Jms jms) throws Exception {
        Session s = jms.session();
        String name = jms.name("named");
        assertThat(s.createQueue(name).getQueueName()).isEqualTo(name);
        assertThat(s.createTopic(name).getTopicName()).isEqualTo(name);
    }

    @Test
    @DisplayName("6.2.9 message order: one producer's messages arrive in send order")
    void shouldKeepSendOrder(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        MessageProducer producer = s.createProducer(q);
        for (int i = 0; i < 30; i++) {
            producer.send(s.createTextMessage("m" + i));
        }
        MessageConsumer consumer = s.createConsumer(q);
        for (int i = 0; i < 30; i++) {
            assertThat(((TextMessage) consumer.receive(RECEIVE_MS)).getText()).isEqualTo("m" + i);
        }
    }

    @Test
    @DisplayName("6.2.9 message order: a topic subscriber sees one producer's messages in send order")
    void shouldKeepSendOrderOnATopic(Jms jms) throws Exception {
        Session s = jms.session();
        var topic = jms.topic();
        MessageConsumer consumer = s.createConsumer(topic);
        MessageProducer producer = s.createProducer(topic);
        for (int i = 0; i < 30; i++) {
            producer.send(s.createTextMessage("m" + i));
        }
        for (int i = 0; i < 30; i++) {
            assertThat(((TextMessage) consumer.receive(RECEIVE_MS)).getText()).isEqualTo("m" + i);
        }
    }

    @Test
    @DisplayName("2.14 / 6.2.14 serial execution: the listeners of one session never run concurrently")
    void shouldRunOneSessionsListenersSerially(Jms jms) throws Exception {
        Connection c = jms.connection();
        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        Queue q1 = jms.queue();
        Queue q2 = jms.queue();
        AtomicInteger running = new AtomicInteger();
        AtomicInteger maxRunning = new AtomicInteger();
        CountDownLatch all = new CountDownLatch(40);
        jakarta.jms.MessageListener listener = m -> {
            maxRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
            Thread.onSpinWait();
            running.decrementAndGet();
            all.countDown();
        };
        s.createConsumer(q1).setMessageListener(listener);
        s.createConsumer(q2).setMessageListener(listener);
        Session sender = jms.connection().createSession(false, Session.AUTO_ACKNOWLEDGE);
        MessageProducer producer = sender.createProducer(null);
        for (int i = 0; i < 20; i++) {
            producer.send(q1, sender.createTextMessage("a" + i));
            producer.send(q2, sender.createTextMessage("b" + i));
        }
        c.start();
        assertThat(all.await(RECEIVE_MS, TimeUnit.MILLISECONDS)).isTrue();
        assertThat(maxRunning.get()).isEqualTo(1);
    }

    @Test
    @DisplayName("6.2.14 a listener runs on another thread than the one that set it, one message at a time in order")
    void shouldDeliverToAListenerInOrder(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        List<String> got = new ArrayList<>();
        CountDownLatch all = new CountDownLatch(10);
        s.createConsumer(q).setMessageListener(m -> {
            try {
                synchronized (got) {
                    got.add(((TextMessage) m).getText());
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
            all.countDown();
        });
        Session sender = jms.connection().createSession(false, Session.AUTO_ACKNOWLEDGE);
        MessageProducer producer = sender.createProducer(q);
        for (int i = 0; i < 10; i++) {
            producer.send(sender.createTextMessage("m" + i));
        }
        assertThat(all.await(RECEIVE_MS, TimeUnit.MILLISECONDS)).isTrue();
        synchronized (got) {
            assertThat(got).containsExactly("m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9");
        }
    }

    @Test
    @DisplayName("6.2 unidentified producer (null destination) sends to the destination given per send")
    void shouldSendThroughAnUnidentifiedProducer(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        MessageProducer producer = s.createProducer(null);
        assertThat(producer.getDestination()).isNull();
        producer.send(q, s.createTextMessage("x"));
        assertThat(s.createConsumer(q).receive(RECEIVE_MS)).isNotNull();
    }

    @Test
    @DisplayName("7.1 unidentified producer: send(message) without destination throws UnsupportedOperationException")
    void shouldRefuseSendWithoutDestination(Jms jms) throws Exception {
        Session s = jms.session();
        MessageProducer producer = s.createProducer(null);
        assertThatThrownBy(() -> producer.send(s.createTextMessage("x")))
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    @DisplayName("7.1 identified producer: send(destination, message) throws UnsupportedOperationException")
    void shouldRefuseAnotherDestinationOnAnIdentifiedProducer(Jms jms) throws Exception {
        Session s = jms.session();
        MessageProducer producer = s.createProducer(jms.queue());
        assertThatThrownBy(() -> producer.send(jms.queue(), s.createTextMessage("x")))
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    @DisplayName("6.2 two sessions of one connection consume independently")
    void shouldConsumeIndependentlyInTwoSessions(Jms jms) throws Exception {
        Connection c = jms.startedConnection();
        Session s1 = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        Session s2 = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        var topic = jms.topic();
        MessageConsumer a = s1.createConsumer(topic);
        MessageConsumer b = s2.createConsumer(topic);
        s1.createProducer(topic).send(s1.createTextMessage("x"));
        assertThat(a.receive(RECEIVE_MS)).isNotNull();
        assertThat(b.receive(RECEIVE_MS)).isNotNull();
    }
}
