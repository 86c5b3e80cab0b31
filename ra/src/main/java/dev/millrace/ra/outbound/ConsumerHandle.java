package dev.millrace.ra.outbound;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageListener;
import jakarta.jms.Queue;
import jakarta.jms.QueueReceiver;
import jakarta.jms.Topic;
import jakarta.jms.TopicSubscriber;

/**
 * A consumer made through a {@link SessionHandle}: the physical consumer, except that {@code setMessageListener}
 * and {@code getMessageListener} throw IllegalStateException (JMS 3.1, 12.2: asynchronous delivery in a container
 * is the job of message-driven beans). Closed with its session handle.
 *
 * <p>Used by one thread at a time, like a consumer.
 */
final class ConsumerHandle implements QueueReceiver, TopicSubscriber {

    private final MessageConsumer consumer;

    ConsumerHandle(MessageConsumer consumer) {
        this.consumer = consumer;
    }

    @Override
    public String getMessageSelector() throws JMSException {
        return consumer.getMessageSelector();
    }

    @Override
    public MessageListener getMessageListener() throws JMSException {
        throw ConnectionHandle.notInContainer("MessageConsumer.getMessageListener");
    }

    @Override
    public void setMessageListener(MessageListener listener) throws JMSException {
        throw ConnectionHandle.notInContainer("MessageConsumer.setMessageListener");
    }

    @Override
    public Message receive() throws JMSException {
        return consumer.receive();
    }

    @Override
    public Message receive(long timeoutMs) throws JMSException {
        return consumer.receive(timeoutMs);
    }

    @Override
    public Message receiveNoWait() throws JMSException {
        return consumer.receiveNoWait();
    }

    @Override
    public void close() throws JMSException {
        consumer.close();
    }

    @Override
    public Queue getQueue() throws JMSException {
        return ((QueueReceiver) consumer).getQueue();
    }

    @Override
    public Topic getTopic() throws JMSException {
        return ((TopicSubscriber) consumer).getTopic();
    }

    @Override
    public boolean getNoLocal() throws JMSException {
        return ((TopicSubscriber) consumer).getNoLocal();
    }
}
