package dev.millrace.jms.message;

import java.util.Enumeration;
import java.util.Map;

import dev.millrace.jms.MillraceDestination;
import dev.millrace.protocol.jms.BodyType;
import dev.millrace.protocol.jms.DestinationType;
import dev.millrace.protocol.jms.JmsDestination;
import dev.millrace.protocol.jms.JmsMessageData;
import dev.millrace.protocol.jms.JmsRecord;
import dev.millrace.protocol.jms.JmsRecordCodec;
import dev.millrace.protocol.jms.JmsRecordFormatException;
import jakarta.jms.BytesMessage;
import jakarta.jms.JMSException;
import jakarta.jms.MapMessage;
import jakarta.jms.Message;
import jakarta.jms.MessageEOFException;
import jakarta.jms.MessageFormatException;
import jakarta.jms.ObjectMessage;
import jakarta.jms.StreamMessage;
import jakarta.jms.TextMessage;

/**
 * Turns JMS messages into record parts ({@link JmsRecord}) and records into received messages, using the mapping of
 * {@link JmsRecordCodec}. The one place where the provider meets the record format.
 *
 * <ul>
 *   <li>{@link #toRecord} accepts any provider's {@link Message}: a foreign one is first copied through the standard
 *       API ({@link #copyOf}). JMSXGroupID becomes the record key; JMSXDeliveryCount and JMSRedelivered are not
 *       written (the delivery sets them).
 *   <li>{@link #toMessage} builds the message type the record's body type names, sets JMSXDeliveryCount and
 *       JMSRedelivered from the delivery count, and leaves properties and body read-only, as received messages are.
 *       JMSDestination is the destination the sender sent to ({@code jms.destination}), or the destination consumed
 *       from when the record does not say (records from Kafka producers). Millrace's dead-letter, expiry and delay
 *       headers become {@code JMS_Millrace_*} properties ({@link VendorProperties}).
 * </ul>
 *
 * <p>Malformed records become {@link MessageFormatException}s whose message names the header and byte offset, and
 * whose linked exception is the {@link JmsRecordFormatException}.
 *
 * <p>Stateless and thread-safe; the messages passed in are not (use each from one thread).
 */
public final class RecordMessageMapper {

    private RecordMessageMapper() {
    }

    /**
     * The record parts for {@code message}, which is not modified (except that a foreign BytesMessage or
     * StreamMessage is reset by the copy).
     *
     * @throws MessageFormatException if a header value cannot be written (priority outside 0..9, delivery mode other
     *                                than PERSISTENT / NON_PERSISTENT, JMSXGroupID not a String)
     * @throws jakarta.jms.InvalidDestinationException if JMSDestination or JMSReplyTo cannot be named here
     */
    public static JmsRecord toRecord(Message message) throws JMSException {
        MillraceMessage m = message instanceof MillraceMessage ? (MillraceMessage) message : copyOf(message);
        JmsMessageData.Builder b = JmsMessageData.builder()
                .body(m.bodyType(), m.encodeBody())
                .messageId(m.getJMSMessageID())
                .type(m.getJMSType())
                .deliveryMode(m.getJMSDeliveryMode())
                .priority(m.getJMSPriority())
                .timestamp(m.getJMSTimestamp())
                .expiration(m.getJMSExpiration())
                .deliveryTime(m.getJMSDeliveryTime());
        if (m.correlationIdBytes() != null) {
            b.correlationIdBytes(m.correlationIdBytes());
        } else {
            b.correlationId(m.correlationIdString());
        }
        MillraceDestination destination = MillraceDestination.from(m.getJMSDestination());
        MillraceDestination replyTo = MillraceDestination.from(m.getJMSReplyTo());
        b.destination(destination == null ? null : destination.toWire());
        b.replyTo(replyTo == null ? null : replyTo.toWire());
        Map<String, Object> properties = m.propertySnapshot();
        properties.remove(MessageProperties.JMSX_DELIVERY_COUNT);
        Object groupId = properties.remove(MessageProperties.JMSX_GROUP_ID);
        if (groupId != null && !(groupId instanceof String)) {
            throw new MessageFormatException("JMSXGroupID must be a String, not a " + groupId.getClass().getName());
        }
        b.groupId((String) groupId);
        b.properties(properties);
        try {
            return JmsRecordCodec.encode(b.build());
        } catch (IllegalArgumentException e) {
            MessageFormatException mfe = new MessageFormatException("cannot write message: " + e.getMessage());
            mfe.initCause(e);
            throw mfe;
        }
    }

    /**
     * A received message for {@code record}.
     *
     * @param consumedFrom  the destination the record was read from; JMSDestination when the record names none
     * @param deliveryCount how many times this record has been delivered, counting this time (at least 1)
     * @throws MessageFormatException if the record is malformed
     */
    public static MillraceMessage toMessage(JmsRecord record, MillraceDestination consumedFrom, int deliveryCount)
            throws JMSException {
        try {
            JmsMessageData d = JmsRecordCodec.decode(record);
            MillraceMessage m = newMessage(d.bodyType());
            m.decodeBody(d.bodyUnshared()); // the messages only read it (a BytesMessage's clearBody starts afresh)
            m.setJMSMessageID(d.messageId());
            if (d.correlationIdBytes() != null) {
                m.setJMSCorrelationIDAsBytes(d.correlationIdBytes());
            } else {
                m.setJMSCorrelationID(d.correlationId());
            }
            m.setJMSType(d.type());
            m.setJMSDeliveryMode(d.deliveryMode());
            m.setJMSPriority(d.priority());
            m.setJMSTimestamp(d.timestamp());
            m.setJMSExpiration(d.expiration());
            m.setJMSDeliveryTime(d.deliveryTime());
            m.setJMSDestination(destination(d.destination(), consumedFrom));
            m.setJMSReplyTo(MillraceDestination.fromWire(d.replyTo()));
            d.properties().forEach(m.properties::setTrusted);
            if (d.groupId() != null) {
                m.properties.setTrusted(MessageProperties.JMSX_GROUP_ID, d.groupId());
            }
            VendorProperties.addTo(record, m);
            m.setDeliveryCount(deliveryCount);
            m.onReceived();
            return m;
        } catch (JmsRecordFormatException e) {
            MessageFormatException mfe = new MessageFormatException(e.getMessage());
            mfe.setLinkedException(e);
            mfe.initCause(e);
            throw mfe;
        }
    }

