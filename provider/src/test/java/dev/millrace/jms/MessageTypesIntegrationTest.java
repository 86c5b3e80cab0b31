package dev.millrace.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import jakarta.jms.BytesMessage;
import jakarta.jms.Connection;
import jakarta.jms.MapMessage;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageFormatException;
import jakarta.jms.MessageNotWriteableException;
import jakarta.jms.MessageProducer;
import jakarta.jms.ObjectMessage;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.StreamMessage;
import jakarta.jms.TextMessage;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every message type through a real broker: bodies, typed properties with their conversions, the
 * headers an application sets, and the read-only state of a received message.
 */
@Timeout(60)
class MessageTypesIntegrationTest {

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

    @Test
    void everyMessageTypeArrivesWithItsBodyPropertiesAndHeaders() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue q = s.createQueue("q.types");
            Queue replyTo = s.createQueue("q.types.replies");
            MessageProducer p = s.createProducer(q);

            TextMessage text = s.createTextMessage("héllo");
            BytesMessage bytes = s.createBytesMessage();
            bytes.writeInt(42);
            bytes.writeUTF("bytes");
            MapMessage map = s.createMapMessage();
            map.setLong("long", Long.MAX_VALUE);
            map.setString("string", "v");
            map.setBytes("raw", new byte[] {1, 2, 3});
            StreamMessage stream = s.createStreamMessage();
            stream.writeBoolean(true);
            stream.writeDouble(2.5);
            stream.writeString("s");
            ObjectMessage object = s.createObjectMessage(new ArrayList<>(List.of("a", "b")));
            Message plain = s.createMessage();
            List<Message> sent = List.of(text, bytes, map, stream, object, plain);
            for (int i = 0; i < sent.size(); i++) {
                Message m = sent.get(i);
                m.setIntProperty("index", i);
                m.setStringProperty("numeric", "123");
                m.setJMSCorrelationID("corr-" + i);
                m.setJMSType("type-" + i);
                m.setJMSReplyTo(replyTo);
                p.send(m);
            }

            MessageConsumer consumer = s.createConsumer(q);
            c.start();
            List<Message> got = new ArrayList<>();
            for (int i = 0; i < sent.size(); i++) {
                Message m = consumer.receive(10_000);
                assertThat(m).as("message %d", i).isNotNull();
                got.add(m);
            }
            for (int i = 0; i < got.size(); i++) {
                Message m = got.get(i);
                assertThat(m.getIntProperty("index")).isEqualTo(i);
                assertThat(m.getLongProperty("numeric")).as("String property read as long").isEqualTo(123L);
                assertThat(m.getJMSCorrelationID()).isEqualTo("corr-" + i);
                assertThat(m.getJMSType()).isEqualTo("type-" + i);
                assertThat(m.getJMSReplyTo()).isEqualTo(replyTo);
                assertThat(m.getJMSDestination()).isEqualTo(q);
                assertThat(m.getJMSMessageID()).startsWith("ID:").isEqualTo(sent.get(i).getJMSMessageID());
                assertThat(m.getJMSTimestamp()).isEqualTo(sent.get(i).getJMSTimestamp());
                assertThatThrownBy(() -> m.setIntProperty("index", 7)).isInstanceOf(MessageNotWriteableException.class);
            }
            assertThat(((TextMessage) got.get(0)).getText()).isEqualTo("héllo");
            BytesMessage b = (BytesMessage) got.get(1);
            assertThat(b.readInt()).isEqualTo(42);
            assertThat(b.readUTF()).isEqualTo("bytes");
            MapMessage mm = (MapMessage) got.get(2);
            assertThat(mm.getLong("long")).isEqualTo(Long.MAX_VALUE);
            assertThat(mm.getString("long")).isEqualTo(String.valueOf(Long.MAX_VALUE));
            assertThat(mm.getBytes("raw")).containsExactly(1, 2, 3);
            assertThatThrownBy(() -> mm.getInt("string")).isInstanceOf(NumberFormatException.class);
            assertThatThrownBy(() -> mm.getBoolean("raw")).isInstanceOf(MessageFormatException.class);
            StreamMessage sm = (StreamMessage) got.get(3);
            assertThat(sm.readBoolean()).isTrue();
            assertThat(sm.readString()).as("double read as String").isEqualTo("2.5");
            assertThat(sm.readString()).isEqualTo("s");
            assertThat(((ObjectMessage) got.get(4)).getObject()).isEqualTo(List.of("a", "b"));
            assertThat(got.get(5).getBody(Object.class)).isNull();
            assertThat(got.get(0).isBodyAssignableTo(String.class)).isTrue();
            assertThat(got.get(1).isBodyAssignableTo(String.class)).isFalse();
        }
    }

    /**
     * StreamMessage.readBytes javadoc: a byte array field read whole ends with -1 ("the end of the byte field has been
     * reached"), it does not read on into the next field; the next field is read after that.
     */
    @Test
    void streamMessageReadBytesReturnsMinusOneAtTheEndOfEachByteField() throws Exception {
        try (Connection c = broker.factory().createConnection()) {
            Session s = c.createSession(Session.AUTO_ACKNOWLEDGE);
            Queue q = s.createQueue("q.stream.bytes");
            StreamMessage stream = s.createStreamMessage();
            stream.writeBytes(new byte[] {1, 2, 3});
            stream.writeBytes(new byte[] {4, 5});
            stream.writeInt(6);
            s.createProducer(q).send(stream);
            MessageConsumer consumer = s.createConsumer(q);
            c.start();
            StreamMessage got = (StreamMessage) consumer.receive(10_000);

            byte[] buffer = new byte[8];
            assertThat(got.readBytes(buffer)).isEqualTo(3);
            assertThat(got.readBytes(buffer)).as("end of the first field").isEqualTo(-1);
            assertThat(got.readBytes(buffer)).isEqualTo(2);
            assertThat(buffer).startsWith(4, 5);
            assertThat(got.readBytes(buffer)).as("end of the second field").isEqualTo(-1);
            assertThat(got.readInt()).isEqualTo(6);
        }
    }
}
