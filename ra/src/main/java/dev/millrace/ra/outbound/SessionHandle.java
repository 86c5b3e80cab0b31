package dev.millrace.ra.outbound;

import java.io.Serializable;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import jakarta.jms.BytesMessage;
import jakarta.jms.Destination;
import jakarta.jms.IllegalStateException;
import jakarta.jms.JMSException;
import jakarta.jms.MapMessage;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageListener;
import jakarta.jms.MessageProducer;
import jakarta.jms.ObjectMessage;
import jakarta.jms.Queue;
import jakarta.jms.QueueBrowser;
import jakarta.jms.QueueReceiver;
import jakarta.jms.QueueSender;
import jakarta.jms.QueueSession;
import jakarta.jms.StreamMessage;
import jakarta.jms.TemporaryQueue;
import jakarta.jms.TemporaryTopic;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;
import jakarta.jms.TopicPublisher;
import jakarta.jms.TopicSession;
import jakarta.jms.TopicSubscriber;
import dev.millrace.jms.MillraceXASession;

/**
 * The Session of a {@link ConnectionHandle}: a view of its managed connection's one XA session. Inside a
 * container transaction its sends and receives are part of it (the container enlisted the XAResource); outside one
 * it works as a non-transacted AUTO_ACKNOWLEDGE session. {@code commit} and {@code rollback} throw
 * TransactionInProgressException (the container completes transactions); {@code setMessageListener},
 * {@code getMessageListener} and {@code run} throw IllegalStateException (JMS 3.1, 12.2), on the session and on
 * its consumers ({@link ConsumerHandle}), and so do asynchronous sends of its producers ({@link ProducerHandle}).
 *
 * <p>It owns the consumers and browsers made through it and closes them on {@code close}; the physical session
 * stays open for the managed connection's next user.
 *
 * <p>Used by one thread at a time, like a session.
 */
final class SessionHandle implements QueueSession, TopicSession {

    private final ConnectionHandle connection;
    private final List<AutoCloseable> children = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    SessionHandle(ConnectionHandle connection) {
        this.connection = connection;
    }

    boolean isClosed() {
        return closed;
    }

    private MillraceXASession session() throws JMSException {
        if (closed) {
            throw new IllegalStateException("the session is closed");
        }
        return connection.managed().physicalSession();
    }

    private ConsumerHandle track(MessageConsumer consumer) {
        ConsumerHandle handle = new ConsumerHandle(consumer);
        children.add(handle);
        return handle;
    }

    @Override
    public void close() throws JMSException {
        closeHandle();
    }

    /** Closes the consumers and browsers made through this handle; idempotent. */
    void closeHandle() {
        closed = true;
        for (AutoCloseable child : children) {
            try {
                child.close();
            } catch (Exception ignored) {
                // a consumer that cannot close cleanly is closed with its connection at the latest
            }
        }
        children.clear();
    }

    @Override
    public MessageListener getMessageListener() throws JMSException {
        session();
        throw ConnectionHandle.notInContainer("Session.getMessageListener");
    }

    @Override
    public void setMessageListener(MessageListener listener) throws JMSException {
        session();
        throw ConnectionHandle.notInContainer("Session.setMessageListener");
    }

    @Override
    public void run() {
        throw new java.lang.IllegalStateException("Session.run is not allowed in a Jakarta EE web or EJB container");
    }

    @Override
    public QueueBrowser createBrowser(Queue queue) throws JMSException {
        QueueBrowser browser = session().createBrowser(queue);
        children.add(browser::close);
        return browser;
    }

    @Override
    public QueueBrowser createBrowser(Queue queue, String messageSelector) throws JMSException {
        QueueBrowser browser = session().createBrowser(queue, messageSelector);
        children.add(browser::close);
        return browser;
    }

    @Override
    public String toString() {
        return "SessionHandle[" + connection + (closed ? ", closed" : "") + "]";
    }

    // ---- the rest as the physical session

    @Override
    public BytesMessage createBytesMessage() throws JMSException {
        return session().createBytesMessage();
    }

    @Override
    public MapMessage createMapMessage() throws JMSException {
        return session().createMapMessage();
    }

    @Override
    public Message createMessage() throws JMSException {
        return session().createMessage();
    }

    @Override
    public ObjectMessage createObjectMessage() throws JMSException {
        return session().createObjectMessage();
    }

    @Override
    public ObjectMessage createObjectMessage(Serializable object) throws JMSException {
        return session().createObjectMessage(object);
    }

    @Override
    public StreamMessage createStreamMessage() throws JMSException {
        return session().createStreamMessage();
    }

