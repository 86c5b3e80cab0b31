package dev.millrace.tck;

import static dev.millrace.tck.support.Jms.NOTHING_MS;
import static dev.millrace.tck.support.Jms.RECEIVE_MS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.tck.support.Jms;
import dev.millrace.tck.support.TckTest;
import jakarta.jms.BytesMessage;
import jakarta.jms.IllegalStateRuntimeException;
import jakarta.jms.JMSConsumer;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSProducer;
import jakarta.jms.MapMessage;
import jakarta.jms.Message;
import jakarta.jms.MessageFormatRuntimeException;
import jakarta.jms.ObjectMessage;
import jakarta.jms.Queue;
import jakarta.jms.TextMessage;

/** The simplified API: JMSContext, JMSProducer, JMSConsumer, and what they share with the classic API. */
@TckTest
@Timeout(30)
@DisplayName("2.8 Simplified API (JMSContext) and classic API")
class SimplifiedApiTest {

    @Test
    @DisplayName("2.8 JMSContext: send a String, receiveBody(String.class)")
    void shouldSendAndReceiveABody(Jms jms) {
        JMSContext context = jms.context();
        Queue q = jms.queue();
        context.createProducer().send(q, "hello");
        assertThat(context.createConsumer(q).receiveBody(String.class, RECEIVE_MS)).isEqualTo("hello");
    }

    @Test
    @DisplayName("2.8 JMSProducer.send of Map, byte[] and Serializable bodies makes Map, Bytes and Object messages")
    void shouldPickTheMessageTypeFromTheBody(Jms jms) throws Exception {
        JMSContext context = jms.context();
        Queue q = jms.queue();
        JMSProducer producer = context.createProducer();
        producer.send(q, Map.of("k", 7));
        producer.send(q, new byte[] {1, 2, 3});
        producer.send(q, new ArrayList<>(List.of("a", "b")));
        JMSConsumer consumer = context.createConsumer(q);
        MapMessage map = (MapMessage) consumer.receive(RECEIVE_MS);
        assertThat(map.getInt("k")).isEqualTo(7);
        BytesMessage bytes = (BytesMessage) consumer.receive(RECEIVE_MS);
        assertThat(bytes.getBody(byte[].class)).containsExactly(1, 2, 3);
        ObjectMessage object = (ObjectMessage) consumer.receive(RECEIVE_MS);
        assertThat(object.getObject()).isEqualTo(List.of("a", "b"));
    }

    @Test
    @DisplayName("2.8 JMSProducer: properties and header values set on the producer arrive on every message")
    void shouldApplyProducerPropertiesAndHeaders(Jms jms) throws Exception {
        JMSContext context = jms.context();
        Queue q = jms.queue();
        context.createProducer().setProperty("color", "red").setProperty("size", 3).setJMSType("t1")
                .setJMSCorrelationID("c1").setPriority(6).send(q, "x");
        Message m = context.createConsumer(q).receive(RECEIVE_MS);
        assertThat(m.getStringProperty("color")).isEqualTo("red");
        assertThat(m.getIntProperty("size")).isEqualTo(3);
        assertThat(m.getJMSType()).isEqualTo("t1");
        assertThat(m.getJMSCorrelationID()).isEqualTo("c1");
        assertThat(m.getJMSPriority()).isEqualTo(6);
    }

    @Test
    @DisplayName("2.8 JMSProducer: getters return what the setters set; clearProperties empties")
    void shouldKeepProducerSettings(Jms jms) {
        JMSProducer producer = jms.context().createProducer();
        producer.setDeliveryMode(jakarta.jms.DeliveryMode.NON_PERSISTENT).setPriority(2).setTimeToLive(5000)
                .setDeliveryDelay(10).setProperty("p", true);
        assertThat(producer.getDeliveryMode()).isEqualTo(jakarta.jms.DeliveryMode.NON_PERSISTENT);
        assertThat(producer.getPriority()).isEqualTo(2);
        assertThat(producer.getTimeToLive()).isEqualTo(5000);
        assertThat(producer.getDeliveryDelay()).isEqualTo(10);
        assertThat(producer.getBooleanProperty("p")).isTrue();
        assertThat(producer.getPropertyNames()).contains("p");
        producer.clearProperties();
        assertThat(producer.propertyExists("p")).isFalse();
    }

    @Test
    @DisplayName("2.8 JMSContext.createContext: a second context on the same connection")
    void shouldShareTheConnectionWithCreateContext(Jms jms) {
        JMSContext first = jms.context();
        JMSContext second = jms.track(first.createContext(JMSContext.AUTO_ACKNOWLEDGE));
        Queue q = jms.queue();
        first.createProducer().send(q, "x");
        assertThat(second.createConsumer(q).receiveBody(String.class, RECEIVE_MS)).isEqualTo("x");
    }

    @Test
    @DisplayName("2.8 JMSContext.createContext(SESSION_TRANSACTED): a transacted context on the same connection")
    void shouldCreateATransactedContextFromAContext(Jms jms) {
        JMSContext first = jms.context();
        JMSContext transacted = jms.track(first.createContext(JMSContext.SESSION_TRANSACTED));
        assertThat(transacted.getTransacted()).isTrue();
        Queue q = jms.queue();
        transacted.createProducer().send(q, "x");
        JMSConsumer consumer = first.createConsumer(q);
        assertThat(consumer.receiveBody(String.class, NOTHING_MS)).isNull();
        transacted.commit();
        assertThat(consumer.receiveBody(String.class, RECEIVE_MS)).isEqualTo("x");
    }

