package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import jakarta.jms.Connection;
import jakarta.jms.InvalidSelectorException;
import jakarta.jms.InvalidSelectorRuntimeException;
import jakarta.jms.JMSConsumer;
import jakarta.jms.JMSContext;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.QueueReceiver;
import jakarta.jms.QueueSession;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;

/**
 * Message selectors against a real broker: evaluated by the broker at acquisition on queues (non-matching messages
 * stay for other consumers, uncounted), by the subscriber on topics; invalid selectors fail at creation.
 */
@Timeout(60)
class SelectorIntegrationTest {

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

    private static List<String> texts(MessageConsumer consumer, int n) throws Exception {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Message m = consumer.receive(10_000);
            assertThat(m).as("message %d of %d", i + 1, n).isNotNull();
            out.add(((TextMessage) m).getText());
        }
        return out;
    }

    private static void sendColors(Session s, MessageProducer p, String... colors) throws Exception {
        for (int i = 0; i < colors.length; i++) {
            TextMessage m = s.createTextMessage(colors[i] + i);
            m.setStringProperty("color", colors[i]);
            p.send(m);
        }
    }

    @Test
    void shouldGiveTwoQueueConsumersWithDisjointSelectorsExactlyTheirMessages() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue queue = s.createQueue("sel.disjoint");
            MessageConsumer red = s.createConsumer(queue, "color = 'red'");
            QueueReceiver blue = ((QueueSession) c.createSession(false, Session.AUTO_ACKNOWLEDGE))
                    .createReceiver(queue, "color = 'blue'");
            c.start();
            sendColors(s, s.createProducer(queue), "red", "blue", "red", "blue", "blue", "red");

            assertThat(texts(red, 3)).containsExactly("red0", "red2", "red5");
            assertThat(texts(blue, 3)).containsExactly("blue1", "blue3", "blue4");
            assertThat(red.getMessageSelector()).isEqualTo("color = 'red'");
            assertThat(blue.getMessageSelector()).isEqualTo("color = 'blue'");
        }
    }

    @Test
    void shouldKeepAMessageNoConsumerMatchesUntilAMatchingConsumerTakesItAsAFirstDelivery() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue queue = s.createQueue("sel.unmatched");
            MessageConsumer red = s.createConsumer(queue, "color = 'red'");
            c.start();
            sendColors(s, s.createProducer(queue), "green", "red");

            assertThat(texts(red, 1)).as("the red message behind the unmatched green one").containsExactly("red1");
            red.close();

            MessageConsumer green = s.createConsumer(queue, "color = 'green'");
            Message m = green.receive(10_000);
            assertThat(((TextMessage) m).getText()).isEqualTo("green0");
            assertThat(m.getIntProperty("JMSXDeliveryCount")).as("passed over, never delivered").isEqualTo(1);
            assertThat(m.getJMSRedelivered()).isFalse();
        }
    }

    @Test
    void shouldRejectAnInvalidSelectorAtCreationNamingPositionAndToken() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue queue = s.createQueue("sel.invalid");
            Topic topic = s.createTopic("sel.invalid.topic");

            assertThatThrownBy(() -> s.createConsumer(queue, "color = = 'red'"))
                    .isInstanceOf(InvalidSelectorException.class).hasMessageContaining("position 8")
                    .hasMessageContaining("token =");
            assertThatThrownBy(() -> s.createConsumer(topic, "a AND AND b"))
                    .isInstanceOf(InvalidSelectorException.class).hasMessageContaining("position 6")
                    .hasMessageContaining("token AND");
            assertThatThrownBy(() -> s.createSharedConsumer(topic, "shared", "x LIKE 5"))
                    .isInstanceOf(InvalidSelectorException.class).hasMessageContaining("position");
        }
        try (JMSContext context = broker.factory().createContext()) {
            assertThatThrownBy(() -> context.createConsumer(context.createQueue("sel.invalid"), "(a = 1"))
                    .isInstanceOf(InvalidSelectorRuntimeException.class).hasMessageContaining("position 6")
                    .hasMessageContaining("token end of selector");
        }
    }

    /**
     * JMS 3.1 section 3.8.1.1: comparing a boolean with a number is an invalid selector (InvalidSelectorException at
     * consumer creation); {@code p NOT IN (...)} and {@code p LIKE ...} do not select a message whose {@code p} is
     * not a String (the identifier must be a String or NULL, the result is UNKNOWN), on a queue (the broker
     * evaluates) and a topic (the subscriber's fetch evaluates).
     */
    @Test
    void shouldRefuseBooleanAgainstNumberAndNotSelectNonStringsWithNotInOrLike() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue queue = s.createQueue("sel.types");
            Topic topic = s.createTopic("sel.types.topic");
            for (String invalid : List.of("TRUE = 0", "FALSE = 0", "(p = 'a') = 1")) {
                assertThatThrownBy(() -> s.createConsumer(queue, invalid)).as(invalid)
                        .isInstanceOf(InvalidSelectorException.class)
                        .hasMessageContaining("a boolean compares only with a boolean");
                assertThatThrownBy(() -> s.createConsumer(topic, invalid)).as(invalid)
                        .isInstanceOf(InvalidSelectorException.class);
            }

            MessageConsumer queueNotIn = s.createConsumer(queue, "p NOT IN ('a', 'b')");
            MessageConsumer topicNotIn = s.createConsumer(topic, "p NOT IN ('a', 'b')");
            MessageConsumer topicNotLike = s.createConsumer(topic, "p NOT LIKE 'a%'");
            c.start();
            for (jakarta.jms.Destination d : List.<jakarta.jms.Destination>of(queue, topic)) {
                MessageProducer p = s.createProducer(d);
                TextMessage number = s.createTextMessage("number");
                number.setIntProperty("p", 1);
                p.send(number);
                TextMessage bool = s.createTextMessage("boolean");
                bool.setBooleanProperty("p", true);
                p.send(bool);
                TextMessage listed = s.createTextMessage("listed");
                listed.setStringProperty("p", "a");
                p.send(listed);
                TextMessage other = s.createTextMessage("other");
                other.setStringProperty("p", "c");
                p.send(other);
            }
            assertThat(texts(queueNotIn, 1)).containsExactly("other");
            assertThat(texts(topicNotIn, 1)).containsExactly("other");
            assertThat(texts(topicNotLike, 1)).containsExactly("other");
        }
    }

    @Test
    void shouldSelectOnHeaderFieldsAndPropertiesAsInTheSpecificationsExample() throws Exception {
        try (JMSContext context = broker.factory().createContext()) {
            Queue queue = context.createQueue("sel.headers");
            JMSConsumer cars = context.createConsumer(queue, "JMSType = 'car' AND color = 'blue' AND weight > 2500");
            JMSConsumer urgent = context.createConsumer(queue,
                    "JMSPriority > 6 AND JMSCorrelationID = 'order-7' AND JMSDeliveryMode = 'NON_PERSISTENT'");
            Message heavyBlueCar = vehicle(context, "car", "blue", 3000);
            Message lightBlueCar = vehicle(context, "car", "blue", 2000);
            Message heavyBlueTruck = vehicle(context, "truck", "blue", 9000);
            Message order = context.createTextMessage("order");
            order.setJMSCorrelationID("order-7");
            context.createProducer().send(queue, lightBlueCar).send(queue, heavyBlueTruck).send(queue, heavyBlueCar);
            context.createProducer().setPriority(8).setDeliveryMode(jakarta.jms.DeliveryMode.NON_PERSISTENT)
                    .send(queue, order);

            assertThat(cars.receiveBody(String.class, 10_000)).isEqualTo("car/blue/3000");
            assertThat(urgent.receiveBody(String.class, 10_000)).isEqualTo("order");
            assertThat(cars.getMessageSelector()).isEqualTo("JMSType = 'car' AND color = 'blue' AND weight > 2500");

            JMSConsumer rest = context.createConsumer(queue, "weight IS NOT NULL");
            assertThat(List.of(rest.receiveBody(String.class, 10_000), rest.receiveBody(String.class, 10_000)))
                    .containsExactly("car/blue/2000", "truck/blue/9000");
        }
    }

    private static Message vehicle(JMSContext context, String type, String color, int weight) throws Exception {
        Message m = context.createTextMessage(type + "/" + color + "/" + weight);
        m.setJMSType(type);
        m.setStringProperty("color", color);
        m.setIntProperty("weight", weight);
        return m;
    }

    @Test
    void shouldDeliverOnlyMatchingMessagesToTopicSubscribersDurableOrNot() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            c.setClientID("sel-topic");
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Topic topic = s.createTopic("sel.topic");
            MessageConsumer red = s.createConsumer(topic, "color = 'red'");
            MessageConsumer durableBlue = s.createDurableConsumer(topic, "blue", "color = 'blue'", false);
            MessageConsumer all = s.createConsumer(topic, "  ");
            c.start();
            sendColors(s, s.createProducer(topic), "red", "blue", "green", "red", "blue");

            assertThat(texts(red, 2)).containsExactly("red0", "red3");
            assertThat(texts(durableBlue, 2)).containsExactly("blue1", "blue4");
            assertThat(texts(all, 5)).hasSize(5);
            assertThat(all.getMessageSelector()).isNull();
            assertThat(durableBlue.getMessageSelector()).isEqualTo("color = 'blue'");
        }
    }

    @Test
    void shouldReplaceADurableSubscriptionRecreatedWithAnotherSelectorAndKeepItWithTheSame() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            c.setClientID("sel-durable");
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Topic topic = s.createTopic("sel.durable");
            MessageProducer producer = s.createProducer(topic);
            c.start();
            s.createDurableConsumer(topic, "sub", "size > 1", false).close();
            producer.send(sized(s, "kept", 5));

            MessageConsumer same = s.createDurableConsumer(topic, "sub", "size > 1", false);
            assertThat(texts(same, 1)).as("same selector: the subscription is kept").containsExactly("kept");
            same.close();
            producer.send(sized(s, "dropped", 5));

            MessageConsumer other = s.createDurableConsumer(topic, "sub", "size > 2", false);
            producer.send(sized(s, "after", 5));
            assertThat(texts(other, 1)).as("another selector: a new subscription, from the end")
                    .containsExactly("after");
            other.close();
            producer.send(sized(s, "dropped too", 5));

            MessageConsumer noLocal = s.createDurableConsumer(topic, "sub", "size > 2", true);
            try (Connection other2 = broker.factory().createConnection()) {
                Session s2 = other2.createSession(Session.AUTO_ACKNOWLEDGE);
                s2.createProducer(topic).send(sized(s2, "remote", 5));
            }
            assertThat(texts(noLocal, 1)).as("another noLocal: a new subscription too").containsExactly("remote");
        }
    }

    private static Message sized(Session s, String text, int size) throws Exception {
        Message m = s.createTextMessage(text);
        m.setIntProperty("size", size);
        return m;
    }

    @Test
    void aSelectiveQueueConsumerFindsAMatchBehindThousandsOfUnmatchedMessages() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue q = s.createQueue("sel.deep");
            MessageProducer p = s.createProducer(q);
            p.setDeliveryMode(jakarta.jms.DeliveryMode.NON_PERSISTENT);
            for (int i = 0; i < 2500; i++) { // more than group.share.partition.max.record.locks (2000)
                Message m = s.createTextMessage("other" + i);
                m.setStringProperty("kind", "other");
                p.send(m);
            }
            Message wanted = s.createTextMessage("wanted");
            wanted.setStringProperty("kind", "match");
            p.send(wanted);
            MessageConsumer selective = s.createConsumer(q, "kind = 'match'");
            c.start();
            Message got = selective.receive(20_000);
            assertThat(got).isNotNull();
            assertThat(((TextMessage) got).getText()).isEqualTo("wanted");
            assertThat(got.getIntProperty("JMSXDeliveryCount")).isEqualTo(1);
        }
    }
}
