package dev.millrace.tck;

import static dev.millrace.tck.support.Jms.RECEIVE_MS;
import static org.assertj.core.api.Assertions.assertThat;

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

/** The JMS header fields: who sets them, and that they arrive. */
@TckTest
@Timeout(30)
@DisplayName("3.4 Message header fields")
class HeaderFieldsTest {


    @Test
    @DisplayName("3.4.1 JMSDestination is set by send, on the sent and the received message")
    void shouldSetJmsDestination(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        TextMessage m = s.createTextMessage("x");
        s.createProducer(q).send(m);
        assertThat(((Queue) m.getJMSDestination()).getQueueName()).isEqualTo(q.getQueueName());
        Message in = s.createConsumer(q).receive(RECEIVE_MS);
        assertThat(((Queue) in.getJMSDestination()).getQueueName()).isEqualTo(q.getQueueName());
    }

    @Test
    @DisplayName("3.4.1 JMSDestination of a topic message names the topic")
    void shouldSetJmsDestinationOfATopic(Jms jms) throws Exception {
        Session s = jms.session();
        Topic t = jms.topic();
        MessageConsumer consumer = s.createConsumer(t);
        s.createProducer(t).send(s.createTextMessage("x"));
        Message in = consumer.receive(RECEIVE_MS);
        assertThat(((Topic) in.getJMSDestination()).getTopicName()).isEqualTo(t.getTopicName());
    }

    @Test
    @DisplayName("3.4.2 JMSDeliveryMode: PERSISTENT by default, NON_PERSISTENT when the producer says so")
    void shouldCarryTheDeliveryMode(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        MessageProducer producer = s.createProducer(q);
        assertThat(producer.getDeliveryMode()).isEqualTo(DeliveryMode.PERSISTENT);
        producer.send(s.createTextMessage("p"));
        producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
        producer.send(s.createTextMessage("n"));
        MessageConsumer consumer = s.createConsumer(q);
        Message first = consumer.receive(RECEIVE_MS);
        Message second = consumer.receive(RECEIVE_MS);
        assertThat(first.getJMSDeliveryMode()).isEqualTo(DeliveryMode.PERSISTENT);
        assertThat(second.getJMSDeliveryMode()).isEqualTo(DeliveryMode.NON_PERSISTENT);
    }

    @Test
    @DisplayName("3.4.3 JMSMessageID starts with 'ID:', is unique, and the receiver sees the sender's")
    void shouldAssignUniqueMessageIds(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        MessageProducer producer = s.createProducer(q);
        TextMessage a = s.createTextMessage("a");
        TextMessage b = s.createTextMessage("b");
        producer.send(a);
        producer.send(b);
        assertThat(a.getJMSMessageID()).startsWith("ID:");
        assertThat(b.getJMSMessageID()).startsWith("ID:").isNotEqualTo(a.getJMSMessageID());
        MessageConsumer consumer = s.createConsumer(q);
        assertThat(consumer.receive(RECEIVE_MS).getJMSMessageID()).isEqualTo(a.getJMSMessageID());
        assertThat(consumer.receive(RECEIVE_MS).getJMSMessageID()).isEqualTo(b.getJMSMessageID());
    }

    @Test
    @DisplayName("3.4.4 JMSTimestamp is the time of send (between before and after the call)")
    void shouldSetTheTimestamp(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        TextMessage m = s.createTextMessage("x");
        long before = System.currentTimeMillis();
        s.createProducer(q).send(m);
        long after = System.currentTimeMillis();
        assertThat(m.getJMSTimestamp()).isBetween(before, after);
        assertThat(s.createConsumer(q).receive(RECEIVE_MS).getJMSTimestamp()).isEqualTo(m.getJMSTimestamp());
    }

    @Test
    @DisplayName("3.4.5 JMSCorrelationID set by the client arrives")
    void shouldCarryTheCorrelationId(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        TextMessage m = s.createTextMessage("x");
        m.setJMSCorrelationID("order-17");
        s.createProducer(q).send(m);
        assertThat(s.createConsumer(q).receive(RECEIVE_MS).getJMSCorrelationID()).isEqualTo("order-17");
    }

