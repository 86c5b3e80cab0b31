package dev.millrace.tck;

import static dev.millrace.tck.support.Jms.NOTHING_MS;
import static dev.millrace.tck.support.Jms.RECEIVE_MS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import dev.millrace.tck.support.Jms;
import dev.millrace.tck.support.TckTest;
import jakarta.jms.InvalidSelectorException;
import jakarta.jms.InvalidSelectorRuntimeException;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;

/**
 * Message selectors. Each case sends the probe message (properties below) and then a sentinel to a queue of its own,
 * and reads with {@code (<selector>) OR tckSentinel = 'yes'}: the first message received is the probe if the selector
 * selects it, else the sentinel, so no case waits for "nothing". (The probe has no tckSentinel, so the OR adds
 * UNKNOWN, which leaves TRUE true and FALSE/UNKNOWN unselected, as the selector alone would.)
 *
 * <p>Probe: s='abc', u='a_x', q="it's", i=5 (int), l=7 (long), d=2.5 (double), b=true, no property n; JMSType 't',
 * JMSCorrelationID 'cid', priority 4, PERSISTENT.
 */
@TckTest
@Timeout(30)
@DisplayName("3.8 Message selectors")
class SelectorTest {

    private static Session session;

    @BeforeAll
    static void openSession(Jms jms) throws Exception {
        session = jms.session();
    }

    static List<Arguments> cases() {
        return List.of(
                Arguments.of("i = 5", true),
                Arguments.of("i = 6", false),
                Arguments.of("i <> 6", true),
                Arguments.of("i > 4 AND i < 6", true),
                Arguments.of("i >= 5 AND i <= 5", true),
                Arguments.of("i BETWEEN 5 AND 7", true),
                Arguments.of("i NOT BETWEEN 5 AND 7", false),
                Arguments.of("i + 1 = 6", true),
                Arguments.of("i * 2 - l = 3", true),
                Arguments.of("-i = -5", true),
                Arguments.of("i / 2 = 2", true),
                Arguments.of("i = 5.0", true),
                Arguments.of("d > 2 AND d < 3", true),
                Arguments.of("d BETWEEN 2 AND 3", true),
                Arguments.of("s = 'abc'", true),
                Arguments.of("s = 'ABC'", false),
                Arguments.of("s <> 'abc'", false),
                Arguments.of("q = 'it''s'", true),
                Arguments.of("s LIKE 'a%'", true),
                Arguments.of("s LIKE '_bc'", true),
                Arguments.of("s LIKE 'b%'", false),
                Arguments.of("s NOT LIKE 'b%'", true),
                Arguments.of("u LIKE 'a!_%' ESCAPE '!'", true),
                Arguments.of("s LIKE 'a!_%' ESCAPE '!'", false),
                Arguments.of("s IN ('x', 'abc')", true),
                Arguments.of("s IN ('x', 'y')", false),
                Arguments.of("s NOT IN ('x', 'y')", true),
                Arguments.of("n IS NULL", true),
                Arguments.of("s IS NOT NULL", true),
                Arguments.of("s IS NULL", false),
                Arguments.of("n = 5", false),
                Arguments.of("NOT (n = 5)", false),
                Arguments.of("n = 5 OR i = 5", true),
                Arguments.of("n = 5 AND i = 5", false),
                Arguments.of("n IN ('a')", false),
                Arguments.of("n LIKE 'a%'", false),
                Arguments.of("b = TRUE", true),
                Arguments.of("b", true),
                Arguments.of("NOT b", false),
                Arguments.of("I = 5", false),
                Arguments.of("i = '5'", false),
                Arguments.of("JMSType = 't'", true),
                Arguments.of("JMSCorrelationID = 'cid'", true),
                Arguments.of("JMSPriority = 4", true),
                Arguments.of("JMSDeliveryMode = 'PERSISTENT'", true),
                Arguments.of("JMSMessageID IS NOT NULL", true),
                Arguments.of("JMSTimestamp > 0", true),
                Arguments.of("i = 99 AND s = 'x' OR s = 'abc'", true),
                Arguments.of("i = 99 AND (s = 'x' OR s = 'abc')", false),
                Arguments.of("((i = 5))", true));
    }

    private static Message probe() throws JMSException {
        Message m = session.createTextMessage("probe");
        m.setStringProperty("s", "abc");
        m.setStringProperty("u", "a_x");
        m.setStringProperty("q", "it's");
        m.setIntProperty("i", 5);
        m.setLongProperty("l", 7);
        m.setDoubleProperty("d", 2.5);
        m.setBooleanProperty("b", true);
        m.setJMSType("t");
        m.setJMSCorrelationID("cid");
        return m;
    }

    /** True if {@code selector} selects the probe. */
    private static boolean selects(Jms jms, String selector) throws JMSException {
        Queue q = jms.queue();
        MessageProducer producer = session.createProducer(q);
        producer.send(probe());
        TextMessage sentinel = session.createTextMessage("sentinel");
        sentinel.setStringProperty("tckSentinel", "yes");
        producer.send(sentinel);
        producer.close();
        try (MessageConsumer consumer = session.createConsumer(q, "(" + selector + ") OR tckSentinel = 'yes'")) {
            TextMessage first = (TextMessage) consumer.receive(RECEIVE_MS);
            assertThat(first).as("probe or sentinel received").isNotNull();
            return first.getText().equals("probe");
        }
    }

