package dev.millrace.tck;

import static dev.millrace.tck.support.Jms.NOTHING_MS;
import static dev.millrace.tck.support.Jms.RECEIVE_MS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.tck.support.Jms;
import dev.millrace.tck.support.TckTest;
import jakarta.jms.Connection;
import jakarta.jms.IllegalStateException;
import jakarta.jms.JMSConsumer;
import jakarta.jms.JMSContext;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;

/** Acknowledgement modes and Session.recover. */
@TckTest
@Timeout(30)
@DisplayName("6.2.10 Acknowledgement modes and recover")
class AcknowledgeTest {

    private static void send(Jms jms, Queue q, int count) throws Exception {
        Session s = jms.session();
        MessageProducer producer = s.createProducer(q);
        for (int i = 0; i < count; i++) {
            producer.send(s.createTextMessage("m" + i));
        }
    }

    private static String text(Message m) throws Exception {
        assertThat(m).as("message received").isNotNull();
        return ((TextMessage) m).getText();
    }

    @Test
    @DisplayName("CLIENT_ACKNOWLEDGE: unacknowledged messages come back, redelivered, after the session closes")
    void shouldRedeliverUnacknowledgedMessages(Jms jms) throws Exception {
        Queue q = jms.queue();
        send(jms, q, 2);
        Connection c = jms.startedConnection();
        Session s = c.createSession(false, Session.CLIENT_ACKNOWLEDGE);
        MessageConsumer consumer = s.createConsumer(q);
        assertThat(text(consumer.receive(RECEIVE_MS))).isEqualTo("m0");
        assertThat(text(consumer.receive(RECEIVE_MS))).isEqualTo("m1");
        s.close();
        Session again = c.createSession(false, Session.CLIENT_ACKNOWLEDGE);
        MessageConsumer second = again.createConsumer(q);
        Message m = second.receive(RECEIVE_MS);
        assertThat(text(m)).isEqualTo("m0");
        assertThat(m.getJMSRedelivered()).isTrue();
        assertThat(m.getIntProperty("JMSXDeliveryCount")).isGreaterThanOrEqualTo(2);
    }

    @Test
    @DisplayName("CLIENT_ACKNOWLEDGE: acknowledge() settles every message the session consumed")
    void shouldAcknowledgeEverythingConsumed(Jms jms) throws Exception {
        Queue q1 = jms.queue();
        Queue q2 = jms.queue();
        send(jms, q1, 2);
        send(jms, q2, 1);
        Connection c = jms.startedConnection();
        Session s = c.createSession(false, Session.CLIENT_ACKNOWLEDGE);
        MessageConsumer a = s.createConsumer(q1);
        MessageConsumer b = s.createConsumer(q2);
        a.receive(RECEIVE_MS);
        Message last = a.receive(RECEIVE_MS);
        assertThat(b.receive(RECEIVE_MS)).isNotNull();
        last.acknowledge();
        s.close();
        Session again = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        assertThat(again.createConsumer(q1).receive(NOTHING_MS)).isNull();
        assertThat(again.createConsumer(q2).receive(NOTHING_MS)).isNull();
    }

    @Test
    @DisplayName("CLIENT_ACKNOWLEDGE: a consumer receives more than its prefetch without acknowledging")
    void shouldKeepDeliveringWithoutAcknowledge(Jms jms) throws Exception {
        Queue q = jms.queue();
        send(jms, q, 60);
        Session s = jms.startedConnection().createSession(false, Session.CLIENT_ACKNOWLEDGE);
        MessageConsumer consumer = s.createConsumer(q);
        Message last = null;
        for (int i = 0; i < 60; i++) {
            last = consumer.receive(RECEIVE_MS);
            assertThat(text(last)).isEqualTo("m" + i);
        }
        last.acknowledge();
    }

