package dev.millrace.tck;

import static dev.millrace.tck.support.Jms.RECEIVE_MS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.tck.support.Jms;
import dev.millrace.tck.support.TckTest;
import jakarta.jms.BytesMessage;
import jakarta.jms.JMSException;
import jakarta.jms.MapMessage;
import jakarta.jms.Message;
import jakarta.jms.MessageEOFException;
import jakarta.jms.MessageFormatException;
import jakarta.jms.MessageNotReadableException;
import jakarta.jms.MessageNotWriteableException;
import jakarta.jms.ObjectMessage;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.StreamMessage;
import jakarta.jms.TextMessage;

/** The six message types, sent through the broker and read back, with the read-only and conversion rules. */
@TckTest
@Timeout(30)
@DisplayName("3.11 Message bodies (Text, Bytes, Map, Stream, Object, Message)")
class MessageBodyTest {

    private static Message roundTrip(Jms jms, Session s, Message m) throws JMSException {
        Queue q = jms.queue();
        s.createProducer(q).send(m);
        Message received = s.createConsumer(q).receive(RECEIVE_MS);
        assertThat(received).as("message received").isNotNull();
        return received;
    }

    @Test
    @DisplayName("3.11 TextMessage: text with non-ASCII characters arrives unchanged")
    void shouldCarryText(Jms jms) throws Exception {
        Session s = jms.session();
        String text = "h\u00e9llo \u4e16\u754c \ud83d\ude00";
        TextMessage m = (TextMessage) roundTrip(jms, s, s.createTextMessage(text));
        assertThat(m.getText()).isEqualTo(text);
        assertThat(m.getBody(String.class)).isEqualTo(text);
    }

    @Test
    @DisplayName("3.11.2 a received TextMessage is read-only until clearBody")
    void shouldMakeAReceivedTextReadOnly(Jms jms) throws Exception {
        Session s = jms.session();
        TextMessage m = (TextMessage) roundTrip(jms, s, s.createTextMessage("x"));
        assertThatThrownBy(() -> m.setText("y")).isInstanceOf(MessageNotWriteableException.class);
        m.clearBody();
        assertThat(m.getText()).isNull();
        m.setText("y");
        assertThat(m.getText()).isEqualTo("y");
    }

    @Test
    @DisplayName("3.11 BytesMessage: every typed write reads back in order")
    void shouldCarryBytes(Jms jms) throws Exception {
        Session s = jms.session();
        BytesMessage out = s.createBytesMessage();
        out.writeBoolean(true);
        out.writeByte((byte) -3);
        out.writeShort((short) 300);
        out.writeChar('z');
        out.writeInt(70000);
        out.writeLong(1L << 40);
        out.writeFloat(1.5f);
        out.writeDouble(2.25);
        out.writeUTF("utf");
        out.writeBytes(new byte[] {9, 8, 7});
        BytesMessage in = (BytesMessage) roundTrip(jms, s, out);
        assertThat(in.readBoolean()).isTrue();
        assertThat(in.readByte()).isEqualTo((byte) -3);
        assertThat(in.readShort()).isEqualTo((short) 300);
        assertThat(in.readChar()).isEqualTo('z');
        assertThat(in.readInt()).isEqualTo(70000);
        assertThat(in.readLong()).isEqualTo(1L << 40);
        assertThat(in.readFloat()).isEqualTo(1.5f);
        assertThat(in.readDouble()).isEqualTo(2.25);
        assertThat(in.readUTF()).isEqualTo("utf");
        byte[] rest = new byte[10];
        assertThat(in.readBytes(rest)).isEqualTo(3);
        assertThat(in.readBytes(rest)).isEqualTo(-1);
    }

    @Test
    @DisplayName("3.11 BytesMessage: getBodyLength, and reading past the end throws MessageEOFException")
    void shouldReportBytesLengthAndEnd(Jms jms) throws Exception {
        Session s = jms.session();
        BytesMessage out = s.createBytesMessage();
        out.writeInt(1);
        BytesMessage in = (BytesMessage) roundTrip(jms, s, out);
        assertThat(in.getBodyLength()).isEqualTo(4);
        in.readInt();
        assertThatThrownBy(in::readInt).isInstanceOf(MessageEOFException.class);
    }

