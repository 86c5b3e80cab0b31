package dev.millrace.ra.outbound;

import java.io.Serializable;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import jakarta.jms.BytesMessage;
import jakarta.jms.ConnectionMetaData;
import jakarta.jms.Destination;
import jakarta.jms.ExceptionListener;
import jakarta.jms.IllegalStateRuntimeException;
import jakarta.jms.JMSConsumer;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSException;
import jakarta.jms.JMSProducer;
import jakarta.jms.JMSRuntimeException;
import jakarta.jms.MapMessage;
import jakarta.jms.Message;
import jakarta.jms.ObjectMessage;
import jakarta.jms.Queue;
import jakarta.jms.QueueBrowser;
import jakarta.jms.StreamMessage;
import jakarta.jms.TemporaryQueue;
import jakarta.jms.TemporaryTopic;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;
import jakarta.jms.XAJMSContext;

/**
 * The JMSContext an application gets from {@code createContext} on {@link MillraceConnectionFactoryHandle}: a view
 * of its managed connection's XA context (over the same XA session as {@link SessionHandle}), so it works in the
 * container's transaction when there is one and as AUTO_ACKNOWLEDGE otherwise, whatever session mode was asked for
 * (JMS 3.1, 12.3). {@code setClientID}, {@code setExceptionListener}, {@code getExceptionListener}, {@code stop}
 * and {@code createContext} throw IllegalStateRuntimeException (12.2), and so does {@code setAsync} of its producers
 * ({@link JMSProducerHandle}); {@code commit} and {@code rollback} throw TransactionInProgressRuntimeException.
 *
 * <p>It owns the consumers made through it; {@code close} closes them and its {@link ConnectionHandle}, which gives
 * the managed connection back to the container.
 *
 * <p>Used by one thread at a time, like a context.
 */
final class ContextHandle implements JMSContext {

    private final ConnectionHandle connection;
    private final List<JMSConsumer> consumers = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    ContextHandle(ConnectionHandle connection) {
        this.connection = connection;
    }

    private XAJMSContext context() {
        if (closed) {
            throw new IllegalStateRuntimeException("the context is closed");
        }
        try {
            return connection.managed().physicalContext();
        } catch (JMSException e) {
            throw new JMSRuntimeException(e.getMessage(), e.getErrorCode(), e);
        }
    }

    private JMSConsumer track(JMSConsumer consumer) {
        JMSConsumerHandle handle = new JMSConsumerHandle(consumer);
        consumers.add(handle);
        return handle;
    }

    /** Closes the consumers made through this context (the container's cleanup, or close). */
    void closeConsumers() {
        closed = true;
        for (JMSConsumer c : consumers) {
            try {
                c.close();
            } catch (RuntimeException ignored) {
                // closed with its connection at the latest
            }
        }
        consumers.clear();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closeConsumers();
        try {
            connection.close();
        } catch (JMSException e) {
            throw new JMSRuntimeException(e.getMessage(), e.getErrorCode(), e);
        }
    }

    private static IllegalStateRuntimeException notInContainer(String method) {
        return new IllegalStateRuntimeException(method + " is not allowed in a Jakarta EE web or EJB container"
                + " (JMS 3.1, 12.2)");
    }

    @Override
    public JMSContext createContext(int sessionMode) {
        context();
        throw notInContainer("JMSContext.createContext");
    }

    @Override
    public void setClientID(String clientID) {
        context();
        throw notInContainer("JMSContext.setClientID (give the connection factory a clientId)");
    }

    @Override
    public ExceptionListener getExceptionListener() {
        context();
        throw notInContainer("JMSContext.getExceptionListener");
    }

    @Override
    public void setExceptionListener(ExceptionListener listener) {
        context();
        throw notInContainer("JMSContext.setExceptionListener");
    }

    @Override
    public void stop() {
        context();
        throw notInContainer("JMSContext.stop");
    }

    @Override
    public String toString() {
        return "ContextHandle[" + connection + (closed ? ", closed" : "") + "]";
    }

    // ---- the rest as the physical context

    @Override
    public JMSProducer createProducer() {
        return new JMSProducerHandle(context().createProducer());
    }