    @Test
    @DisplayName("CLIENT_ACKNOWLEDGE: recover() redelivers unacknowledged messages in order, JMSRedelivered set")
    void shouldRedeliverOnRecover(Jms jms) throws Exception {
        Queue q = jms.queue();
        send(jms, q, 3);
        Session s = jms.startedConnection().createSession(false, Session.CLIENT_ACKNOWLEDGE);
        MessageConsumer consumer = s.createConsumer(q);
        Message first = consumer.receive(RECEIVE_MS);
        first.acknowledge();
        assertThat(text(consumer.receive(RECEIVE_MS))).isEqualTo("m1");
        assertThat(text(consumer.receive(RECEIVE_MS))).isEqualTo("m2");
        s.recover();
        Message m1 = consumer.receive(RECEIVE_MS);
        assertThat(text(m1)).isEqualTo("m1");
        assertThat(m1.getJMSRedelivered()).isTrue();
        assertThat(m1.getIntProperty("JMSXDeliveryCount")).isEqualTo(2);
        assertThat(text(consumer.receive(RECEIVE_MS))).isEqualTo("m2");
        consumer.receive(NOTHING_MS);
    }

    @Test
    @DisplayName("CLIENT_ACKNOWLEDGE on a topic: recover() redelivers the unacknowledged messages")
    void shouldRedeliverTopicMessagesOnRecover(Jms jms) throws Exception {
        Topic t = jms.topic();
        Session s = jms.startedConnection().createSession(false, Session.CLIENT_ACKNOWLEDGE);
        MessageConsumer consumer = s.createConsumer(t);
        Session sender = jms.session();
        sender.createProducer(t).send(sender.createTextMessage("t0"));
        assertThat(text(consumer.receive(RECEIVE_MS))).isEqualTo("t0");
        s.recover();
        Message again = consumer.receive(RECEIVE_MS);
        assertThat(text(again)).isEqualTo("t0");
        assertThat(again.getJMSRedelivered()).isTrue();
    }

    @Test
    @DisplayName("AUTO_ACKNOWLEDGE: recover() after a receive does not redeliver the received message")
    void shouldNotRedeliverAutoAcknowledgedMessagesOnRecover(Jms jms) throws Exception {
        Queue q = jms.queue();
        send(jms, q, 1);
        Session s = jms.session();
        MessageConsumer consumer = s.createConsumer(q);
        assertThat(consumer.receive(RECEIVE_MS)).isNotNull();
        s.recover();
        assertThat(consumer.receive(NOTHING_MS)).isNull();
    }

    @Test
    @DisplayName("AUTO_ACKNOWLEDGE: recover() inside onMessage redelivers the current message")
    void shouldRedeliverWhenRecoveringInsideAListener(Jms jms) throws Exception {
        Queue q = jms.queue();
        Session s = jms.startedConnection().createSession(false, Session.AUTO_ACKNOWLEDGE);
        AtomicInteger calls = new AtomicInteger();
        CompletableFuture<Message> redelivered = new CompletableFuture<>();
        s.createConsumer(q).setMessageListener(m -> {
            try {
                if (calls.incrementAndGet() == 1) {
                    s.recover();
                } else {
                    redelivered.complete(m);
                }
            } catch (Exception e) {
                redelivered.completeExceptionally(e);
            }
        });
        send(jms, q, 1);
        Message m = redelivered.get(RECEIVE_MS, TimeUnit.MILLISECONDS);
        assertThat(m.getJMSRedelivered()).isTrue();
    }

    @Test
    @DisplayName("CLIENT_ACKNOWLEDGE: recover() inside onMessage redelivers the unacknowledged messages")
    void shouldRedeliverWhenRecoveringInsideAClientAckListener(Jms jms) throws Exception {
        Queue q = jms.queue();
        Session s = jms.startedConnection().createSession(false, Session.CLIENT_ACKNOWLEDGE);
        AtomicInteger calls = new AtomicInteger();
        CompletableFuture<Message> redelivered = new CompletableFuture<>();
        s.createConsumer(q).setMessageListener(m -> {
            try {
                if (calls.incrementAndGet() == 1) {
                    s.recover();
                } else {
                    m.acknowledge();
                    redelivered.complete(m);
                }
            } catch (Exception e) {
                redelivered.completeExceptionally(e);
            }
        });
        send(jms, q, 1);
        Message m = redelivered.get(RECEIVE_MS, TimeUnit.MILLISECONDS);
        assertThat(m.getJMSRedelivered()).isTrue();
    }