    @Test
    @DisplayName("3.11.2 a received BytesMessage is read-only; a new one is write-only until reset")
    void shouldEnforceBytesModes(Jms jms) throws Exception {
        Session s = jms.session();
        BytesMessage out = s.createBytesMessage();
        out.writeInt(5);
        assertThatThrownBy(out::readInt).isInstanceOf(MessageNotReadableException.class);
        BytesMessage in = (BytesMessage) roundTrip(jms, s, out);
        assertThatThrownBy(() -> in.writeInt(1)).isInstanceOf(MessageNotWriteableException.class);
        in.clearBody();
        in.writeInt(6);
        in.reset();
        assertThat(in.readInt()).isEqualTo(6);
    }

    @Test
    @DisplayName("3.11 MapMessage: typed entries, names and itemExists arrive")
    void shouldCarryAMap(Jms jms) throws Exception {
        Session s = jms.session();
        MapMessage out = s.createMapMessage();
        out.setBoolean("b", true);
        out.setInt("i", 42);
        out.setLong("l", 1L << 33);
        out.setDouble("d", 0.5);
        out.setString("s", "str");
        out.setBytes("bytes", new byte[] {1, 2});
        out.setObject("o", 7.5f);
        MapMessage in = (MapMessage) roundTrip(jms, s, out);
        assertThat(in.getBoolean("b")).isTrue();
        assertThat(in.getInt("i")).isEqualTo(42);
        assertThat(in.getLong("l")).isEqualTo(1L << 33);
        assertThat(in.getDouble("d")).isEqualTo(0.5);
        assertThat(in.getString("s")).isEqualTo("str");
        assertThat(in.getBytes("bytes")).containsExactly(1, 2);
        assertThat(in.getFloat("o")).isEqualTo(7.5f);
        assertThat(Collections.list(in.getMapNames())).containsExactlyInAnyOrder("b", "i", "l", "d", "s", "bytes", "o");
        assertThat(in.itemExists("i")).isTrue();
        assertThat(in.itemExists("nope")).isFalse();
    }

    @Test
    @DisplayName("3.11.3 MapMessage conversions: int read as long and String; String read as int; bad ones throw")
    void shouldConvertMapValues(Jms jms) throws Exception {
        Session s = jms.session();
        MapMessage out = s.createMapMessage();
        out.setInt("i", 12);
        out.setString("s", "34");
        out.setBoolean("b", true);
        MapMessage in = (MapMessage) roundTrip(jms, s, out);
        assertThat(in.getLong("i")).isEqualTo(12L);
        assertThat(in.getString("i")).isEqualTo("12");
        assertThat(in.getInt("s")).isEqualTo(34);
        assertThatThrownBy(() -> in.getBoolean("i")).isInstanceOf(MessageFormatException.class);
        assertThatThrownBy(() -> in.getInt("b")).isInstanceOf(MessageFormatException.class);
        assertThat(in.getString("missing")).isNull();
    }