    @Override
    public TextMessage createTextMessage() throws JMSException {
        return session().createTextMessage();
    }

    @Override
    public TextMessage createTextMessage(String text) throws JMSException {
        return session().createTextMessage(text);
    }

    @Override
    public boolean getTransacted() throws JMSException {
        return session().getTransacted();
    }

    @Override
    public int getAcknowledgeMode() throws JMSException {
        return session().getAcknowledgeMode();
    }

    @Override
    public void commit() throws JMSException {
        session().commit();
    }

    @Override
    public void rollback() throws JMSException {
        session().rollback();
    }

    @Override
    public void recover() throws JMSException {
        session().recover();
    }

    @Override
    public MessageProducer createProducer(Destination destination) throws JMSException {
        return new ProducerHandle(session().createProducer(destination));
    }

    @Override
    public MessageConsumer createConsumer(Destination destination) throws JMSException {
        return track(session().createConsumer(destination));
    }

    @Override
    public MessageConsumer createConsumer(Destination destination, String messageSelector) throws JMSException {
        return track(session().createConsumer(destination, messageSelector));
    }

    @Override
    public MessageConsumer createConsumer(Destination destination, String messageSelector, boolean noLocal) throws JMSException {
        return track(session().createConsumer(destination, messageSelector, noLocal));
    }

    @Override
    public MessageConsumer createSharedConsumer(Topic topic, String subscriptionName) throws JMSException {
        return track(session().createSharedConsumer(topic, subscriptionName));
    }

    @Override
    public MessageConsumer createSharedConsumer(Topic topic, String subscriptionName, String messageSelector) throws JMSException {
        return track(session().createSharedConsumer(topic, subscriptionName, messageSelector));
    }

    @Override
    public Queue createQueue(String destinationName) throws JMSException {
        return session().createQueue(destinationName);
    }

    @Override
    public Topic createTopic(String destinationName) throws JMSException {
        return session().createTopic(destinationName);
    }

    @Override
    public TopicSubscriber createDurableSubscriber(Topic topic, String subscriptionName) throws JMSException {
        return track(session().createDurableSubscriber(topic, subscriptionName));
    }

    @Override
    public TopicSubscriber createDurableSubscriber(Topic topic, String subscriptionName, String messageSelector, boolean noLocal) throws JMSException {
        return track(session().createDurableSubscriber(topic, subscriptionName, messageSelector, noLocal));
    }

    @Override
    public MessageConsumer createDurableConsumer(Topic topic, String subscriptionName) throws JMSException {
        return track(session().createDurableConsumer(topic, subscriptionName));
    }

    @Override
    public MessageConsumer createDurableConsumer(Topic topic, String subscriptionName, String messageSelector, boolean noLocal) throws JMSException {
        return track(session().createDurableConsumer(topic, subscriptionName, messageSelector, noLocal));
    }

    @Override
    public MessageConsumer createSharedDurableConsumer(Topic topic, String subscriptionName) throws JMSException {
        return track(session().createSharedDurableConsumer(topic, subscriptionName));
    }

    @Override
    public MessageConsumer createSharedDurableConsumer(Topic topic, String subscriptionName, String messageSelector) throws JMSException {
        return track(session().createSharedDurableConsumer(topic, subscriptionName, messageSelector));
    }

    @Override
    public TemporaryQueue createTemporaryQueue() throws JMSException {
        return session().createTemporaryQueue();
    }

    @Override
    public TemporaryTopic createTemporaryTopic() throws JMSException {
        return session().createTemporaryTopic();
    }

    @Override
    public void unsubscribe(String subscriptionName) throws JMSException {
        session().unsubscribe(subscriptionName);
    }

    @Override
    public QueueReceiver createReceiver(Queue queue) throws JMSException {
        return track(session().createReceiver(queue));
    }

    @Override
    public QueueReceiver createReceiver(Queue queue, String messageSelector) throws JMSException {
        return track(session().createReceiver(queue, messageSelector));
    }

    @Override
    public QueueSender createSender(Queue queue) throws JMSException {
        return new ProducerHandle(session().createSender(queue));
    }

    @Override
    public TopicSubscriber createSubscriber(Topic topic) throws JMSException {
        return track(session().createSubscriber(topic));
    }

    @Override
    public TopicSubscriber createSubscriber(Topic topic, String messageSelector, boolean noLocal) throws JMSException {
        return track(session().createSubscriber(topic, messageSelector, noLocal));
    }

    @Override
    public TopicPublisher createPublisher(Topic topic) throws JMSException {
        return new ProducerHandle(session().createPublisher(topic));
    }

}
