package dev.millrace.jms.message;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import dev.millrace.jms.MillraceQueue;
import dev.millrace.jms.MillraceTemporaryQueue;
import dev.millrace.jms.MillraceTemporaryTopic;
import dev.millrace.jms.MillraceTopic;
import dev.millrace.protocol.jms.JmsRecord;
import dev.millrace.protocol.jms.JmsRecordFormatException;
import jakarta.jms.BytesMessage;
import jakarta.jms.DeliveryMode;
import jakarta.jms.InvalidDestinationException;
import jakarta.jms.JMSException;
import jakarta.jms.MapMessage;
import jakarta.jms.Message;
import jakarta.jms.MessageFormatException;
import jakarta.jms.MessageNotWriteableException;
import jakarta.jms.ObjectMessage;
import jakarta.jms.StreamMessage;
import jakarta.jms.TextMessage;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(20)
class RecordMessageMapperTest {

    private static final MillraceQueue ORDERS = new MillraceQueue("orders");

    private static MillraceMessage roundTrip(Message m) throws JMSException {
        return RecordMessageMapper.toMessage(RecordMessageMapper.toRecord(m), null, 1);
    }

    private static JmsRecord kafkaRecord(byte[] key, byte[] value, Header... headers) {
        return new JmsRecord(key, value, 1234L, List.of(headers));
    }

    @Test
    void shouldRoundTripEveryHeaderField() throws JMSException {
        MillraceTextMessage m = new MillraceTextMessage();
        m.setJMSMessageID("ID:m-1");
        m.setJMSTimestamp(1_000);
        m.setJMSCorrelationID("c-1");
        m.setJMSReplyTo(new MillraceTemporaryQueue("tmp.reply", null));
        m.setJMSDestination(ORDERS);
        m.setJMSDeliveryMode(DeliveryMode.NON_PERSISTENT);
        m.setJMSType("order.created");
        m.setJMSExpiration(61_000);
        m.setJMSDeliveryTime(6_000);
        m.setJMSPriority(0);
        MillraceMessage r = roundTrip(m);
        assertThat(r).isInstanceOf(MillraceTextMessage.class);
        assertThat(r.getJMSMessageID()).isEqualTo("ID:m-1");
        assertThat(r.getJMSTimestamp()).isEqualTo(1_000);
        assertThat(r.getJMSCorrelationID()).isEqualTo("c-1");
        assertThat(r.getJMSReplyTo()).isEqualTo(new MillraceTemporaryQueue("tmp.reply", null))
                .isInstanceOf(MillraceTemporaryQueue.class);
        assertThat(r.getJMSDestination()).isEqualTo(ORDERS);
        assertThat(r.getJMSDeliveryMode()).isEqualTo(DeliveryMode.NON_PERSISTENT);
        assertThat(r.getJMSType()).isEqualTo("order.created");
        assertThat(r.getJMSExpiration()).isEqualTo(61_000);
        assertThat(r.getJMSDeliveryTime()).isEqualTo(6_000);
        assertThat(r.getJMSPriority()).isZero();
        assertThat(r.getJMSRedelivered()).isFalse();
    }

    @Test
    void shouldRoundTripCorrelationIdBytesAndEveryDestinationKind() throws JMSException {
        MillraceMessage m = new MillraceMessage();
        m.setJMSCorrelationIDAsBytes(new byte[] {0, (byte) 0xFE});
        m.setJMSDestination(new MillraceTopic("prices"));
        m.setJMSReplyTo(new MillraceTemporaryTopic("tmp.t", null));
        MillraceMessage r = roundTrip(m);
        assertThat(r.getJMSCorrelationIDAsBytes()).containsExactly(0, 0xFE);
        assertThat(r.getJMSDestination()).isEqualTo(new MillraceTopic("prices"));
        assertThat(r.getJMSReplyTo()).isEqualTo(new MillraceTemporaryTopic("tmp.t", null));
        m.setJMSReplyTo(ORDERS);
        assertThat(roundTrip(m).getJMSReplyTo()).isEqualTo(ORDERS);
    }