    @Test
    @DisplayName("2.8 JMSContext: getSessionMode and getTransacted report the mode it was created with")
    void shouldReportTheContextMode(Jms jms) {
        assertThat(jms.context().getSessionMode()).isEqualTo(JMSContext.AUTO_ACKNOWLEDGE);
        assertThat(jms.context(JMSContext.CLIENT_ACKNOWLEDGE).getSessionMode())
                .isEqualTo(JMSContext.CLIENT_ACKNOWLEDGE);
        JMSContext transacted = jms.context(JMSContext.SESSION_TRANSACTED);
        assertThat(transacted.getTransacted()).isTrue();
        assertThat(transacted.getSessionMode()).isEqualTo(JMSContext.SESSION_TRANSACTED);
    }

    @Test
    @DisplayName("2.8 JMSContext autoStart: off, nothing arrives until start()")
    void shouldNotStartWhenAutoStartIsOff(Jms jms) {
        JMSContext context = jms.context();
        context.setAutoStart(false);
        assertThat(context.getAutoStart()).isFalse();
        Queue q = jms.queue();
        context.createProducer().send(q, "x");
        JMSConsumer consumer = context.createConsumer(q);
        assertThat(consumer.receiveBody(String.class, NOTHING_MS)).isNull();
        context.start();
        assertThat(consumer.receiveBody(String.class, RECEIVE_MS)).isEqualTo("x");
    }

    @Test
    @DisplayName("2.8 JMSContext.close closes its consumers: receive throws IllegalStateRuntimeException")
    void shouldCloseConsumersWithTheContext(Jms jms) {
        JMSContext context = jms.context();
        JMSConsumer consumer = context.createConsumer(jms.queue());
        context.close();
        assertThatThrownBy(() -> consumer.receive(NOTHING_MS)).isInstanceOf(IllegalStateRuntimeException.class);
        assertThatThrownBy(context::createProducer).isInstanceOf(IllegalStateRuntimeException.class);
    }

    @Test
    @DisplayName("6.1.2 JMSContext.setClientID after the context was used throws IllegalStateRuntimeException")
    void shouldRefuseAClientIdOnAUsedContext(Jms jms) {
        JMSContext context = jms.context();
        context.createProducer().send(jms.queue(), "x");
        assertThatThrownBy(() -> context.setClientID(jms.name("client")))
                .isInstanceOf(IllegalStateRuntimeException.class);
    }

    @Test
    @DisplayName("2.8 receiveBody of the wrong type throws MessageFormatRuntimeException")
    void shouldRefuseReceiveBodyOfTheWrongType(Jms jms) {
        JMSContext context = jms.context();
        Queue q = jms.queue();
        context.createProducer().send(q, "text");
        JMSConsumer consumer = context.createConsumer(q);
        assertThatThrownBy(() -> consumer.receiveBody(Integer.class, RECEIVE_MS))
                .isInstanceOf(MessageFormatRuntimeException.class);
    }

    @Test
    @DisplayName("2.8 receiveBody of a Message without a body throws MessageFormatRuntimeException")
    void shouldRefuseReceiveBodyOfABodilessMessage(Jms jms) {
        JMSContext context = jms.context();
        Queue q = jms.queue();
        context.createProducer().send(q, context.createMessage());
        JMSConsumer consumer = context.createConsumer(q);
        assertThatThrownBy(() -> consumer.receiveBody(String.class, RECEIVE_MS))
                .isInstanceOf(MessageFormatRuntimeException.class);
    }

    @Test
    @DisplayName("2.8 JMSProducer.send(dest, (String) null) sends a TextMessage with a null body")
    void shouldSendANullText(Jms jms) throws Exception {
        JMSContext context = jms.context();
        Queue q = jms.queue();
        context.createProducer().send(q, (String) null);
        Message m = context.createConsumer(q).receive(RECEIVE_MS);
        assertThat(m).isInstanceOf(TextMessage.class);
        assertThat(((TextMessage) m).getText()).isNull();
    }

    @Test
    @DisplayName("2.8 a JMSContext and a classic Connection interoperate on one queue")
    void shouldInteroperateWithTheClassicApi(Jms jms) throws Exception {
        Queue q = jms.queue();
        jms.context().createProducer().send(q, "from-context");
        var session = jms.session();
        var consumer = session.createConsumer(q);
        assertThat(((TextMessage) consumer.receive(RECEIVE_MS)).getText()).isEqualTo("from-context");
        consumer.close();
        session.createProducer(q).send(session.createTextMessage("from-session"));
        assertThat(jms.context().createConsumer(q).receiveBody(String.class, RECEIVE_MS)).isEqualTo("from-session");
    }

    @Test
    @DisplayName("2.8 JMSConsumer.receiveNoWait returns null on an empty queue")
    void shouldReturnNullFromReceiveNoWait(Jms jms) {
        JMSConsumer consumer = jms.context().createConsumer(jms.queue());
        assertThat(consumer.receiveNoWait()).isNull();
        assertThat(consumer.receiveBodyNoWait(String.class)).isNull();
    }
}