    @Override
    public String getClientID() {
        return context().getClientID();
    }

    @Override
    public ConnectionMetaData getMetaData() {
        return context().getMetaData();
    }

    @Override
    public void start() {
        context().start();
    }

    @Override
    public void setAutoStart(boolean flag) {
        context().setAutoStart(flag);
    }

    @Override
    public boolean getAutoStart() {
        return context().getAutoStart();
    }

    @Override
    public BytesMessage createBytesMessage() {
        return context().createBytesMessage();
    }

    @Override
    public MapMessage createMapMessage() {
        return context().createMapMessage();
    }

    @Override
    public Message createMessage() {
        return context().createMessage();
    }

    @Override
    public ObjectMessage createObjectMessage() {
        return context().createObjectMessage();
    }

    @Override
    public ObjectMessage createObjectMessage(Serializable object) {
        return context().createObjectMessage(object);
    }

    @Override
    public StreamMessage createStreamMessage() {
        return context().createStreamMessage();
    }

    @Override
    public TextMessage createTextMessage() {
        return context().createTextMessage();
    }

    @Override
    public TextMessage createTextMessage(String text) {
        return context().createTextMessage(text);
    }

    @Override
    public boolean getTransacted() {
        return context().getTransacted();
    }

    @Override
    public int getSessionMode() {
        return context().getSessionMode();
    }

    @Override
    public void commit() {
        context().commit();
    }

    @Override
    public void rollback() {
        context().rollback();
    }

    @Override
    public void recover() {
        context().recover();
    }

    @Override
    public JMSConsumer createConsumer(Destination destination) {
        return track(context().createConsumer(destination));
    }

    @Override
    public JMSConsumer createConsumer(Destination destination, String messageSelector) {
        return track(context().createConsumer(destination, messageSelector));
    }

    @Override
    public JMSConsumer createConsumer(Destination destination, String messageSelector, boolean noLocal) {
        return track(context().createConsumer(destination, messageSelector, noLocal));
    }

    @Override
    public Queue createQueue(String destinationName) {
        return context().createQueue(destinationName);
    }

    @Override
    public Topic createTopic(String destinationName) {
        return context().createTopic(destinationName);
    }

    @Override
    public JMSConsumer createDurableConsumer(Topic topic, String subscriptionName) {
        return track(context().createDurableConsumer(topic, subscriptionName));
    }

    @Override
    public JMSConsumer createDurableConsumer(Topic topic, String subscriptionName, String messageSelector, boolean noLocal) {
        return track(context().createDurableConsumer(topic, subscriptionName, messageSelector, noLocal));
    }

    @Override
    public JMSConsumer createSharedDurableConsumer(Topic topic, String subscriptionName) {
        return track(context().createSharedDurableConsumer(topic, subscriptionName));
    }

    @Override
    public JMSConsumer createSharedDurableConsumer(Topic topic, String subscriptionName, String messageSelector) {
        return track(context().createSharedDurableConsumer(topic, subscriptionName, messageSelector));
    }

    @Override
    public JMSConsumer createSharedConsumer(Topic topic, String subscriptionName) {
        return track(context().createSharedConsumer(topic, subscriptionName));
    }

    @Override
    public JMSConsumer createSharedConsumer(Topic topic, String subscriptionName, String messageSelector) {
        return track(context().createSharedConsumer(topic, subscriptionName, messageSelector));
    }

    @Override
    public QueueBrowser createBrowser(Queue queue) {
        return context().createBrowser(queue);
    }

    @Override
    public QueueBrowser createBrowser(Queue queue, String messageSelector) {
        return context().createBrowser(queue, messageSelector);
    }

    @Override
    public TemporaryQueue createTemporaryQueue() {
        return context().createTemporaryQueue();
    }

    @Override
    public TemporaryTopic createTemporaryTopic() {
        return context().createTemporaryTopic();
    }

    @Override
    public void unsubscribe(String subscriptionName) {
        context().unsubscribe(subscriptionName);
    }

    @Override
    public void acknowledge() {
        context().acknowledge();
    }

}