    @Test
    void shouldRoundTripEveryPropertyTypeAndKeepThemReadOnly() throws JMSException {
        MillraceMessage m = new MillraceMessage();
        m.setBooleanProperty("bool", true);
        m.setByteProperty("byte", (byte) -3);
        m.setShortProperty("short", (short) 300);
        m.setIntProperty("int", 70_000);
        m.setLongProperty("long", Long.MIN_VALUE);
        m.setFloatProperty("float", 1.25f);
        m.setDoubleProperty("double", -0.5d);
        m.setStringProperty("string", "v\u00e4lue");
        m.setObjectProperty("nothing", null);
        m.setIntProperty("JMSXGroupSeq", 2);
        m.setStringProperty("JMSXGroupID", "g-1");
        MillraceMessage r = roundTrip(m);
        assertThat(r.getObjectProperty("bool")).isEqualTo(true);
        assertThat(r.getObjectProperty("byte")).isEqualTo((byte) -3);
        assertThat(r.getObjectProperty("short")).isEqualTo((short) 300);
        assertThat(r.getObjectProperty("int")).isEqualTo(70_000);
        assertThat(r.getObjectProperty("long")).isEqualTo(Long.MIN_VALUE);
        assertThat(r.getObjectProperty("float")).isEqualTo(1.25f);
        assertThat(r.getObjectProperty("double")).isEqualTo(-0.5d);
        assertThat(r.getObjectProperty("string")).isEqualTo("v\u00e4lue");
        assertThat(r.propertyExists("nothing")).isTrue();
        assertThat(r.getObjectProperty("JMSXGroupSeq")).isEqualTo(2);
        assertThat(r.getStringProperty("JMSXGroupID")).isEqualTo("g-1");
        assertThat(r.getIntProperty("JMSXDeliveryCount")).isEqualTo(1);
        assertThatThrownBy(() -> r.setIntProperty("x", 1)).isInstanceOf(MessageNotWriteableException.class);
    }

    @Test
    void shouldPutGroupIdInTheKeyAndNotWriteDeliveryCount() throws JMSException {
        MillraceMessage m = new MillraceMessage();
        m.setStringProperty("JMSXGroupID", "customer-7");
        m.setIntProperty("JMSXDeliveryCount", 5);
        JmsRecord record = RecordMessageMapper.toRecord(m);
        assertThat(new String(record.key(), StandardCharsets.UTF_8)).isEqualTo("customer-7");
        assertThat(record.headers()).extracting(Header::key)
                .doesNotContain("jms.prop.JMSXGroupID", "jms.prop.JMSXDeliveryCount");
        assertThat(RecordMessageMapper.toRecord(new MillraceMessage()).key()).isNull();
    }

    @Test
    void shouldSetDeliveryCountAndRedeliveredFromTheDelivery() throws JMSException {
        JmsRecord record = RecordMessageMapper.toRecord(new MillraceTextMessage());
        MillraceMessage third = RecordMessageMapper.toMessage(record, ORDERS, 3);
        assertThat(third.getIntProperty("JMSXDeliveryCount")).isEqualTo(3);
        assertThat(third.getJMSRedelivered()).isTrue();
    }

    @Test
    void shouldRoundTripTextBodyAndMakeItReadOnly() throws JMSException {
        MillraceTextMessage m = new MillraceTextMessage();
        m.setText("h\u00e9llo \ud83d\ude00");
        MillraceTextMessage r = (MillraceTextMessage) roundTrip(m);
        assertThat(r.getText()).isEqualTo("h\u00e9llo \ud83d\ude00");
        assertThatThrownBy(() -> r.setText("x")).isInstanceOf(MessageNotWriteableException.class);
        assertThat(((MillraceTextMessage) roundTrip(new MillraceTextMessage())).getText()).isNull();
    }

    @Test
    void shouldRoundTripBytesBodyReadyToRead() throws JMSException {
        MillraceBytesMessage m = new MillraceBytesMessage();
        m.writeInt(7);
        m.writeUTF("x");
        MillraceBytesMessage r = (MillraceBytesMessage) roundTrip(m);
        assertThat(r.getBodyLength()).isEqualTo(7);
        assertThat(r.readInt()).isEqualTo(7);
        assertThat(r.readUTF()).isEqualTo("x");
        assertThatThrownBy(() -> r.writeInt(1)).isInstanceOf(MessageNotWriteableException.class);
    }

