package dev.millrace.jms;

import jakarta.jms.BytesMessage;
import jakarta.jms.JMSConsumer;
import jakarta.jms.JMSException;
import jakarta.jms.MapMessage;
import jakarta.jms.Message;
import jakarta.jms.MessageFormatException;
import jakarta.jms.MessageFormatRuntimeException;
import jakarta.jms.MessageListener;
import jakarta.jms.ObjectMessage;
import jakarta.jms.StreamMessage;
import jakarta.jms.TextMessage;

/** The simplified API's consumer over a {@link MillraceMessageConsumer}. Same threading rules. */
final class MillraceJMSConsumer implements JMSConsumer {

    private final MillraceMessageConsumer consumer;

    MillraceJMSConsumer(MillraceMessageConsumer consumer) {
        this.consumer = consumer;
    }

    @Override
    public String getMessageSelector() {
        return JmsExceptions.runtime(consumer::getMessageSelector);
    }

    @Override
    public MessageListener getMessageListener() {
        return JmsExceptions.runtime(consumer::getMessageListener);
    }

    @Override
    public void setMessageListener(MessageListener listener) {
        JmsExceptions.runtime(() -> {
            consumer.setMessageListener(listener);
            return null;
        });
    }

    @Override
    public Message receive() {
        return JmsExceptions.runtime(consumer::receive);
    }

    @Override
    public Message receive(long timeout) {
        return JmsExceptions.runtime(() -> consumer.receive(timeout));
    }

    @Override
    public Message receiveNoWait() {
        return JmsExceptions.runtime(consumer::receiveNoWait);
    }

    @Override
    public void close() {
        JmsExceptions.runtime(() -> {
            consumer.close();
            return null;
        });
    }

    @Override
    public <T> T receiveBody(Class<T> c) {
        return receiveBody(c, 0, false);
    }

    @Override
    public <T> T receiveBody(Class<T> c, long timeout) {
        return receiveBody(c, timeout, false);
    }

    @Override
    public <T> T receiveBodyNoWait(Class<T> c) {
        return receiveBody(c, 0, true);
    }

    /**
     * The body of the next message, by the JMSConsumer.receiveBody javadoc: a plain Message, a StreamMessage, a
     * message without body (e.g. a TextMessage whose text is null, an empty BytesMessage or MapMessage), a body not
     * assignable to {@code c} and an ObjectMessage that cannot be deserialized fail with
     * MessageFormatRuntimeException. Then, in AUTO_ACKNOWLEDGE and DUPS_OK_ACKNOWLEDGE, the message is not
     * acknowledged and the next receive gets it again, not counted as a redelivery; in CLIENT_ACKNOWLEDGE and
     * transacted sessions it counts as delivered (recover or rollback bring it back). See
     * {@link MillraceMessageConsumer#receive(long, boolean, MillraceMessageConsumer.Receipt)}.
     */
    private <T> T receiveBody(Class<T> c, long timeout, boolean noWait) {
        if (c == null) {
            throw new MessageFormatRuntimeException("receiveBody needs the class of the body, not null");
        }
        return JmsExceptions.runtime(() -> consumer.receive(timeout, noWait, m -> body(m, c)));
    }

    private static <T> T body(Message m, Class<T> c) throws JMSException {
        if (!(m instanceof TextMessage || m instanceof BytesMessage || m instanceof MapMessage
                || m instanceof ObjectMessage)) {
            throw new MessageFormatException("receiveBody cannot return the body of a "
                    + (m instanceof StreamMessage ? "StreamMessage" : "plain Message")
                    + "; use receive");
        }
        T body = m.getBody(c); // MessageFormatException when not assignable or not deserializable
        if (body == null) {
            throw new MessageFormatException("the received message has no body, which receiveBody cannot return; "
                    + "use receive");
        }
        return body;
    }

    @Override
    public String toString() {
        return "MillraceJMSConsumer[" + consumer + "]";
    }

}