    @ParameterizedTest(name = "3.8.1 selector [{0}] selects the probe: {1}")
    @MethodSource("cases")
    void shouldSelectAsTheSpecificationSays(String selector, boolean expected, Jms jms) throws Exception {
        assertThat(selects(jms, selector)).as(selector).isEqualTo(expected);
    }

    @Test
    @DisplayName("3.8.1.1 NOT IN on a non-String (int) property does not select")
    void shouldNotSelectNotInOfANumber(Jms jms) throws Exception {
        assertThat(selects(jms, "i NOT IN ('a', 'b')")).isFalse();
    }

    @ParameterizedTest(name = "3.8.1.1 invalid selector [{0}]: InvalidSelectorException")
    @ValueSource(strings = {"i = = 5", "(i = 5", "s = 'unterminated", "i BETWEEN 1", "s LIKE 5", "AND i = 5",
        "i = 5 AND", "s IN ()"})
    void shouldRefuseAnInvalidSelector(String selector, Jms jms) throws Exception {
        Queue q = jms.queue();
        assertThatThrownBy(() -> session.createConsumer(q, selector)).isInstanceOf(InvalidSelectorException.class);
    }

    @Test
    @DisplayName("3.8.1.1 invalid selector [TRUE = 0] (boolean compared with a number): InvalidSelectorException")
    void shouldRefuseABooleanComparedWithANumber(Jms jms) throws Exception {
        Queue q = jms.queue();
        assertThatThrownBy(() -> session.createConsumer(q, "TRUE = 0")).isInstanceOf(InvalidSelectorException.class);
    }

    @Test
    @DisplayName("3.8.1 JMSContext.createConsumer with an invalid selector throws InvalidSelectorRuntimeException")
    void shouldRefuseAnInvalidSelectorInAContext(Jms jms) {
        var context = jms.context();
        Queue q = jms.queue();
        assertThatThrownBy(() -> context.createConsumer(q, "a = = 1"))
                .isInstanceOf(InvalidSelectorRuntimeException.class);
    }

    @Test
    @DisplayName("3.8.1 an empty selector is no selector: every message is delivered")
    void shouldTreatAnEmptySelectorAsNone(Jms jms) throws Exception {
        Queue q = jms.queue();
        session.createProducer(q).send(session.createTextMessage("x"));
        try (MessageConsumer consumer = session.createConsumer(q, "")) {
            assertThat(consumer.receive(RECEIVE_MS)).isNotNull();
        }
    }

    @Test
    @DisplayName("3.8 queue messages a selector does not select stay for other consumers")
    void shouldLeaveUnselectedQueueMessages(Jms jms) throws Exception {
        Queue q = jms.queue();
        MessageProducer producer = session.createProducer(q);
        for (String color : List.of("red", "blue", "red", "blue")) {
            Message m = session.createTextMessage(color);
            m.setStringProperty("color", color);
            producer.send(m);
        }
        try (MessageConsumer red = session.createConsumer(q, "color = 'red'")) {
            assertThat(((TextMessage) red.receive(RECEIVE_MS)).getText()).isEqualTo("red");
            assertThat(((TextMessage) red.receive(RECEIVE_MS)).getText()).isEqualTo("red");
            assertThat(red.receive(NOTHING_MS)).isNull();
        }
        try (MessageConsumer all = session.createConsumer(q)) {
            assertThat(((TextMessage) all.receive(RECEIVE_MS)).getText()).isEqualTo("blue");
            assertThat(((TextMessage) all.receive(RECEIVE_MS)).getText()).isEqualTo("blue");
        }
    }

    @Test
    @DisplayName("3.8 a topic subscriber with a selector gets only the selected messages")
    void shouldFilterATopicSubscription(Jms jms) throws Exception {
        Topic t = jms.topic();
        try (MessageConsumer big = session.createConsumer(t, "size > 10")) {
            MessageProducer producer = session.createProducer(t);
            for (int size : new int[] {5, 20, 7, 30}) {
                Message m = session.createTextMessage("s" + size);
                m.setIntProperty("size", size);
                producer.send(m);
            }
            assertThat(((TextMessage) big.receive(RECEIVE_MS)).getText()).isEqualTo("s20");
            assertThat(((TextMessage) big.receive(RECEIVE_MS)).getText()).isEqualTo("s30");
            assertThat(big.receive(NOTHING_MS)).isNull();
        }
    }

    @Test
    @DisplayName("3.8 a JMSContext consumer with a selector gets only the selected messages")
    void shouldFilterInAContext(Jms jms) {
        var context = jms.context();
        Queue q = jms.queue();
        context.createProducer().setProperty("k", 1).send(q, "one");
        context.createProducer().setProperty("k", 2).send(q, "two");
        assertThat(context.createConsumer(q, "k = 2").receiveBody(String.class, RECEIVE_MS)).isEqualTo("two");
    }
}