    @Test
    void shouldRoundTripMapBodyWithEveryType() throws JMSException {
        MillraceMapMessage m = new MillraceMapMessage();
        m.setBoolean("z", true);
        m.setByte("b", (byte) 1);
        m.setShort("s", (short) 2);
        m.setChar("c", 'c');
        m.setInt("i", 3);
        m.setLong("l", 4L);
        m.setFloat("f", 5f);
        m.setDouble("d", 6d);
        m.setString("t", "txt");
        m.setBytes("y", new byte[] {9});
        m.setObject("n", null);
        MillraceMapMessage r = (MillraceMapMessage) roundTrip(m);
        assertThat(Collections.list(r.getMapNames())).containsExactly("z", "b", "s", "c", "i", "l", "f", "d", "t", "y",
                "n");
        assertThat(r.getBoolean("z")).isTrue();
        assertThat(r.getByte("b")).isEqualTo((byte) 1);
        assertThat(r.getShort("s")).isEqualTo((short) 2);
        assertThat(r.getChar("c")).isEqualTo('c');
        assertThat(r.getInt("i")).isEqualTo(3);
        assertThat(r.getLong("l")).isEqualTo(4L);
        assertThat(r.getFloat("f")).isEqualTo(5f);
        assertThat(r.getDouble("d")).isEqualTo(6d);
        assertThat(r.getString("t")).isEqualTo("txt");
        assertThat(r.getBytes("y")).containsExactly(9);
        assertThat(r.itemExists("n")).isTrue();
        assertThatThrownBy(() -> r.setInt("i", 1)).isInstanceOf(MessageNotWriteableException.class);
    }

    @Test
    void shouldRoundTripStreamBodyReadyToRead() throws JMSException {
        MillraceStreamMessage m = new MillraceStreamMessage();
        m.writeBoolean(false);
        m.writeByte((byte) 1);
        m.writeShort((short) 2);
        m.writeChar('c');
        m.writeInt(3);
        m.writeLong(4L);
        m.writeFloat(5f);
        m.writeDouble(6d);
        m.writeString("s");
        m.writeBytes(new byte[] {7, 8});
        m.writeObject(null);
        MillraceStreamMessage r = (MillraceStreamMessage) roundTrip(m);
        assertThat(r.readBoolean()).isFalse();
        assertThat(r.readByte()).isEqualTo((byte) 1);
        assertThat(r.readShort()).isEqualTo((short) 2);
        assertThat(r.readChar()).isEqualTo('c');
        assertThat(r.readInt()).isEqualTo(3);
        assertThat(r.readLong()).isEqualTo(4L);
        assertThat(r.readFloat()).isEqualTo(5f);
        assertThat(r.readDouble()).isEqualTo(6d);
        assertThat(r.readString()).isEqualTo("s");
        assertThat((byte[]) r.readObject()).containsExactly(7, 8);
        assertThat(r.readObject()).isNull();
    }

    @Test
    void shouldRoundTripObjectBody() throws JMSException {
        MillraceObjectMessage m = new MillraceObjectMessage();
        m.setObject(new ArrayList<>(List.of("a", 1)));
        MillraceObjectMessage r = (MillraceObjectMessage) roundTrip(m);
        assertThat(r.getObject()).isEqualTo(List.of("a", 1));
        assertThat(((MillraceObjectMessage) roundTrip(new MillraceObjectMessage())).getObject()).isNull();
    }

    @Test
    void shouldRoundTripPlainMessage() throws JMSException {
        MillraceMessage r = roundTrip(new MillraceMessage());
        assertThat(r.getClass()).isEqualTo(MillraceMessage.class);
        assertThat(RecordMessageMapper.toRecord(new MillraceMessage()).value()).isNull();
    }

