package dev.millrace.tck;

import static dev.millrace.tck.support.Jms.NOTHING_MS;
import static dev.millrace.tck.support.Jms.RECEIVE_MS;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.tck.support.Jms;
import dev.millrace.tck.support.TckTest;
import jakarta.jms.Connection;
import jakarta.jms.JMSConsumer;
import jakarta.jms.JMSContext;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;

/** noLocal: a subscriber that does not want the messages of its own connection. */
@TckTest
@Timeout(30)
@DisplayName("8.3 noLocal subscribers")
class NoLocalTest {

    @Test
    @DisplayName("noLocal: a subscriber does not get its own connection's messages, but others'")
    void shouldSkipOwnConnectionsMessages(Jms jms) throws Exception {
        Topic t = jms.topic();
        Connection c = jms.startedConnection();
        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        MessageConsumer noLocal = s.createConsumer(t, null, true);
        s.createProducer(t).send(s.createTextMessage("own"));
        Session other = jms.session();
        other.createProducer(t).send(other.createTextMessage("other"));
        assertThat(((TextMessage) noLocal.receive(RECEIVE_MS)).getText()).isEqualTo("other");
        assertThat(noLocal.receive(NOTHING_MS)).isNull();
    }

    @Test
    @DisplayName("noLocal: messages of another session of the same connection are local too")
    void shouldSkipMessagesOfAnotherSessionOfTheConnection(Jms jms) throws Exception {
        Topic t = jms.topic();
        Connection c = jms.startedConnection();
        MessageConsumer noLocal = c.createSession(false, Session.AUTO_ACKNOWLEDGE).createConsumer(t, null, true);
        Session sibling = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        sibling.createProducer(t).send(sibling.createTextMessage("sibling"));
        Session other = jms.session();
        other.createProducer(t).send(other.createTextMessage("other"));
        assertThat(((TextMessage) noLocal.receive(RECEIVE_MS)).getText()).isEqualTo("other");
    }

    @Test
    @DisplayName("noLocal false: a subscriber gets its own connection's messages")
    void shouldDeliverOwnMessagesWithoutNoLocal(Jms jms) throws Exception {
        Topic t = jms.topic();
        Session s = jms.session();
        MessageConsumer consumer = s.createConsumer(t, null, false);
        s.createProducer(t).send(s.createTextMessage("own"));
        assertThat(((TextMessage) consumer.receive(RECEIVE_MS)).getText()).isEqualTo("own");
    }

    @Test
    @DisplayName("noLocal with a selector: only others' selected messages")
    void shouldCombineNoLocalWithASelector(Jms jms) throws Exception {
        Topic t = jms.topic();
        Session s = jms.session();
        MessageConsumer consumer = s.createConsumer(t, "k = 1", true);
        Session other = jms.session();
        for (int k = 0; k < 3; k++) {
            TextMessage own = s.createTextMessage("own" + k);
            own.setIntProperty("k", k);
            s.createProducer(t).send(own);
            TextMessage theirs = other.createTextMessage("other" + k);
            theirs.setIntProperty("k", k);
            other.createProducer(t).send(theirs);
        }
        assertThat(((TextMessage) consumer.receive(RECEIVE_MS)).getText()).isEqualTo("other1");
        assertThat(consumer.receive(NOTHING_MS)).isNull();
    }

    @Test
    @DisplayName("noLocal in the simplified API: JMSContext.createConsumer(topic, null, true)")
    void shouldSkipOwnMessagesInAContext(Jms jms) {
        Topic t = jms.topic();
        JMSContext context = jms.context();
        JMSConsumer consumer = context.createConsumer(t, null, true);
        context.createProducer().send(t, "own");
        jms.context().createProducer().send(t, "other");
        assertThat(consumer.receiveBody(String.class, RECEIVE_MS)).isEqualTo("other");
        assertThat(consumer.receiveBody(String.class, NOTHING_MS)).isNull();
    }

    @Test
    @DisplayName("noLocal on a durable subscription: own connection's messages are not kept for it")
    void shouldSkipOwnMessagesOnADurableSubscription(Jms jms) throws Exception {
        Topic t = jms.topic();
        Connection c = jms.connection();
        c.setClientID(jms.name("client"));
        c.start();
        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        String name = jms.name("sub");
        MessageConsumer consumer = s.createDurableConsumer(t, name, null, true);
        s.createProducer(t).send(s.createTextMessage("own"));
        Session other = jms.session();
        other.createProducer(t).send(other.createTextMessage("other"));
        assertThat(((TextMessage) consumer.receive(RECEIVE_MS)).getText()).isEqualTo("other");
        assertThat(consumer.receive(NOTHING_MS)).isNull();
        consumer.close();
        s.unsubscribe(name);
    }
}
