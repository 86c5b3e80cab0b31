package dev.millrace.tck;

import static dev.millrace.tck.support.Jms.RECEIVE_MS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.tck.support.Jms;
import dev.millrace.tck.support.TckTest;
import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TemporaryQueue;
import jakarta.jms.TemporaryTopic;
import jakarta.jms.TextMessage;

/** Temporary queues and topics: scoped to their connection. */
@TckTest
@Timeout(30)
@DisplayName("6.2.3 Temporary destinations")
class TemporaryDestinationTest {

    @Test
    @DisplayName("6.2.3 a temporary queue carries messages within its connection")
    void shouldCarryMessagesThroughATemporaryQueue(Jms jms) throws Exception {
        Session s = jms.session();
        TemporaryQueue tq = s.createTemporaryQueue();
        assertThat(tq.getQueueName()).isNotBlank();
        s.createProducer(tq).send(s.createTextMessage("tmp"));
        assertThat(((TextMessage) s.createConsumer(tq).receive(RECEIVE_MS)).getText()).isEqualTo("tmp");
    }

    @Test
    @DisplayName("6.2.3 a temporary topic carries messages to its subscribers")
    void shouldCarryMessagesThroughATemporaryTopic(Jms jms) throws Exception {
        Session s = jms.session();
        TemporaryTopic tt = s.createTemporaryTopic();
        MessageConsumer consumer = s.createConsumer(tt);
        s.createProducer(tt).send(s.createTextMessage("tmp"));
        assertThat(((TextMessage) consumer.receive(RECEIVE_MS)).getText()).isEqualTo("tmp");
    }

    @Test
    @DisplayName("6.2.3 another connection may send to a temporary queue (request/reply through JMSReplyTo)")
    void shouldAcceptRepliesFromAnotherConnection(Jms jms) throws Exception {
        Session requester = jms.session();
        TemporaryQueue replies = requester.createTemporaryQueue();
        MessageConsumer replyConsumer = requester.createConsumer(replies);
        Queue requests = jms.queue();
        TextMessage request = requester.createTextMessage("ping");
        request.setJMSReplyTo(replies);
        requester.createProducer(requests).send(request);

        Session responder = jms.session();
        Message in = responder.createConsumer(requests).receive(RECEIVE_MS);
        TextMessage reply = responder.createTextMessage("pong");
        reply.setJMSCorrelationID(in.getJMSMessageID());
        responder.createProducer(in.getJMSReplyTo()).send(reply);

        TextMessage got = (TextMessage) replyConsumer.receive(RECEIVE_MS);
        assertThat(got.getText()).isEqualTo("pong");
        assertThat(got.getJMSCorrelationID()).isEqualTo(request.getJMSMessageID());
    }

    @Test
    @DisplayName("6.2.3 only the creating connection may consume from a temporary queue: JMSException")
    void shouldRefuseConsumersOfAnotherConnection(Jms jms) throws Exception {
        TemporaryQueue tq = jms.session().createTemporaryQueue();
        Session other = jms.session();
        assertThatThrownBy(() -> other.createConsumer(tq)).isInstanceOf(JMSException.class);
    }

    @Test
    @DisplayName("6.2.3 delete() of a temporary queue with an open consumer throws JMSException")
    void shouldRefuseDeleteWhileConsumed(Jms jms) throws Exception {
        Session s = jms.session();
        TemporaryQueue tq = s.createTemporaryQueue();
        s.createConsumer(tq);
        assertThatThrownBy(tq::delete).isInstanceOf(JMSException.class);
    }

    @Test
    @DisplayName("6.2.3 delete() of an unused temporary queue and topic succeeds")
    void shouldDeleteUnusedTemporaryDestinations(Jms jms) throws Exception {
        Session s = jms.session();
        TemporaryQueue tq = s.createTemporaryQueue();
        TemporaryTopic tt = s.createTemporaryTopic();
        MessageConsumer consumer = s.createConsumer(tq);
        consumer.close();
        tq.delete();
        tt.delete();
    }

    @Test
    @DisplayName("6.2.3 two temporary queues of one connection are distinct")
    void shouldMakeDistinctTemporaryQueues(Jms jms) throws Exception {
        Connection c = jms.startedConnection();
        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        TemporaryQueue a = s.createTemporaryQueue();
        TemporaryQueue b = s.createTemporaryQueue();
        assertThat(a.getQueueName()).isNotEqualTo(b.getQueueName());
        s.createProducer(a).send(s.createTextMessage("for-a"));
        assertThat(s.createConsumer(b).receiveNoWait()).isNull();
        assertThat(((TextMessage) s.createConsumer(a).receive(RECEIVE_MS)).getText()).isEqualTo("for-a");
    }

    @Test
    @DisplayName("6.2.3 JMSContext.createTemporaryQueue carries messages")
    void shouldCarryMessagesThroughAContextTemporaryQueue(Jms jms) {
        var context = jms.context();
        TemporaryQueue tq = context.createTemporaryQueue();
        context.createProducer().send(tq, "tmp");
        assertThat(context.createConsumer(tq).receiveBody(String.class, RECEIVE_MS)).isEqualTo("tmp");
    }
}
