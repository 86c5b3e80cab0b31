package dev.millrace.tck;

import static dev.millrace.tck.support.Jms.NOTHING_MS;
import static dev.millrace.tck.support.Jms.RECEIVE_MS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.tck.support.Jms;
import dev.millrace.tck.support.TckTest;
import jakarta.jms.Connection;
import jakarta.jms.IllegalStateException;
import jakarta.jms.InvalidDestinationException;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;

/** Topic subscriptions: unshared and shared, durable and non-durable. */
@TckTest
@Timeout(30)
@DisplayName("8.3 Durable and shared subscriptions")
class SubscriptionTest {

    private static Connection withClientId(Jms jms, String clientId) throws Exception {
        Connection c = jms.connection();
        c.setClientID(clientId);
        c.start();
        return c;
    }

    private static void publish(Jms jms, Topic t, String... texts) throws Exception {
        Session s = jms.session();
        MessageProducer producer = s.createProducer(t);
        for (String text : texts) {
            producer.send(s.createTextMessage(text));
        }
    }

    private static String text(Message m) throws Exception {
        assertThat(m).as("message received").isNotNull();
        return ((TextMessage) m).getText();
    }

    @Test
    @DisplayName("8.3.3 unshared durable: messages published while no consumer is active are kept")
    void shouldKeepMessagesForADurableSubscription(Jms jms) throws Exception {
        Topic t = jms.topic();
        String clientId = jms.name("client");
        String name = jms.name("sub");
        Connection c = withClientId(jms, clientId);
        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        s.createDurableConsumer(t, name).close();
        publish(jms, t, "while-away");
        c.close();
        Connection again = withClientId(jms, clientId);
        Session s2 = again.createSession(false, Session.AUTO_ACKNOWLEDGE);
        assertThat(text(s2.createDurableConsumer(t, name).receive(RECEIVE_MS))).isEqualTo("while-away");
    }

    @Test
    @DisplayName("8.3.3 unshared durable: unsubscribe deletes the subscription and its messages")
    void shouldDeleteOnUnsubscribe(Jms jms) throws Exception {
        Topic t = jms.topic();
        String name = jms.name("sub");
        Session s = withClientId(jms, jms.name("client")).createSession(false, Session.AUTO_ACKNOWLEDGE);
        s.createDurableConsumer(t, name).close();
        publish(jms, t, "dropped");
        s.unsubscribe(name);
        MessageConsumer fresh = s.createDurableConsumer(t, name);
        assertThat(fresh.receive(NOTHING_MS)).isNull();
        fresh.close();
        s.unsubscribe(name);
    }

    @Test
    @DisplayName("8.3.3 unsubscribe while a consumer is active throws JMSException")
    void shouldRefuseUnsubscribeWhileActive(Jms jms) throws Exception {
        Topic t = jms.topic();
        String name = jms.name("sub");
        Session s = withClientId(jms, jms.name("client")).createSession(false, Session.AUTO_ACKNOWLEDGE);
        s.createDurableConsumer(t, name);
        assertThatThrownBy(() -> s.unsubscribe(name)).isInstanceOf(JMSException.class);
    }

    @Test
    @DisplayName("8.3.3 unsubscribe of an unknown name throws InvalidDestinationException")
    void shouldRefuseUnsubscribeOfAnUnknownName(Jms jms) throws Exception {
        Session s = withClientId(jms, jms.name("client")).createSession(false, Session.AUTO_ACKNOWLEDGE);
        assertThatThrownBy(() -> s.unsubscribe(jms.name("nosuch"))).isInstanceOf(InvalidDestinationException.class);
    }

