package dev.millrace.jms;

import jakarta.jms.JMSConsumer;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageFormatRuntimeException;
import jakarta.jms.MessageListener;

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
        return body(receive(), c);
    }

    @Override
    public <T> T receiveBody(Class<T> c, long timeout) {
        return body(receive(timeout), c);
    }

    @Override
    public <T> T receiveBodyNoWait(Class<T> c) {
        return body(receiveNoWait(), c);
    }

    /**
     * The body of a received message. A body of the wrong type fails with MessageFormatRuntimeException; the
     * message has been acknowledged by then in AUTO and DUPS_OK modes (it is not redelivered).
     */
    private static <T> T body(Message m, Class<T> c) {
        if (m == null) {
            return null;
        }
        try {
            return m.getBody(c);
        } catch (jakarta.jms.MessageFormatException e) {
            throw new MessageFormatRuntimeException(e.getMessage(), e.getErrorCode(), e);
        } catch (JMSException e) {
            throw JmsExceptions.toRuntime(e);
        }
    }

    @Override
    public String toString() {
        return "MillraceJMSConsumer[" + consumer + "]";
    }

}
