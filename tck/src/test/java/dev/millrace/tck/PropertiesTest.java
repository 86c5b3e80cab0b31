package dev.millrace.tck;

import static dev.millrace.tck.support.Jms.RECEIVE_MS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Collections;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.tck.support.Jms;
import dev.millrace.tck.support.TckTest;
import jakarta.jms.Message;
import jakarta.jms.MessageFormatException;
import jakarta.jms.MessageNotWriteableException;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

/** Message properties: names, values, read-only rules, JMSX properties (the conversion table: PropertyConversionTest). */
@TckTest
@Timeout(30)
@DisplayName("3.5 Message properties")
class PropertiesTest {

    private static Message roundTrip(Jms jms, Session s, Message m) throws Exception {
        Queue q = jms.queue();
        s.createProducer(q).send(m);
        Message in = s.createConsumer(q).receive(RECEIVE_MS);
        assertThat(in).as("message received").isNotNull();
        return in;
    }

    @Test
    @DisplayName("3.5.2 every property type arrives with its value and its type (getObjectProperty)")
    void shouldCarryEveryPropertyType(Jms jms) throws Exception {
        Session s = jms.session();
        Message m = s.createMessage();
        m.setBooleanProperty("bo", true);
        m.setByteProperty("by", (byte) -1);
        m.setShortProperty("sh", (short) 1000);
        m.setIntProperty("it", 100_000);
        m.setLongProperty("lo", 1L << 50);
        m.setFloatProperty("fl", 1.25f);
        m.setDoubleProperty("do", -2.5);
        m.setStringProperty("st", "v\u00e4lue");
        m.setObjectProperty("ob", 42);
        Message in = roundTrip(jms, s, m);
        assertThat(in.getObjectProperty("bo")).isEqualTo(Boolean.TRUE);
        assertThat(in.getObjectProperty("by")).isEqualTo((byte) -1);
        assertThat(in.getObjectProperty("sh")).isEqualTo((short) 1000);
        assertThat(in.getObjectProperty("it")).isEqualTo(100_000);
        assertThat(in.getObjectProperty("lo")).isEqualTo(1L << 50);
        assertThat(in.getObjectProperty("fl")).isEqualTo(1.25f);
        assertThat(in.getObjectProperty("do")).isEqualTo(-2.5);
        assertThat(in.getObjectProperty("st")).isEqualTo("v\u00e4lue");
        assertThat(in.getObjectProperty("ob")).isEqualTo(42);
    }

    @Test
    @DisplayName("3.5.6 getPropertyNames lists the properties set")
    void shouldListPropertyNames(Jms jms) throws Exception {
        Session s = jms.session();
        Message m = s.createMessage();
        m.setIntProperty("a", 1);
        m.setStringProperty("b", "2");
        Message in = roundTrip(jms, s, m);
        assertThat(Collections.list(in.getPropertyNames())).contains("a", "b");
    }

    @Test
    @DisplayName("3.5.1 property names are case-sensitive")
    void shouldKeepNamesCaseSensitive(Jms jms) throws Exception {
        Session s = jms.session();
        Message m = s.createMessage();
        m.setIntProperty("size", 1);
        m.setIntProperty("SIZE", 2);
        Message in = roundTrip(jms, s, m);
        assertThat(in.getIntProperty("size")).isEqualTo(1);
        assertThat(in.getIntProperty("SIZE")).isEqualTo(2);
    }

    @Test
    @DisplayName("3.5.8 a property that does not exist reads as null (String/Object), false (boolean)")
    void shouldReadAMissingPropertyAsNull(Jms jms) throws Exception {
        Session s = jms.session();
        Message in = roundTrip(jms, s, s.createMessage());
        assertThat(in.propertyExists("missing")).isFalse();
        assertThat(in.getStringProperty("missing")).isNull();
        assertThat(in.getObjectProperty("missing")).isNull();
        assertThat(in.getBooleanProperty("missing")).isFalse();
    }

    @Test
    @DisplayName("3.5.8 a missing property read as a number throws NumberFormatException (valueOf(null))")
    void shouldThrowForAMissingNumericProperty(Jms jms) throws Exception {
        Session s = jms.session();
        Message in = roundTrip(jms, s, s.createMessage());
        assertThatThrownBy(() -> in.getIntProperty("missing")).isInstanceOf(NumberFormatException.class);
        assertThatThrownBy(() -> in.getLongProperty("missing")).isInstanceOf(NumberFormatException.class);
    }