    @Test
    void shouldReadRecordWithoutJmsHeadersAsBytesMessage() throws JMSException {
        JmsRecord record = kafkaRecord("k1".getBytes(StandardCharsets.UTF_8), new byte[] {0, 0, 0, 42},
                new RecordHeader("traceparent", new byte[] {1}));
        MillraceMessage m = RecordMessageMapper.toMessage(record, ORDERS, 1);
        assertThat(m).isInstanceOf(BytesMessage.class);
        BytesMessage bytes = (BytesMessage) m;
        assertThat(bytes.getBodyLength()).isEqualTo(4);
        assertThat(bytes.readInt()).isEqualTo(42);
        assertThat(m.getJMSDestination()).isEqualTo(ORDERS);
        assertThat(m.getJMSTimestamp()).isEqualTo(1234L);
        assertThat(m.getJMSDeliveryMode()).isEqualTo(DeliveryMode.PERSISTENT);
        assertThat(m.getJMSPriority()).isEqualTo(4);
        assertThat(m.getStringProperty("JMSXGroupID")).isEqualTo("k1");
        assertThat(Collections.list(m.getPropertyNames())).containsExactlyInAnyOrder("JMSXGroupID",
                "JMSXDeliveryCount");
        BytesMessage empty = (BytesMessage) RecordMessageMapper.toMessage(kafkaRecord(null, null), ORDERS, 1);
        assertThat(empty.getBodyLength()).isZero();
    }

    @Test
    void shouldReadRecordMarkedTextAsTextMessage() throws JMSException {
        JmsRecord record = kafkaRecord(null, "hello".getBytes(StandardCharsets.UTF_8),
                new RecordHeader("jms.body.type", "text".getBytes(StandardCharsets.US_ASCII)),
                new RecordHeader("jms.prop.count", new byte[] {0x05, 0, 0, 0, 7}));
        MillraceMessage m = RecordMessageMapper.toMessage(record, ORDERS, 1);
        assertThat(m).isInstanceOf(TextMessage.class);
        assertThat(((TextMessage) m).getText()).isEqualTo("hello");
        assertThat(m.getIntProperty("count")).isEqualTo(7);
        assertThat(m.getStringProperty("JMSXGroupID")).isNull();
    }

    @Test
    void shouldPreferTheSendersDestinationOverTheConsumedOne() throws JMSException {
        MillraceMessage m = new MillraceMessage();
        m.setJMSDestination(new MillraceQueue("original"));
        MillraceMessage r = RecordMessageMapper.toMessage(RecordMessageMapper.toRecord(m), ORDERS, 1);
        assertThat(r.getJMSDestination()).isEqualTo(new MillraceQueue("original"));
    }

    @Test
    void shouldTurnMalformedRecordsIntoMessageFormatExceptionsNamingHeaderAndOffset() {
        JmsRecord badPriority = kafkaRecord(null, null, new RecordHeader("jms.priority", new byte[] {4, 4}));
        assertThatThrownBy(() -> RecordMessageMapper.toMessage(badPriority, ORDERS, 1))
                .isInstanceOfSatisfying(MessageFormatException.class, e -> {
                    assertThat(e.getMessage()).contains("'jms.priority'").contains("byte offset 1");
                    assertThat(e.getLinkedException()).isInstanceOf(JmsRecordFormatException.class);
                    assertThat(((JmsRecordFormatException) e.getLinkedException()).offset()).isEqualTo(1);
                });
        JmsRecord badMap = kafkaRecord(null, new byte[] {0, 0, 0, 1, 0, 0, 0, 1, 'k', 0x05, 0},
                new RecordHeader("jms.body.type", "map".getBytes(StandardCharsets.US_ASCII)));
        assertThatThrownBy(() -> RecordMessageMapper.toMessage(badMap, ORDERS, 1))
                .isInstanceOf(MessageFormatException.class)
                .hasMessageContaining("<record value>").hasMessageContaining("byte offset 10");
        JmsRecord badText = kafkaRecord(null, new byte[] {'o', (byte) 0xFF},
                new RecordHeader("jms.body.type", "text".getBytes(StandardCharsets.US_ASCII)));
        assertThatThrownBy(() -> RecordMessageMapper.toMessage(badText, ORDERS, 1))
                .isInstanceOf(MessageFormatException.class).hasMessageContaining("byte offset 1");
    }

