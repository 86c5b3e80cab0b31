package dev.millrace.tck;

import static dev.millrace.tck.support.Jms.NOTHING_MS;
import static dev.millrace.tck.support.Jms.RECEIVE_MS;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.tck.support.Jms;
import dev.millrace.tck.support.TckTest;
import jakarta.jms.DeliveryMode;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;

/**
 * Expiry (JMSExpiration, time to live) and priority. To let a message expire without sleeping, a test waits in
 * {@code receive(timeout)} on an empty queue of its own, the way an application would.
 */
@TckTest
@Timeout(30)
@DisplayName("3.4.9 / 3.4.10 Expiry and priority")
class ExpiryPriorityTest {

    /** Returns once {@code deadline} (epoch ms) has passed, waiting in receive on an empty queue. */
    private static void waitUntil(Jms jms, long deadline) throws Exception {
        MessageConsumer idle = jms.session().createConsumer(jms.queue());
        while (System.currentTimeMillis() <= deadline) {
            assertThat(idle.receive(Math.max(1, deadline - System.currentTimeMillis() + 1))).isNull();
        }
        idle.close();
    }

    @Test
    @DisplayName("3.4.9 an expired queue message is not delivered")
    void shouldNotDeliverAnExpiredQueueMessage(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        MessageProducer producer = s.createProducer(q);
        TextMessage doomed = s.createTextMessage("expired");
        producer.send(doomed, DeliveryMode.PERSISTENT, 4, 200);
        producer.send(s.createTextMessage("alive"));
        waitUntil(jms, doomed.getJMSExpiration());
        MessageConsumer consumer = s.createConsumer(q);
        assertThat(((TextMessage) consumer.receive(RECEIVE_MS)).getText()).isEqualTo("alive");
        assertThat(consumer.receive(NOTHING_MS)).isNull();
    }

    @Test
    @DisplayName("3.4.9 an expired message of a durable subscription is not delivered")
    void shouldNotDeliverAnExpiredTopicMessage(Jms jms) throws Exception {
        Topic t = jms.topic();
        var c = jms.connection();
        c.setClientID(jms.name("client"));
        c.start();
        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        String name = jms.name("sub");
        s.createDurableConsumer(t, name).close();
        MessageProducer producer = s.createProducer(t);
        TextMessage doomed = s.createTextMessage("expired");
        producer.send(doomed, DeliveryMode.PERSISTENT, 4, 200);
        producer.send(s.createTextMessage("alive"));
        waitUntil(jms, doomed.getJMSExpiration());
        MessageConsumer consumer = s.createDurableConsumer(t, name);
        assertThat(((TextMessage) consumer.receive(RECEIVE_MS)).getText()).isEqualTo("alive");
        consumer.close();
        s.unsubscribe(name);
    }

    @Test
    @DisplayName("3.4.9 an expired message is not shown by a QueueBrowser")
    void shouldNotBrowseAnExpiredMessage(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        TextMessage doomed = s.createTextMessage("expired");
        s.createProducer(q).send(doomed, DeliveryMode.PERSISTENT, 4, 200);
        waitUntil(jms, doomed.getJMSExpiration());
        var e = s.createBrowser(q).getEnumeration();
        List<String> seen = new ArrayList<>();
        while (e.hasMoreElements()) {
            seen.add(((TextMessage) e.nextElement()).getText());
        }
        assertThat(seen).isEmpty();
    }

    @Test
    @DisplayName("3.4.9 a message within its time to live is delivered with its JMSExpiration")
    void shouldDeliverAnUnexpiredMessage(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        MessageProducer producer = s.createProducer(q);
        producer.setTimeToLive(60_000);
        assertThat(producer.getTimeToLive()).isEqualTo(60_000);
        producer.send(s.createTextMessage("fresh"));
        Message in = s.createConsumer(q).receive(RECEIVE_MS);
        assertThat(in.getJMSExpiration()).isGreaterThan(System.currentTimeMillis());
    }

    @Test
    @DisplayName("3.4.9 JMSProducer.setTimeToLive: an expired message of a JMSContext send is not delivered")
    void shouldExpireAJmsProducerMessage(Jms jms) throws Exception {
        var context = jms.context();
        Queue q = jms.queue();
        context.createProducer().setTimeToLive(200).send(q, "expired");
        long sent = System.currentTimeMillis(); // JMSTimestamp <= sent, so JMSExpiration <= sent + 200
        context.createProducer().send(q, "alive");
        waitUntil(jms, sent + 200);
        assertThat(context.createConsumer(q).receiveBody(String.class, RECEIVE_MS)).isEqualTo("alive");
    }

    @Test
    @DisplayName("3.4.10 priority: expedited (9) messages waiting on a queue are delivered before normal (4) ones")
    void shouldDeliverHigherPriorityFirst(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        MessageProducer producer = s.createProducer(q);
        for (int i = 0; i < 5; i++) {
            producer.send(s.createTextMessage("normal" + i));
        }
        producer.send(s.createTextMessage("urgent"), DeliveryMode.PERSISTENT, 9, 0);
        Message first = s.createConsumer(q).receive(RECEIVE_MS);
        assertThat(((TextMessage) first).getText()).isEqualTo("urgent");
        assertThat(first.getJMSPriority()).isEqualTo(9);
    }

    @Test
    @DisplayName("3.4.10 priority: within one priority, send order is kept")
    void shouldKeepOrderWithinAPriority(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        MessageProducer producer = s.createProducer(q);
        producer.send(s.createTextMessage("low0"), DeliveryMode.PERSISTENT, 1, 0);
        producer.send(s.createTextMessage("high0"), DeliveryMode.PERSISTENT, 8, 0);
        producer.send(s.createTextMessage("low1"), DeliveryMode.PERSISTENT, 1, 0);
        producer.send(s.createTextMessage("high1"), DeliveryMode.PERSISTENT, 8, 0);
        MessageConsumer consumer = s.createConsumer(q);
        List<String> got = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            got.add(((TextMessage) consumer.receive(RECEIVE_MS)).getText());
        }
        assertThat(got.stream().filter(t -> t.startsWith("high")).toList()).containsExactly("high0", "high1");
        assertThat(got.stream().filter(t -> t.startsWith("low")).toList()).containsExactly("low0", "low1");
    }

    @Test
    @DisplayName("3.4.10 priority: every level 0..9 arrives as sent")
    void shouldCarryEveryPriorityLevel(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        MessageProducer producer = s.createProducer(q);
        for (int p = 0; p <= 9; p++) {
            TextMessage m = s.createTextMessage("p" + p);
            producer.send(m, DeliveryMode.PERSISTENT, p, 0);
        }
        MessageConsumer consumer = s.createConsumer(q);
        for (int i = 0; i <= 9; i++) {
            Message m = consumer.receive(RECEIVE_MS);
            assertThat(((TextMessage) m).getText()).isEqualTo("p" + m.getJMSPriority());
        }
    }
}