    @Test
    @DisplayName("8.3.3 unshared durable without a client id throws IllegalStateException")
    void shouldRequireAClientIdForAnUnsharedDurableSubscription(Jms jms) throws Exception {
        Session s = jms.session();
        Topic t = jms.topic();
        assertThatThrownBy(() -> s.createDurableConsumer(t, jms.name("sub")))
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("8.3.3 a second active consumer on an unshared durable subscription throws JMSException")
    void shouldRefuseASecondConsumerOnAnUnsharedDurableSubscription(Jms jms) throws Exception {
        Topic t = jms.topic();
        String name = jms.name("sub");
        Session s = withClientId(jms, jms.name("client")).createSession(false, Session.AUTO_ACKNOWLEDGE);
        s.createDurableConsumer(t, name);
        assertThatThrownBy(() -> s.createDurableConsumer(t, name)).isInstanceOf(JMSException.class);
    }

    @Test
    @DisplayName("8.3.3 recreating a durable subscription with another selector starts a new subscription")
    void shouldReplaceADurableSubscriptionWithAnotherSelector(Jms jms) throws Exception {
        Topic t = jms.topic();
        String name = jms.name("sub");
        Session s = withClientId(jms, jms.name("client")).createSession(false, Session.AUTO_ACKNOWLEDGE);
        s.createDurableConsumer(t, name, "k = 1", false).close();
        Session sender = jms.session();
        Message m = sender.createTextMessage("old");
        m.setIntProperty("k", 1);
        sender.createProducer(t).send(m);
        MessageConsumer replaced = s.createDurableConsumer(t, name, "k = 2", false);
        assertThat(replaced.receive(NOTHING_MS)).isNull();
        replaced.close();
        s.unsubscribe(name);
    }

    @Test
    @DisplayName("8.3.3 a durable subscription with a selector keeps only the selected messages")
    void shouldSelectOnADurableSubscription(Jms jms) throws Exception {
        Topic t = jms.topic();
        String name = jms.name("sub");
        Session s = withClientId(jms, jms.name("client")).createSession(false, Session.AUTO_ACKNOWLEDGE);
        s.createDurableConsumer(t, name, "k = 2", false).close();
        Session sender = jms.session();
        MessageProducer producer = sender.createProducer(t);
        for (int k = 1; k <= 3; k++) {
            Message m = sender.createTextMessage("k" + k);
            m.setIntProperty("k", k);
            producer.send(m);
        }
        MessageConsumer consumer = s.createDurableConsumer(t, name, "k = 2", false);
        assertThat(text(consumer.receive(RECEIVE_MS))).isEqualTo("k2");
        assertThat(consumer.receive(NOTHING_MS)).isNull();
    }

    @Test
    @DisplayName("8.3.2 shared non-durable: each message goes to one of the subscription's consumers")
    void shouldSplitASharedSubscription(Jms jms) throws Exception {
        Topic t = jms.topic();
        String name = jms.name("shared");
        MessageConsumer a = jms.session().createSharedConsumer(t, name);
        MessageConsumer b = jms.session().createSharedConsumer(t, name);
        MessageConsumer other = jms.session().createConsumer(t);
        publish(jms, t, "m0", "m1", "m2", "m3", "m4", "m5");
        Set<String> got = new HashSet<>();
        int count = 0;
        while (count < 6) {
            for (MessageConsumer consumer : List.of(a, b)) {
                Message m = consumer.receive(50);
                if (m != null) {
                    assertThat(got.add(text(m))).as("each message once").isTrue();
                    count++;
                }
            }
        }
        assertThat(a.receive(NOTHING_MS)).isNull();
        assertThat(b.receiveNoWait()).isNull();
        for (int i = 0; i < 6; i++) {
            assertThat(other.receive(RECEIVE_MS)).as("an unshared subscriber gets all").isNotNull();
        }
    }

    @Test
    @DisplayName("8.3.2 shared non-durable: the subscription ends when its last consumer closes")
    void shouldEndASharedSubscriptionWithItsLastConsumer(Jms jms) throws Exception {
        Topic t = jms.topic();
        String name = jms.name("shared");
        Session s = jms.session();
        s.createSharedConsumer(t, name).close();
        publish(jms, t, "lost");
        MessageConsumer again = s.createSharedConsumer(t, name);
        assertThat(again.receive(NOTHING_MS)).isNull();
    }

    @Test
    @DisplayName("8.3.2 shared: of 10 messages, both consumers get some while neither acknowledges all")
    void shouldNotStarveTheSecondSharedConsumer(Jms jms) throws Exception {
        Topic t = jms.topic();
        String name = jms.name("shared");
        MessageConsumer a = jms.session().createSharedConsumer(t, name);
        MessageConsumer b = jms.session().createSharedConsumer(t, name);
        publish(jms, t, "m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9");
        assertThat(a.receive(RECEIVE_MS)).as("the first consumer gets some").isNotNull();
        assertThat(b.receive(RECEIVE_MS)).as("the second consumer gets some").isNotNull();
    }

    @Test
    @DisplayName("8.3.4 shared durable: kept while no consumer is active, no client id needed")
    void shouldKeepMessagesForASharedDurableSubscription(Jms jms) throws Exception {
        Topic t = jms.topic();
        String name = jms.name("shareddurable");
        Session s = jms.session();
        s.createSharedDurableConsumer(t, name).close();
        publish(jms, t, "kept");
        MessageConsumer again = jms.session().createSharedDurableConsumer(t, name);
        assertThat(text(again.receive(RECEIVE_MS))).isEqualTo("kept");
        again.close();
        s.unsubscribe(name);
    }

    @Test
    @DisplayName("8.3.4 shared durable: two consumers in two connections share the messages")
    void shouldShareADurableSubscriptionAcrossConnections(Jms jms) throws Exception {
        Topic t = jms.topic();
        String name = jms.name("shareddurable");
        Session s1 = jms.session();
        MessageConsumer a = s1.createSharedDurableConsumer(t, name);
        MessageConsumer b = jms.session().createSharedDurableConsumer(t, name);
        publish(jms, t, "m0", "m1", "m2", "m3");
        Set<String> got = new HashSet<>();
        while (got.size() < 4) {
            for (MessageConsumer consumer : List.of(a, b)) {
                Message m = consumer.receive(50);
                if (m != null) {
                    assertThat(got.add(text(m))).isTrue();
                }
            }
        }
        a.close();
        b.close();
        s1.unsubscribe(name);
    }

    @Test
    @DisplayName("8.3.4 shared durable: a consumer on another topic while one is active throws JMSException")
    void shouldRefuseASharedDurableConsumerOnAnotherTopic(Jms jms) throws Exception {
        String name = jms.name("shareddurable");
        Session s = jms.session();
        s.createSharedDurableConsumer(jms.topic(), name);
        Topic other = jms.topic();
        assertThatThrownBy(() -> s.createSharedDurableConsumer(other, name)).isInstanceOf(JMSException.class);
    }

    @Test
    @DisplayName("8.3.4 shared durable: a consumer with another selector while one is active throws JMSException")
    void shouldRefuseASharedDurableConsumerWithAnotherSelector(Jms jms) throws Exception {
        String name = jms.name("shareddurable");
        Topic t = jms.topic();
        Session s = jms.session();
        s.createSharedDurableConsumer(t, name, "k = 1");
        assertThatThrownBy(() -> s.createSharedDurableConsumer(t, name, "k = 2")).isInstanceOf(JMSException.class);
    }

    @Test
    @DisplayName("8.3.2 shared non-durable: a consumer with another selector while one is active throws JMSException")
    void shouldRefuseASharedConsumerWithAnotherSelector(Jms jms) throws Exception {
        String name = jms.name("shared");
        Topic t = jms.topic();
        jms.session().createSharedConsumer(t, name, "k = 1");
        Session other = jms.session();
        assertThatThrownBy(() -> other.createSharedConsumer(t, name, "k = 2")).isInstanceOf(JMSException.class);
    }

    @Test
    @DisplayName("8.3.4 unsubscribe of a shared durable subscription with an active consumer throws JMSException")
    void shouldRefuseUnsubscribeOfAnActiveSharedDurableSubscription(Jms jms) throws Exception {
        String name = jms.name("shareddurable");
        Session s = jms.session();
        s.createSharedDurableConsumer(jms.topic(), name);
        assertThatThrownBy(() -> s.unsubscribe(name)).isInstanceOf(JMSException.class);
    }

    @Test
    @DisplayName("8.3.4 JMSContext.createSharedDurableConsumer keeps messages across consumers")
    void shouldKeepMessagesForASharedDurableSubscriptionInAContext(Jms jms) throws Exception {
        Topic t = jms.topic();
        String name = jms.name("shareddurable");
        JMSContext context = jms.context();
        context.createSharedDurableConsumer(t, name).close();
        context.createProducer().send(t, "kept");
        var consumer = context.createSharedDurableConsumer(t, name);
        assertThat(consumer.receiveBody(String.class, RECEIVE_MS)).isEqualTo("kept");
        consumer.close();
        context.unsubscribe(name);
    }

    @Test
    @DisplayName("8.3.3 JMSContext.createDurableConsumer (client id set) keeps messages across consumers")
    void shouldKeepMessagesForADurableSubscriptionInAContext(Jms jms) throws Exception {
        Topic t = jms.topic();
        String name = jms.name("sub");
        JMSContext context = jms.context();
        context.setClientID(jms.name("client"));
        context.createDurableConsumer(t, name).close();
        context.createProducer().send(t, "kept");
        var consumer = context.createDurableConsumer(t, name);
        assertThat(consumer.receiveBody(String.class, RECEIVE_MS)).isEqualTo("kept");
        consumer.close();
        context.unsubscribe(name);
    }

    @Test
    @DisplayName("8.3.4 shared durable: a consumer created after another one took its prefetch gets the rest")
    void shouldGiveALaterSharedConsumerTheMessagesBeyondTheFirstOnesPrefetch(Jms jms) throws Exception {
        Topic t = jms.topic();
        String name = jms.name("shareddurable");
        Session s = jms.session();
        s.createSharedDurableConsumer(t, name).close();
        String[] texts = new String[100];
        for (int i = 0; i < texts.length; i++) {
            texts[i] = "m" + i;
        }
        publish(jms, t, texts);
        MessageConsumer a = s.createSharedDurableConsumer(t, name);
        assertThat(a.receive(RECEIVE_MS)).as("the first consumer gets some").isNotNull();
        MessageConsumer b = jms.session().createSharedDurableConsumer(t, name);
        assertThat(b.receive(RECEIVE_MS)).as("the second consumer gets some of the other 99").isNotNull();
        a.close();
        b.close();
        s.unsubscribe(name);
    }

    @Test
    @DisplayName("8.3.2 shared: two consumers of one session both get some of 10 messages")
    void shouldNotStarveTheSecondSharedConsumerOfASession(Jms jms) throws Exception {
        Topic t = jms.topic();
        String name = jms.name("shared");
        Session s = jms.session();
        MessageConsumer a = s.createSharedConsumer(t, name);
        MessageConsumer b = s.createSharedConsumer(t, name);
        publish(jms, t, "m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9");
        assertThat(a.receive(RECEIVE_MS)).as("the first consumer gets some").isNotNull();
        assertThat(b.receive(RECEIVE_MS)).as("the second consumer gets some").isNotNull();
    }
}