    /**
     * JMSDestination of a received message: the destination it was consumed from when the record names that queue or
     * topic or none (no new object, no second check of the name, per message), else the one the record names. A
     * temporary destination is always a new object: the consumer's own has an owner, the message's must not.
     */
    private static MillraceDestination destination(JmsDestination named, MillraceDestination consumedFrom) {
        if (named == null) {
            return consumedFrom;
        }
        boolean same = consumedFrom != null && named.type() == consumedFrom.type()
                && (named.type() == DestinationType.QUEUE || named.type() == DestinationType.TOPIC)
                && named.name().equals(consumedFrom.getName());
        return same ? consumedFrom : MillraceDestination.fromWire(named);
    }

    /** A new, empty, writable message of the type {@code bodyType} names. */
    public static MillraceMessage newMessage(BodyType bodyType) {
        switch (bodyType) {
            case BYTES:
                return new MillraceBytesMessage();
            case TEXT:
                return new MillraceTextMessage();
            case MAP:
                return new MillraceMapMessage();
            case STREAM:
                return new MillraceStreamMessage();
            case OBJECT:
                return new MillraceObjectMessage();
            default:
                return new MillraceMessage();
        }
    }

    /**
     * Copies another provider's message through the standard API: header fields, properties and body, into a
     * writable Millrace message of the same kind. A foreign BytesMessage or StreamMessage is reset before and after
     * reading its body. JMSXDeliveryCount is not copied; destinations are converted with
     * {@link MillraceDestination#from}.
     */
    public static MillraceMessage copyOf(Message foreign) throws JMSException {
        MillraceMessage copy;
        if (foreign instanceof BytesMessage) {
            copy = copyBytes((BytesMessage) foreign);
        } else if (foreign instanceof MapMessage) {
            copy = copyMap((MapMessage) foreign);
        } else if (foreign instanceof StreamMessage) {
            copy = copyStream((StreamMessage) foreign);
        } else if (foreign instanceof TextMessage) {
            MillraceTextMessage text = new MillraceTextMessage();
            text.setText(((TextMessage) foreign).getText());
            copy = text;
        } else if (foreign instanceof ObjectMessage) {
            MillraceObjectMessage object = new MillraceObjectMessage();
            object.setObject(((ObjectMessage) foreign).getObject());
            copy = object;
        } else {
            copy = new MillraceMessage();
        }
        copy.setJMSMessageID(foreign.getJMSMessageID());
        copy.setJMSTimestamp(foreign.getJMSTimestamp());
        copy.setJMSCorrelationID(foreign.getJMSCorrelationID());
        copy.setJMSReplyTo(MillraceDestination.from(foreign.getJMSReplyTo()));
        copy.setJMSDestination(MillraceDestination.from(foreign.getJMSDestination()));
        copy.setJMSDeliveryMode(foreign.getJMSDeliveryMode());
        copy.setJMSRedelivered(foreign.getJMSRedelivered());
        copy.setJMSType(foreign.getJMSType());
        copy.setJMSExpiration(foreign.getJMSExpiration());
        copy.setJMSDeliveryTime(foreign.getJMSDeliveryTime());
        copy.setJMSPriority(foreign.getJMSPriority());
        Enumeration<?> names = foreign.getPropertyNames();
        while (names.hasMoreElements()) {
            String name = (String) names.nextElement();
            if (!MessageProperties.JMSX_DELIVERY_COUNT.equals(name)) {
                copy.setObjectProperty(name, foreign.getObjectProperty(name));
            }
        }
        return copy;
    }

    private static MillraceBytesMessage copyBytes(BytesMessage foreign) throws JMSException {
        MillraceBytesMessage copy = new MillraceBytesMessage();
        foreign.reset();
        byte[] body = new byte[Math.toIntExact(foreign.getBodyLength())];
        int offset = 0;
        while (offset < body.length) {
            byte[] chunk = new byte[body.length - offset];
            int n = foreign.readBytes(chunk);
            if (n < 0) {
                break;
            }
            System.arraycopy(chunk, 0, body, offset, n);
            offset += n;
        }
        foreign.reset();
        copy.writeBytes(body, 0, offset);
        return copy;
    }

    private static MillraceMapMessage copyMap(MapMessage foreign) throws JMSException {
        MillraceMapMessage copy = new MillraceMapMessage();
        Enumeration<?> names = foreign.getMapNames();
        while (names.hasMoreElements()) {
            String name = (String) names.nextElement();
            copy.setObject(name, foreign.getObject(name));
        }
        return copy;
    }

    private static MillraceStreamMessage copyStream(StreamMessage foreign) throws JMSException {
        MillraceStreamMessage copy = new MillraceStreamMessage();
        foreign.reset();
        while (true) {
            Object value;
            try {
                value = foreign.readObject();
            } catch (MessageEOFException end) {
                break;
            }
            copy.writeObject(value);
        }
        foreign.reset();
        return copy;
    }
}
