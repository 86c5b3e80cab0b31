package dev.millrace.ra.outbound;

import jakarta.jms.IllegalStateRuntimeException;
import jakarta.jms.JMSConsumer;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;

/**
 * A JMSConsumer made through a {@link ContextHandle}: the physical consumer, except that
 * {@code setMessageListener} and {@code getMessageListener} throw IllegalStateRuntimeException (JMS 3.1, 12.2).
 *
 * <p>Used by one thread at a time, like a consumer.
 */
final class JMSConsumerHandle implements JMSConsumer {

    private final JMSConsumer consumer;

    JMSConsumerHandle(JMSConsumer consumer) {
        this.consumer = consumer;
    }

    @Override
    public String getMessageSelector() {
        return consumer.getMessageSelector();
    }

    @Override
    public MessageListener getMessageListener() {
        throw new IllegalStateRuntimeException("JMSConsumer.getMessageListener is not allowed in a Jakarta EE web or"
                + " EJB container (JMS 3.1, 12.2)");
    }

    @Override
    public void setMessageListener(MessageListener listener) {
        throw new IllegalStateRuntimeException("JMSConsumer.setMessageListener is not allowed in a Jakarta EE web or"
                + " EJB container (JMS 3.1, 12.2)");
    }

    @Override
    public Message receive() {
        return consumer.receive();
    }

    @Override
    public Message receive(long timeoutMs) {
        return consumer.receive(timeoutMs);
    }

    @Override
    public Message receiveNoWait() {
        return consumer.receiveNoWait();
    }

    @Override
    public void close() {
        consumer.close();
    }

    @Override
    public <T> T receiveBody(Class<T> type) {
        return consumer.receiveBody(type);
    }

    @Override
    public <T> T receiveBody(Class<T> type, long timeoutMs) {
        return consumer.receiveBody(type, timeoutMs);
    }

    @Override
    public <T> T receiveBodyNoWait(Class<T> type) {
        return consumer.receiveBodyNoWait(type);
    }
}