    @Test
    void shouldRefuseToWriteOutOfRangeHeaders() {
        MillraceMessage m = new MillraceMessage();
        m.setJMSPriority(12);
        assertThatThrownBy(() -> RecordMessageMapper.toRecord(m)).isInstanceOf(MessageFormatException.class)
                .hasMessageContaining("priority");
        m.setJMSPriority(4);
        m.setJMSDeliveryMode(7);
        assertThatThrownBy(() -> RecordMessageMapper.toRecord(m)).isInstanceOf(MessageFormatException.class);
    }

    @Test
    void shouldCopyAForeignTextMessageWithHeadersAndProperties() throws JMSException {
        TextMessage foreign = ForeignMessages.create(TextMessage.class);
        foreign.setText("from elsewhere");
        foreign.setJMSCorrelationID("corr");
        foreign.setJMSType("t");
        foreign.setJMSPriority(7);
        foreign.setJMSDeliveryMode(DeliveryMode.PERSISTENT);
        foreign.setJMSReplyTo(ForeignMessages.queue("replies"));
        foreign.setJMSDestination(ForeignMessages.temporaryTopic("tmp.x"));
        foreign.setIntProperty("n", 1);
        foreign.setStringProperty("JMSXGroupID", "g");
        foreign.setIntProperty("JMSXDeliveryCount", 9);
        MillraceMessage r = roundTrip(foreign);
        assertThat(((TextMessage) r).getText()).isEqualTo("from elsewhere");
        assertThat(r.getJMSCorrelationID()).isEqualTo("corr");
        assertThat(r.getJMSType()).isEqualTo("t");
        assertThat(r.getJMSPriority()).isEqualTo(7);
        assertThat(r.getJMSReplyTo()).isEqualTo(new MillraceQueue("replies"));
        assertThat(r.getJMSDestination()).isEqualTo(new MillraceTemporaryTopic("tmp.x", null));
        assertThat(r.getIntProperty("n")).isEqualTo(1);
        assertThat(r.getStringProperty("JMSXGroupID")).isEqualTo("g");
        assertThat(r.getIntProperty("JMSXDeliveryCount")).isEqualTo(1);
    }

    @Test
    void shouldCopyForeignBytesMapStreamAndObjectBodies() throws JMSException {
        BytesMessage bytes = ForeignMessages.create(BytesMessage.class);
        bytes.writeBytes(new byte[] {1, 2, 3});
        assertThat(((MillraceBytesMessage) roundTrip(bytes)).getBody(byte[].class)).containsExactly(1, 2, 3);

        MapMessage map = ForeignMessages.create(MapMessage.class);
        map.setObject("a", 1);
        map.setObject("b", "two");
        assertThat(((MillraceMapMessage) roundTrip(map)).getBody(Map.class)).isEqualTo(Map.of("a", 1, "b", "two"));

        StreamMessage stream = ForeignMessages.create(StreamMessage.class);
        stream.writeObject(1L);
        stream.writeObject("x");
        MillraceStreamMessage s = (MillraceStreamMessage) roundTrip(stream);
        assertThat(s.readLong()).isEqualTo(1L);
        assertThat(s.readString()).isEqualTo("x");

        ObjectMessage object = ForeignMessages.create(ObjectMessage.class);
        object.setObject(42);
        assertThat(((MillraceObjectMessage) roundTrip(object)).getObject()).isEqualTo(42);

        assertThat(roundTrip(ForeignMessages.create(Message.class)).getClass()).isEqualTo(MillraceMessage.class);
    }

    @Test
    void shouldRefuseForeignDestinationsItCannotName() {
        MillraceMessage m = new MillraceMessage();
        m.setJMSReplyTo(ForeignMessages.plainDestination());
        assertThatThrownBy(() -> RecordMessageMapper.toRecord(m)).isInstanceOf(InvalidDestinationException.class)
                .hasMessageContaining("neither a Queue nor a Topic");
        m.setJMSReplyTo(ForeignMessages.queue("bad/name"));
        assertThatThrownBy(() -> RecordMessageMapper.toRecord(m)).isInstanceOf(InvalidDestinationException.class)
                .hasMessageContaining("'/'");
    }
}