    @Test
    @DisplayName("3.11.2 a received MapMessage is read-only; a null or empty name throws IllegalArgumentException")
    void shouldEnforceMapRules(Jms jms) throws Exception {
        Session s = jms.session();
        MapMessage out = s.createMapMessage();
        assertThatThrownBy(() -> out.setInt(null, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> out.setInt("", 1)).isInstanceOf(IllegalArgumentException.class);
        out.setInt("a", 1);
        MapMessage in = (MapMessage) roundTrip(jms, s, out);
        assertThatThrownBy(() -> in.setInt("b", 2)).isInstanceOf(MessageNotWriteableException.class);
    }

    @Test
    @DisplayName("3.11 StreamMessage: typed fields read back in order, then MessageEOFException")
    void shouldCarryAStream(Jms jms) throws Exception {
        Session s = jms.session();
        StreamMessage out = s.createStreamMessage();
        out.writeBoolean(false);
        out.writeInt(-5);
        out.writeString("s");
        out.writeDouble(3.5);
        out.writeObject(Long.valueOf(9));
        out.writeString(null);
        StreamMessage in = (StreamMessage) roundTrip(jms, s, out);
        assertThat(in.readBoolean()).isFalse();
        assertThat(in.readInt()).isEqualTo(-5);
        assertThat(in.readString()).isEqualTo("s");
        assertThat(in.readDouble()).isEqualTo(3.5);
        assertThat(in.readObject()).isEqualTo(9L);
        assertThat(in.readString()).isNull();
        assertThatThrownBy(in::readInt).isInstanceOf(MessageEOFException.class);
    }

    @Test
    @DisplayName("3.11.3 StreamMessage conversions: int read as String and long; String read as int; bad throw")
    void shouldConvertStreamFields(Jms jms) throws Exception {
        Session s = jms.session();
        StreamMessage out = s.createStreamMessage();
        out.writeInt(12);
        out.writeInt(13);
        out.writeString("34");
        out.writeBoolean(true);
        StreamMessage in = (StreamMessage) roundTrip(jms, s, out);
        assertThat(in.readString()).isEqualTo("12");
        assertThat(in.readLong()).isEqualTo(13L);
        assertThat(in.readInt()).isEqualTo(34);
        assertThatThrownBy(in::readInt).isInstanceOf(MessageFormatException.class);
    }

    @Test
    @DisplayName("3.11.3 StreamMessage: a String that is not a number read as int throws NumberFormatException")
    void shouldThrowNumberFormatExceptionForABadStreamString(Jms jms) throws Exception {
        Session s = jms.session();
        StreamMessage out = s.createStreamMessage();
        out.writeString("abc");
        StreamMessage in = (StreamMessage) roundTrip(jms, s, out);
        assertThatThrownBy(in::readInt).isInstanceOf(NumberFormatException.class);
    }

    @Test
    @DisplayName("3.11 StreamMessage.readBytes: a field shorter than the buffer, then -1, then the next field")
    void shouldEndAShortByteArrayFieldWithMinusOne(Jms jms) throws Exception {
        Session s = jms.session();
        StreamMessage out = s.createStreamMessage();
        out.writeBytes(new byte[] {1, 2, 3});
        out.writeBytes(new byte[] {4, 5});
        StreamMessage in = (StreamMessage) roundTrip(jms, s, out);
        byte[] buffer = new byte[10];
        assertThat(in.readBytes(buffer)).isEqualTo(3);
        assertThat(in.readBytes(buffer)).isEqualTo(-1);
        assertThat(in.readBytes(buffer)).isEqualTo(2);
        assertThat(buffer[0]).isEqualTo((byte) 4);
        assertThat(in.readBytes(buffer)).isEqualTo(-1);
    }

    @Test
    @DisplayName("3.11 StreamMessage.readBytes: a field as long as the buffer, then -1 ends the field")
    void shouldEndAByteArrayFieldWithMinusOne(Jms jms) throws Exception {
        Session s = jms.session();
        StreamMessage out = s.createStreamMessage();
        out.writeBytes(new byte[] {1, 2, 3});
        out.writeInt(4);
        StreamMessage in = (StreamMessage) roundTrip(jms, s, out);
        byte[] buffer = new byte[3];
        assertThat(in.readBytes(buffer)).isEqualTo(3);
        assertThat(buffer).containsExactly(1, 2, 3);
        assertThat(in.readBytes(buffer)).isEqualTo(-1);
        assertThat(in.readInt()).isEqualTo(4);
    }

    @Test
    @DisplayName("3.11 StreamMessage.readBytes: a byte[] field longer than the buffer is read in pieces")
    void shouldReadALongByteArrayFieldInPieces(Jms jms) throws Exception {
        Session s = jms.session();
        StreamMessage out = s.createStreamMessage();
        out.writeBytes(new byte[] {1, 2, 3, 4, 5});
        StreamMessage in = (StreamMessage) roundTrip(jms, s, out);
        byte[] buffer = new byte[3];
        assertThat(in.readBytes(buffer)).isEqualTo(3);
        assertThat(in.readBytes(buffer)).isEqualTo(2);
        assertThat(buffer[0]).isEqualTo((byte) 4);
    }

    @Test
    @DisplayName("3.11.2 StreamMessage: write-only before send, read-only after receipt")
    void shouldEnforceStreamModes(Jms jms) throws Exception {
        Session s = jms.session();
        StreamMessage out = s.createStreamMessage();
        out.writeInt(1);
        assertThatThrownBy(out::readInt).isInstanceOf(MessageNotReadableException.class);
        StreamMessage in = (StreamMessage) roundTrip(jms, s, out);
        assertThatThrownBy(() -> in.writeInt(2)).isInstanceOf(MessageNotWriteableException.class);
    }

    @Test
    @DisplayName("3.11 ObjectMessage: a Serializable object arrives equal; getBody(Serializable.class)")
    void shouldCarryAnObject(Jms jms) throws Exception {
        Session s = jms.session();
        ArrayList<Object> value = new ArrayList<>(List.of("a", 1, 2.5));
        ObjectMessage in = (ObjectMessage) roundTrip(jms, s, s.createObjectMessage(value));
        assertThat(in.getObject()).isEqualTo(value);
        assertThat(in.getBody(Serializable.class)).isEqualTo(value);
    }

    @Test
    @DisplayName("3.11 Message without body: getBody returns null, isBodyAssignableTo is true")
    void shouldCarryABodilessMessage(Jms jms) throws Exception {
        Session s = jms.session();
        Message out = s.createMessage();
        out.setStringProperty("p", "v");
        Message in = roundTrip(jms, s, out);
        assertThat(in.getStringProperty("p")).isEqualTo("v");
        assertThat(in.getBody(String.class)).isNull();
        assertThat(in.isBodyAssignableTo(String.class)).isTrue();
    }

    @Test
    @DisplayName("3.11 getBody with a type the body is not assignable to throws MessageFormatException")
    void shouldRefuseGetBodyOfAnotherType(Jms jms) throws Exception {
        Session s = jms.session();
        Message in = roundTrip(jms, s, s.createTextMessage("x"));
        assertThat(in.isBodyAssignableTo(Integer.class)).isFalse();
        assertThatThrownBy(() -> in.getBody(Integer.class)).isInstanceOf(MessageFormatException.class);
    }

    @Test
    @DisplayName("3.9 changing a message after send does not change the message sent")
    void shouldNotSeeChangesMadeAfterSend(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        TextMessage m = s.createTextMessage("first");
        s.createProducer(q).send(m);
        m.setText("second");
        assertThat(((TextMessage) s.createConsumer(q).receive(RECEIVE_MS)).getText()).isEqualTo("first");
    }

    @Test
    @DisplayName("3.9 one message object sent twice arrives twice, each with its own JMSMessageID")
    void shouldSendOneMessageObjectTwice(Jms jms) throws Exception {
        Session s = jms.session();
        Queue q = jms.queue();
        TextMessage m = s.createTextMessage("again");
        var producer = s.createProducer(q);
        producer.send(m);
        String firstId = m.getJMSMessageID();
        producer.send(m);
        var consumer = s.createConsumer(q);
        Message a = consumer.receive(RECEIVE_MS);
        Message b = consumer.receive(RECEIVE_MS);
        assertThat(a.getJMSMessageID()).isEqualTo(firstId);
        assertThat(b.getJMSMessageID()).isNotEqualTo(firstId);
    }

    @Test
    @DisplayName("3.11.1 clearBody of a received BytesMessage empties it and makes it writable")
    void shouldClearABytesBody(Jms jms) throws Exception {
        Session s = jms.session();
        BytesMessage out = s.createBytesMessage();
        out.writeLong(1);
        BytesMessage in = (BytesMessage) roundTrip(jms, s, out);
        in.clearBody();
        in.writeByte((byte) 1);
        in.reset();
        assertThat(in.getBodyLength()).isEqualTo(1);
    }
}