    @Test
    @DisplayName("3.5.8 a missing property read as double throws NullPointerException (Double.valueOf(null))")
    void shouldThrowForAMissingDoubleProperty(Jms jms) throws Exception {
        Session s = jms.session();
        Message in = roundTrip(jms, s, s.createMessage());
        assertThatThrownBy(() -> in.getDoubleProperty("missing")).isInstanceOf(NullPointerException.class);
    }

    @Test
    @DisplayName("3.10 properties of a received message are read-only: MessageNotWriteableException")
    void shouldMakeReceivedPropertiesReadOnly(Jms jms) throws Exception {
        Session s = jms.session();
        Message in = roundTrip(jms, s, s.createMessage());
        assertThatThrownBy(() -> in.setStringProperty("p", "v")).isInstanceOf(MessageNotWriteableException.class);
        assertThatThrownBy(() -> in.setIntProperty("p", 1)).isInstanceOf(MessageNotWriteableException.class);
        assertThatThrownBy(() -> in.setObjectProperty("p", 1)).isInstanceOf(MessageNotWriteableException.class);
    }

    @Test
    @DisplayName("3.5.7 clearProperties removes the properties, keeps the body, and makes them writable")
    void shouldClearProperties(Jms jms) throws Exception {
        Session s = jms.session();
        TextMessage m = s.createTextMessage("body");
        m.setStringProperty("p", "v");
        TextMessage in = (TextMessage) roundTrip(jms, s, m);
        in.clearProperties();
        assertThat(in.propertyExists("p")).isFalse();
        assertThat(in.getText()).isEqualTo("body");
        in.setStringProperty("p", "new");
        assertThat(in.getStringProperty("p")).isEqualTo("new");
    }

    @Test
    @DisplayName("3.5.1 a null or empty property name throws IllegalArgumentException")
    void shouldRefuseEmptyNames(Jms jms) throws Exception {
        Message m = jms.session().createMessage();
        assertThatThrownBy(() -> m.setStringProperty(null, "v")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> m.setIntProperty("", 1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("3.5.5 setObjectProperty with a type that is not a primitive wrapper or String: MessageFormatException")
    void shouldRefuseObjectPropertiesOfOtherTypes(Jms jms) throws Exception {
        Message m = jms.session().createMessage();
        assertThatThrownBy(() -> m.setObjectProperty("p", new java.util.ArrayList<>()))
                .isInstanceOf(MessageFormatException.class);
        assertThatThrownBy(() -> m.setObjectProperty("p", new StringBuilder("x")))
                .isInstanceOf(MessageFormatException.class);
    }

    @Test
    @DisplayName("3.5.9 JMSXDeliveryCount is 1 on a first delivery")
    void shouldCountTheFirstDelivery(Jms jms) throws Exception {
        Session s = jms.session();
        Message in = roundTrip(jms, s, s.createMessage());
        assertThat(in.getIntProperty("JMSXDeliveryCount")).isEqualTo(1);
    }

    @Test
    @DisplayName("3.5.9 JMSXGroupID and JMSXGroupSeq set by the client arrive")
    void shouldCarryGroupProperties(Jms jms) throws Exception {
        Session s = jms.session();
        Message m = s.createMessage();
        m.setStringProperty("JMSXGroupID", "g1");
        m.setIntProperty("JMSXGroupSeq", 3);
        Message in = roundTrip(jms, s, m);
        assertThat(in.getStringProperty("JMSXGroupID")).isEqualTo("g1");
        assertThat(in.getIntProperty("JMSXGroupSeq")).isEqualTo(3);
    }

    @Test
    @DisplayName("3.5.3 a property set on the message before send is not changed by send")
    void shouldKeepPropertiesOnTheSentMessage(Jms jms) throws Exception {
        Session s = jms.session();
        Message m = s.createMessage();
        m.setStringProperty("p", "v");
        s.createProducer(jms.queue()).send(m);
        assertThat(m.getStringProperty("p")).isEqualTo("v");
        m.setStringProperty("p", "w");
        assertThat(m.getStringProperty("p")).isEqualTo("w");
    }

    @Test
    @DisplayName("3.5.2 a long String property value (64 KiB) arrives intact")
    void shouldCarryALongStringProperty(Jms jms) throws Exception {
        Session s = jms.session();
        Message m = s.createMessage();
        String value = "x".repeat(65_536);
        m.setStringProperty("long", value);
        assertThat(roundTrip(jms, s, m).getStringProperty("long")).isEqualTo(value);
    }
}
