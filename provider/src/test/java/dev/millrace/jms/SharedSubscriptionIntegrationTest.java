package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.Connection;
import jakarta.jms.IllegalStateException;
import jakarta.jms.JMSConsumer;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSException;
import jakarta.jms.JMSRuntimeException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;

/** JMS 2.0 shared subscriptions (share groups on the topic) against a real broker. */
@Timeout(60)
class SharedSubscriptionIntegrationTest {

    @TempDir
    static Path dataDir;
    static TestBroker broker;

    @BeforeAll
    static void startBroker() throws Exception {
        broker = TestBroker.start(dataDir);
    }

    @AfterAll
    static void stopBroker() throws Exception {
        broker.close();
    }

    private static String text(MessageConsumer consumer) throws Exception {
        Message m = consumer.receive(10_000);
        assertThat(m).isNotNull();
        return ((TextMessage) m).getText();
    }

    @Test
    void shouldSplitATopicBetweenTheConsumersOfASharedSubscriptionFromItsCreationOn() throws Exception {
        try (Connection c1 = broker.factory().createConnection();
             Connection c2 = broker.factory().createConnection()) {
            Session s1 = c1.createSession(Session.AUTO_ACKNOWLEDGE);
            Session s2 = c2.createSession(Session.AUTO_ACKNOWLEDGE);
            Topic topic = s1.createTopic("shared.split");
            MessageProducer producer = s1.createProducer(topic);
            producer.send(s1.createTextMessage("before"));

            MessageConsumer a = s1.createSharedConsumer(topic, "split");
            MessageConsumer b = s2.createSharedConsumer(topic, "split");
            MessageConsumer other = s2.createSharedConsumer(topic, "another");
            c1.start();
            c2.start();
            int count = 40;
            for (int i = 0; i < count; i++) {
                producer.send(s1.createTextMessage("m" + i));
            }

            List<String> received = new ArrayList<>();
            while (received.size() < count) {
                for (MessageConsumer consumer : List.of(a, b)) {
                    Message m = consumer.receive(50);
                    if (m != null) {
                        received.add(((TextMessage) m).getText());
                    }
                }
            }
            Set<String> expected = new HashSet<>();
            for (int i = 0; i < count; i++) {
                expected.add("m" + i);
            }
            assertThat(received).as("each message to exactly one consumer, the one sent before not at all")
                    .hasSize(count).containsExactlyInAnyOrderElementsOf(expected);
            assertThat(text(other)).as("another subscription gets its own copy").isEqualTo("m0");
        }
    }

    @Test
    void shouldRemoveANonDurableSharedSubscriptionWhenItsLastConsumerCloses() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Topic topic = s.createTopic("shared.gone");
            MessageProducer producer = s.createProducer(topic);
            c.start();
            MessageConsumer first = s.createSharedConsumer(topic, "gone");
            MessageConsumer second = s.createSharedConsumer(topic, "gone");
            first.close();
            producer.send(s.createTextMessage("kept while one consumer is open"));
            assertThat(text(second)).isEqualTo("kept while one consumer is open");
            second.close();
            producer.send(s.createTextMessage("lost with the subscription"));

