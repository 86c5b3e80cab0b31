package dev.millrace.tck;

import static dev.millrace.tck.support.Jms.RECEIVE_MS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.tck.support.Jms;
import dev.millrace.tck.support.TckTest;
import jakarta.jms.IllegalStateException;
import jakarta.jms.IllegalStateRuntimeException;
import jakarta.jms.InvalidDestinationException;
import jakarta.jms.InvalidDestinationRuntimeException;
import jakarta.jms.JMSContext;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.QueueConnection;
import jakarta.jms.QueueSession;
import jakarta.jms.Session;
import jakarta.jms.Topic;
import jakarta.jms.TopicConnection;
import jakarta.jms.TopicSession;

/** The exceptions methods must throw: closed objects, invalid arguments, the wrong messaging domain. */
@TckTest
@Timeout(30)
@DisplayName("Exceptions (closed objects, invalid arguments, wrong domain)")
class ExceptionsTest {

    private static QueueSession queueSession(Jms jms) throws Exception {
        QueueConnection c = jms.queueConnection();
        return c.createQueueSession(false, Session.AUTO_ACKNOWLEDGE);
    }

    private static TopicSession topicSession(Jms jms) throws Exception {
        TopicConnection c = jms.topicConnection();
        return c.createTopicSession(false, Session.AUTO_ACKNOWLEDGE);
    }

    @Test
    @DisplayName("createConsumer(null) throws InvalidDestinationException")
    void shouldRefuseAConsumerOfNull(Jms jms) throws Exception {
        Session s = jms.session();
        assertThatThrownBy(() -> s.createConsumer(null)).isInstanceOf(InvalidDestinationException.class);
    }

    @Test
    @DisplayName("createDurableConsumer(null topic) throws InvalidDestinationException")
    void shouldRefuseADurableConsumerOfNull(Jms jms) throws Exception {
        var c = jms.connection();
        c.setClientID(jms.name("client"));
        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        assertThatThrownBy(() -> s.createDurableConsumer(null, jms.name("sub")))
                .isInstanceOf(InvalidDestinationException.class);
    }

    @Test
    @DisplayName("createBrowser(null) throws InvalidDestinationException")
    void shouldRefuseABrowserOfNull(Jms jms) throws Exception {
        Session s = jms.session();
        assertThatThrownBy(() -> s.createBrowser(null)).isInstanceOf(InvalidDestinationException.class);
    }

    @Test
    @DisplayName("unidentified producer: send(null destination, message) throws InvalidDestinationException")
    void shouldRefuseSendToNull(Jms jms) throws Exception {
        Session s = jms.session();
        MessageProducer producer = s.createProducer(null);
        assertThatThrownBy(() -> producer.send(null, s.createTextMessage("x")))
                .isInstanceOf(InvalidDestinationException.class);
    }

    @Test
    @DisplayName("JMSContext.createConsumer(null) throws InvalidDestinationRuntimeException")
    void shouldRefuseAContextConsumerOfNull(Jms jms) {
        JMSContext context = jms.context();
        assertThatThrownBy(() -> context.createConsumer(null)).isInstanceOf(InvalidDestinationRuntimeException.class);
    }

    @Test
    @DisplayName("JMSProducer.send to a null destination throws InvalidDestinationRuntimeException")
    void shouldRefuseAContextSendToNull(Jms jms) {
        JMSContext context = jms.context();
        assertThatThrownBy(() -> context.createProducer().send(null, "x"))
                .isInstanceOf(InvalidDestinationRuntimeException.class);
    }

    @Test
    @DisplayName("a closed JMSContext throws IllegalStateRuntimeException; close twice is ignored")
    void shouldRefuseAClosedContext(Jms jms) {
        JMSContext context = jms.context();
        context.close();
        context.close();
        assertThatThrownBy(() -> context.createConsumer(jms.queue())).isInstanceOf(IllegalStateRuntimeException.class);
        assertThatThrownBy(context::createTextMessage).isInstanceOf(IllegalStateRuntimeException.class);
    }

    @Test
    @DisplayName("a QueueBrowser of a closed session throws IllegalStateException from getEnumeration")
    void shouldRefuseAClosedBrowser(Jms jms) throws Exception {
        Session s = jms.session();
        var browser = s.createBrowser(jms.queue());
        s.close();
        assertThatThrownBy(browser::getEnumeration).isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("a message listener cannot be set on a consumer of a closed session: IllegalStateException")
    void shouldRefuseAListenerOnAClosedConsumer(Jms jms) throws Exception {
        Session s = jms.session();
        var consumer = s.createConsumer(jms.queue());
        s.close();
        assertThatThrownBy(() -> consumer.setMessageListener(m -> { })).isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("QueueSession and TopicSession send and receive in their own domain")
    void shouldWorkInTheirOwnDomain(Jms jms) throws Exception {
        QueueConnection qc = jms.queueConnection();
        qc.start();
        QueueSession qs = qc.createQueueSession(false, Session.AUTO_ACKNOWLEDGE);
        Queue q = jms.queue();
        qs.createSender(q).send(qs.createTextMessage("q"));
        assertThat(qs.createReceiver(q).receive(RECEIVE_MS)).isNotNull();

        TopicConnection tc = jms.topicConnection();
        tc.start();
        TopicSession ts = tc.createTopicSession(false, Session.AUTO_ACKNOWLEDGE);
        Topic t = jms.topic();
        var subscriber = ts.createSubscriber(t);
        ts.createPublisher(t).publish(ts.createTextMessage("t"));
        assertThat(subscriber.receive(RECEIVE_MS)).isNotNull();
    }

    @Test
    @DisplayName("QueueSession: createTopic, createTemporaryTopic, createDurableSubscriber, createDurableConsumer, "
            + "createSharedConsumer, unsubscribe throw IllegalStateException")
    void shouldRefuseTopicMethodsOnAQueueSession(Jms jms) throws Exception {
        QueueSession s = queueSession(jms);
        Topic t = jms.topic();
        assertThatThrownBy(() -> s.createTopic("t")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(s::createTemporaryTopic).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> s.createDurableSubscriber(t, "d")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> s.createDurableConsumer(t, "d")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> s.createSharedConsumer(t, "d")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> s.createSharedDurableConsumer(t, "d")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> s.unsubscribe("d")).isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("TopicSession: createQueue, createTemporaryQueue, createBrowser throw IllegalStateException")
    void shouldRefuseQueueMethodsOnATopicSession(Jms jms) throws Exception {
        TopicSession s = topicSession(jms);
        Queue q = jms.queue();
        assertThatThrownBy(() -> s.createQueue("q")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(s::createTemporaryQueue).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> s.createBrowser(q)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> s.createBrowser(q, "a = 1")).isInstanceOf(IllegalStateException.class);
    }
}