    @Test
    @DisplayName("3.4.6 JMSReplyTo set by the client arrives as a usable destination")
    void shouldCarryTheReplyTo(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        Queue replies = jms.queue();
        TextMessage m = s.createTextMessage("request");
        m.setJMSReplyTo(replies);
        s.createProducer(q).send(m);
        Message in = s.createConsumer(q).receive(RECEIVE_MS);
        assertThat(((Queue) in.getJMSReplyTo()).getQueueName()).isEqualTo(replies.getQueueName());
        s.createProducer(in.getJMSReplyTo()).send(s.createTextMessage("reply"));
        assertThat(((TextMessage) s.createConsumer(replies).receive(RECEIVE_MS)).getText()).isEqualTo("reply");
    }

    @Test
    @DisplayName("3.4.7 JMSRedelivered is false on a first delivery")
    void shouldNotMarkAFirstDeliveryRedelivered(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        s.createProducer(q).send(s.createTextMessage("x"));
        assertThat(s.createConsumer(q).receive(RECEIVE_MS).getJMSRedelivered()).isFalse();
    }

    @Test
    @DisplayName("3.4.8 JMSType set by the client arrives")
    void shouldCarryTheType(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        TextMessage m = s.createTextMessage("x");
        m.setJMSType("invoice");
        s.createProducer(q).send(m);
        assertThat(s.createConsumer(q).receive(RECEIVE_MS).getJMSType()).isEqualTo("invoice");
    }

    @Test
    @DisplayName("3.4.9 JMSExpiration is 0 without a time to live")
    void shouldNotExpireWithoutTimeToLive(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        s.createProducer(q).send(s.createTextMessage("x"));
        assertThat(s.createConsumer(q).receive(RECEIVE_MS).getJMSExpiration()).isZero();
    }

    @Test
    @DisplayName("3.4.9 JMSExpiration is JMSTimestamp + time to live")
    void shouldSetExpirationFromTimeToLive(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        MessageProducer producer = s.createProducer(q);
        producer.setTimeToLive(60_000);
        producer.send(s.createTextMessage("x"));
        Message in = s.createConsumer(q).receive(RECEIVE_MS);
        assertThat(in.getJMSExpiration()).isEqualTo(in.getJMSTimestamp() + 60_000);
    }

    @Test
    @DisplayName("3.4.10 JMSPriority: 4 by default, the producer's priority otherwise")
    void shouldCarryThePriority(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        MessageProducer producer = s.createProducer(q);
        assertThat(producer.getPriority()).isEqualTo(4);
        producer.send(s.createTextMessage("default"));
        producer.send(s.createTextMessage("seven"), DeliveryMode.PERSISTENT, 7, 0);
        MessageConsumer consumer = s.createConsumer(q);
        int first = consumer.receive(RECEIVE_MS).getJMSPriority();
        int second = consumer.receive(RECEIVE_MS).getJMSPriority();
        assertThat(new int[] {first, second}).containsExactlyInAnyOrder(4, 7);
    }

    @Test
    @DisplayName("3.4.11 send overrides JMSDeliveryMode, JMSPriority and JMSExpiration set on the message by the client")
    void shouldOverrideClientSetHeadersOnSend(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        TextMessage m = s.createTextMessage("x");
        m.setJMSPriority(9);
        m.setJMSDeliveryMode(DeliveryMode.NON_PERSISTENT);
        m.setJMSExpiration(12345);
        s.createProducer(q).send(m);
        Message in = s.createConsumer(q).receive(RECEIVE_MS);
        assertThat(in.getJMSPriority()).isEqualTo(4);
        assertThat(in.getJMSDeliveryMode()).isEqualTo(DeliveryMode.PERSISTENT);
        assertThat(in.getJMSExpiration()).isZero();
    }

    @Test
    @DisplayName("3.4.13 JMSDeliveryTime is JMSTimestamp without a delivery delay")
    void shouldSetTheDeliveryTime(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        TextMessage m = s.createTextMessage("x");
        s.createProducer(q).send(m);
        assertThat(m.getJMSDeliveryTime()).isEqualTo(m.getJMSTimestamp());
        Message in = s.createConsumer(q).receive(RECEIVE_MS);
        assertThat(in.getJMSDeliveryTime()).isEqualTo(in.getJMSTimestamp());
    }

    @Test
    @DisplayName("3.4.12 header fields of a received message may be changed by the client")
    void shouldLetTheClientChangeReceivedHeaders(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        s.createProducer(q).send(s.createTextMessage("x"));
        Message in = s.createConsumer(q).receive(RECEIVE_MS);
        in.setJMSType("changed");
        in.setJMSCorrelationID("changed");
        assertThat(in.getJMSType()).isEqualTo("changed");
        assertThat(in.getJMSCorrelationID()).isEqualTo("changed");
    }
}