            MessageConsumer again = s.createSharedConsumer(topic, "gone");
            producer.send(s.createTextMessage("new"));
            assertThat(text(again)).as("a new subscription, from the end").isEqualTo("new");
        }
    }

    @Test
    void shouldKeepASharedDurableSubscriptionUntilUnsubscribed() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            c.setClientID("shared-durable");
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Topic topic = s.createTopic("shared.durable");
            MessageProducer producer = s.createProducer(topic);
            c.start();
            s.createSharedDurableConsumer(topic, "keep").close();
            producer.send(s.createTextMessage("while closed"));

            MessageConsumer again = s.createSharedDurableConsumer(topic, "keep");
            assertThat(text(again)).isEqualTo("while closed");
            assertThatThrownBy(() -> s.unsubscribe("keep")).isInstanceOf(IllegalStateException.class);
            again.close();
            s.unsubscribe("keep");
            producer.send(s.createTextMessage("after unsubscribe"));

            MessageConsumer fresh = s.createSharedDurableConsumer(topic, "keep");
            producer.send(s.createTextMessage("fresh"));
            assertThat(text(fresh)).isEqualTo("fresh");
        }
    }

    @Test
    void shouldDeliverOnlyWhatTheSharedSubscriptionsSelectorMatchesAndRefuseAnotherSelectorWhileInUse()
            throws Exception {
        try (JMSContext context = broker.factory().createContext()) {
            Topic topic = context.createTopic("shared.selector");
            JMSConsumer red = context.createSharedConsumer(topic, "reds", "color = 'red'");
            for (String color : List.of("blue", "red", "green", "red")) {
                Message m = context.createTextMessage(color);
                m.setStringProperty("color", color);
                context.createProducer().send(topic, m);
            }

            assertThat(red.receiveBody(String.class, 10_000)).isEqualTo("red");
            assertThat(red.receiveBody(String.class, 10_000)).isEqualTo("red");
            assertThat(red.getMessageSelector()).isEqualTo("color = 'red'");
            assertThatThrownBy(() -> context.createSharedConsumer(topic, "reds", "color = 'blue'"))
                    .hasMessageContaining("active consumer");
            JMSConsumer sameSelector = context.createSharedConsumer(topic, "reds", "color = 'red'");
            sameSelector.close();
        }
    }

    @Test
    void shouldRefuseAnUnsharedDurableSubscriptionNamedLikeAnActiveSharedDurableOne() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            c.setClientID("mixed");
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Topic topic = s.createTopic("shared.mixed");
            s.createSharedDurableConsumer(topic, "name");

            assertThatThrownBy(() -> s.createDurableConsumer(topic, "name")).isInstanceOf(JMSException.class)
                    .hasMessageContaining("shared durable subscription name is active");
        }
    }

    /**
     * Session.createSharedDurableConsumer javadoc: while a consumer is active on shared durable subscription S, creating
     * one on S with another topic or another selector throws JMSException, at once after the first was created; the
     * same topic and selector join it. Without active consumers, another selector is allowed.
     */
    @Test
    void shouldRefuseASharedDurableConsumerWithAnotherTopicOrSelectorWhileOneIsActive() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            c.setClientID("shared-durable-rules");
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Topic topic = s.createTopic("shared.rules.durable");
            Topic other = s.createTopic("shared.rules.durable.other");
            MessageConsumer first = s.createSharedDurableConsumer(topic, "sd", "a = 1");

            assertThatThrownBy(() -> s.createSharedDurableConsumer(topic, "sd", "a = 2"))
                    .isInstanceOf(JMSException.class).hasMessageContaining("a = 1");
            assertThatThrownBy(() -> s.createSharedDurableConsumer(topic, "sd"))
                    .isInstanceOf(JMSException.class);
            assertThatThrownBy(() -> s.createSharedDurableConsumer(other, "sd", "a = 1"))
                    .isInstanceOf(JMSException.class).hasMessageContaining("shared.rules.durable.other");
            MessageConsumer second = s.createSharedDurableConsumer(topic, "sd", "a = 1");

            first.close();
            second.close();
            s.createSharedDurableConsumer(topic, "sd", "a = 2").close();
            s.unsubscribe("sd");
        }
    }

    /**
     * Session.createSharedConsumer javadoc: a shared non-durable subscription that exists (has a consumer) with another
     * topic or selector refuses a consumer with JMSException, also when the existing consumer is another connection's.
     */
    @Test
    void shouldRefuseASharedConsumerWithAnotherTopicOrSelectorAlsoFromAnotherConnection() throws Exception {
        try (Connection c1 = broker.factory().createConnection();
             Connection c2 = broker.factory().createConnection()) {
            Session s1 = c1.createSession(Session.AUTO_ACKNOWLEDGE);
            Session s2 = c2.createSession(Session.AUTO_ACKNOWLEDGE);
            Topic topic = s1.createTopic("shared.rules.plain");
            Topic other = s1.createTopic("shared.rules.plain.other");
            s1.createSharedConsumer(topic, "plain", "b = 'x'");

            assertThatThrownBy(() -> s1.createSharedConsumer(topic, "plain", "b = 'y'"))
                    .isInstanceOf(JMSException.class);
            assertThatThrownBy(() -> s2.createSharedConsumer(topic, "plain", "b = 'y'"))
                    .as("another connection").isInstanceOf(JMSException.class);
            assertThatThrownBy(() -> s2.createSharedConsumer(other, "plain", "b = 'x'"))
                    .as("another connection, another topic").isInstanceOf(JMSException.class);
            s2.createSharedConsumer(topic, "plain", "b = 'x'").close();
        }
    }

    /**
     * JMSContext.createSharedDurableConsumer and createSharedConsumer javadoc: the same rules throw JMSRuntimeException.
     */
    @Test
    void shouldRefuseAnotherTopicOrSelectorWithJmsRuntimeExceptionFromAContext() throws Exception {
        try (JMSContext context = broker.factory().createContext()) {
            context.setClientID("shared-context-rules");
            Topic topic = context.createTopic("shared.rules.context");
            Topic other = context.createTopic("shared.rules.context.other");
            context.createSharedDurableConsumer(topic, "csd", "a > 1");
            context.createSharedConsumer(topic, "cs");

            assertThatThrownBy(() -> context.createSharedDurableConsumer(topic, "csd", "a > 2"))
                    .isInstanceOf(JMSRuntimeException.class);
            assertThatThrownBy(() -> context.createSharedDurableConsumer(other, "csd", "a > 1"))
                    .isInstanceOf(JMSRuntimeException.class);
            assertThatThrownBy(() -> context.createSharedConsumer(topic, "cs", "a > 1"))
                    .isInstanceOf(JMSRuntimeException.class);
            assertThatThrownBy(() -> context.createSharedConsumer(other, "cs"))
                    .isInstanceOf(JMSRuntimeException.class);
        }
        try (JMSContext context = broker.factory().createContext()) {
            context.setClientID("shared-context-rules");
            context.unsubscribe("csd");
        }
    }
}
