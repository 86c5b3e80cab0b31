package dev.millrace.ra.outbound;

import jakarta.jms.CompletionListener;
import jakarta.jms.Destination;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.QueueSender;
import jakarta.jms.Topic;
import jakarta.jms.TopicPublisher;

/**
 * A producer made through a {@link SessionHandle}: the physical producer, except that the asynchronous sends (with
 * a CompletionListener) throw IllegalStateException (JMS 3.1, 12.2).
 *
 * <p>Used by one thread at a time, like a producer.
 */
final class ProducerHandle implements QueueSender, TopicPublisher {

    private final MessageProducer producer;

    ProducerHandle(MessageProducer producer) {
        this.producer = producer;
    }

    private QueueSender sender() {
        return (QueueSender) producer;
    }

    private TopicPublisher publisher() {
        return (TopicPublisher) producer;
    }

    @Override
    public void close() throws JMSException {
        producer.close();
    }

    @Override
    public void setDisableMessageID(boolean value) throws JMSException {
        producer.setDisableMessageID(value);
    }

    @Override
    public boolean getDisableMessageID() throws JMSException {
        return producer.getDisableMessageID();
    }

    @Override
    public void setDisableMessageTimestamp(boolean value) throws JMSException {
        producer.setDisableMessageTimestamp(value);
    }

    @Override
    public boolean getDisableMessageTimestamp() throws JMSException {
        return producer.getDisableMessageTimestamp();
    }

    @Override
    public void setDeliveryMode(int value) throws JMSException {
        producer.setDeliveryMode(value);
    }

    @Override
    public int getDeliveryMode() throws JMSException {
        return producer.getDeliveryMode();
    }

    @Override
    public void setPriority(int value) throws JMSException {
        producer.setPriority(value);
    }

    @Override
    public int getPriority() throws JMSException {
        return producer.getPriority();
    }

    @Override
    public void setTimeToLive(long value) throws JMSException {
        producer.setTimeToLive(value);
    }

    @Override
    public long getTimeToLive() throws JMSException {
        return producer.getTimeToLive();
    }

    @Override
    public void setDeliveryDelay(long value) throws JMSException {
        producer.setDeliveryDelay(value);
    }

    @Override
    public long getDeliveryDelay() throws JMSException {
        return producer.getDeliveryDelay();
    }

    @Override
    public Destination getDestination() throws JMSException {
        return producer.getDestination();
    }

    @Override
    public void send(Message message) throws JMSException {
        producer.send(message);
    }

    @Override
    public void send(Message message, int deliveryMode, int priority, long timeToLive) throws JMSException {
        producer.send(message, deliveryMode, priority, timeToLive);
    }

    @Override
    public void send(Destination destination, Message message) throws JMSException {
        producer.send(destination, message);
    }

    @Override
    public void send(Destination destination, Message message, int deliveryMode, int priority, long timeToLive) throws JMSException {
        producer.send(destination, message, deliveryMode, priority, timeToLive);
    }

    @Override
    public void send(Message message, CompletionListener completionListener) throws JMSException {
        throw ConnectionHandle.notInContainer("MessageProducer.send with a CompletionListener (asynchronous send)");
    }

    @Override
    public void send(Message message, int deliveryMode, int priority, long timeToLive, CompletionListener completionListener) throws JMSException {
        throw ConnectionHandle.notInContainer("MessageProducer.send with a CompletionListener (asynchronous send)");
    }

    @Override
    public void send(Destination destination, Message message, CompletionListener completionListener) throws JMSException {
        throw ConnectionHandle.notInContainer("MessageProducer.send with a CompletionListener (asynchronous send)");
    }

    @Override
    public void send(Destination destination, Message message, int deliveryMode, int priority, long timeToLive, CompletionListener completionListener) throws JMSException {
        throw ConnectionHandle.notInContainer("MessageProducer.send with a CompletionListener (asynchronous send)");
    }

    @Override
    public Queue getQueue() throws JMSException {
        return sender().getQueue();
    }

    @Override
    public void send(Queue destination, Message message) throws JMSException {
        sender().send(destination, message);
    }

    @Override
    public void send(Queue destination, Message message, int deliveryMode, int priority, long timeToLive) throws JMSException {
        sender().send(destination, message, deliveryMode, priority, timeToLive);
    }

    @Override
    public Topic getTopic() throws JMSException {
        return publisher().getTopic();
    }

    @Override
    public void publish(Message message) throws JMSException {
        publisher().publish(message);
    }

    @Override
    public void publish(Message message, int deliveryMode, int priority, long timeToLive) throws JMSException {
        publisher().publish(message, deliveryMode, priority, timeToLive);
    }

    @Override
    public void publish(Topic destination, Message message) throws JMSException {
        publisher().publish(destination, message);
    }

    @Override
    public void publish(Topic destination, Message message, int deliveryMode, int priority, long timeToLive) throws JMSException {
        publisher().publish(destination, message, deliveryMode, priority, timeToLive);
    }

}