    @Test
    @DisplayName("DUPS_OK_ACKNOWLEDGE: messages are delivered and, once consumed, not delivered to a later consumer")
    void shouldConsumeInDupsOkMode(Jms jms) throws Exception {
        Queue q = jms.queue();
        send(jms, q, 5);
        Connection c = jms.startedConnection();
        Session s = c.createSession(false, Session.DUPS_OK_ACKNOWLEDGE);
        MessageConsumer consumer = s.createConsumer(q);
        for (int i = 0; i < 5; i++) {
            assertThat(text(consumer.receive(RECEIVE_MS))).isEqualTo("m" + i);
        }
        s.close();
        assertThat(jms.session().createConsumer(q).receive(NOTHING_MS)).isNull();
    }

    @Test
    @DisplayName("AUTO_ACKNOWLEDGE: Message.acknowledge() is ignored")
    void shouldIgnoreAcknowledgeInAutoMode(Jms jms) throws Exception {
        Queue q = jms.queue();
        send(jms, q, 1);
        Message m = jms.session().createConsumer(q).receive(RECEIVE_MS);
        m.acknowledge();
    }

    @Test
    @DisplayName("CLIENT_ACKNOWLEDGE: acknowledge() after the session closed throws IllegalStateException")
    void shouldRefuseAcknowledgeOnAClosedSession(Jms jms) throws Exception {
        Queue q = jms.queue();
        send(jms, q, 1);
        Session s = jms.startedConnection().createSession(false, Session.CLIENT_ACKNOWLEDGE);
        Message m = s.createConsumer(q).receive(RECEIVE_MS);
        s.close();
        assertThatThrownBy(m::acknowledge).isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("recover() of a transacted session throws IllegalStateException")
    void shouldRefuseRecoverInATransaction(Jms jms) throws Exception {
        Session s = jms.startedConnection().createSession(true, Session.SESSION_TRANSACTED);
        assertThatThrownBy(s::recover).isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("JMSContext CLIENT_ACKNOWLEDGE: acknowledge() settles; recover() redelivers what is not")
    void shouldAcknowledgeAndRecoverInAContext(Jms jms) throws Exception {
        Queue q = jms.queue();
        send(jms, q, 2);
        JMSContext context = jms.context(JMSContext.CLIENT_ACKNOWLEDGE);
        JMSConsumer consumer = context.createConsumer(q);
        assertThat(consumer.receiveBody(String.class, RECEIVE_MS)).isEqualTo("m0");
        context.acknowledge();
        assertThat(consumer.receiveBody(String.class, RECEIVE_MS)).isEqualTo("m1");
        context.recover();
        Message again = consumer.receive(RECEIVE_MS);
        assertThat(text(again)).isEqualTo("m1");
        assertThat(again.getJMSRedelivered()).isTrue();
        again.acknowledge();
        assertThat(consumer.receive(NOTHING_MS)).isNull();
    }

    @Test
    @DisplayName("CLIENT_ACKNOWLEDGE: after recover(), acknowledging the redelivered messages settles them")
    void shouldSettleAfterRecoverAndAcknowledge(Jms jms) throws Exception {
        Queue q = jms.queue();
        send(jms, q, 2);
        Connection c = jms.startedConnection();
        Session s = c.createSession(false, Session.CLIENT_ACKNOWLEDGE);
        MessageConsumer consumer = s.createConsumer(q);
        consumer.receive(RECEIVE_MS);
        consumer.receive(RECEIVE_MS);
        s.recover();
        List<Message> again = new ArrayList<>();
        again.add(consumer.receive(RECEIVE_MS));
        again.add(consumer.receive(RECEIVE_MS));
        assertThat(again).doesNotContainNull();
        again.get(1).acknowledge();
        s.close();
        assertThat(jms.session().createConsumer(q).receive(NOTHING_MS)).isNull();
    }
}
