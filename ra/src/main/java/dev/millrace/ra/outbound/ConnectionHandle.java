package dev.millrace.ra.outbound;

import jakarta.jms.ConnectionConsumer;
import jakarta.jms.ConnectionMetaData;
import jakarta.jms.Destination;
import jakarta.jms.ExceptionListener;
import jakarta.jms.IllegalStateException;
import jakarta.jms.JMSException;
import jakarta.jms.Queue;
import jakarta.jms.QueueConnection;
import jakarta.jms.QueueSession;
import jakarta.jms.ServerSessionPool;
import jakarta.jms.Session;
import jakarta.jms.Topic;
import jakarta.jms.TopicConnection;
import jakarta.jms.TopicSession;

/**
 * The Connection an application gets from {@link MillraceConnectionFactoryHandle}: a view of a
 * {@link MillraceManagedConnection} (which the container may change with {@code associateConnection}), with the
 * rules of JMS 3.1 section 12.2 for the Jakarta EE web and EJB containers:
 * <ul>
 *   <li>one session per connection: a second {@code createSession} while the first is open throws
 *       IllegalStateException;</li>
 *   <li>the session's arguments are ignored: it is the managed connection's XA session, which works in the
 *       container's transaction when there is one and as a non-transacted AUTO_ACKNOWLEDGE session otherwise;</li>
 *   <li>{@code setClientID}, {@code setExceptionListener}, {@code stop} and the {@code create*ConnectionConsumer}
 *       methods throw IllegalStateException.</li>
 * </ul>
 * {@code close} closes its session (the consumers and browsers made through it) and hands the managed connection
 * back to the container.
 *
 * <p>Used by one thread at a time, like a connection in a component; close may come from another.
 */
public final class ConnectionHandle implements QueueConnection, TopicConnection {

    private volatile MillraceManagedConnection managed;
    private SessionHandle session;
    private ContextHandle context;
    private volatile boolean closed;

    ConnectionHandle(MillraceManagedConnection managed) {
        this.managed = managed;
    }

    /** Moves this handle to {@code to}; returns the managed connection it had. */
    MillraceManagedConnection reassociate(MillraceManagedConnection to) {
        MillraceManagedConnection previous = managed;
        managed = to;
        return previous;
    }

    /** The managed connection this handle works on now. */
    MillraceManagedConnection managed() throws JMSException {
        if (closed) {
            throw new IllegalStateException("the connection is closed");
        }
        return managed;
    }

    /** A JMSContext over this handle: closing it closes this handle. */
    synchronized ContextHandle createContextHandle() {
        context = new ContextHandle(this);
        return context;
    }

    @Override
    public synchronized Session createSession(boolean transacted, int acknowledgeMode) throws JMSException {
        managed();
        if (session != null && !session.isClosed()) {
            throw new IllegalStateException("a connection in a Jakarta EE container has one session at a time;"
                    + " close the first before creating another (JMS 3.1, 12.2)");
        }
        session = new SessionHandle(this);
        return session;
    }

    @Override
    public Session createSession(int sessionMode) throws JMSException {
        return createSession(sessionMode == Session.SESSION_TRANSACTED, sessionMode);
    }

    @Override
    public Session createSession() throws JMSException {
        return createSession(false, Session.AUTO_ACKNOWLEDGE);
    }

    @Override
    public QueueSession createQueueSession(boolean transacted, int acknowledgeMode) throws JMSException {
        return (QueueSession) createSession(transacted, acknowledgeMode);
    }

    @Override
    public TopicSession createTopicSession(boolean transacted, int acknowledgeMode) throws JMSException {
        return (TopicSession) createSession(transacted, acknowledgeMode);
    }

    @Override
    public String getClientID() throws JMSException {
        return managed().physicalConnection().getClientID();
    }

    @Override
    public void setClientID(String clientID) throws JMSException {
        managed();
        throw notInContainer("setClientID (give the connection factory a clientId)");
    }

    @Override
    public ConnectionMetaData getMetaData() throws JMSException {
        return managed().physicalConnection().getMetaData();
    }

    @Override
    public ExceptionListener getExceptionListener() throws JMSException {
        managed();
        throw notInContainer("getExceptionListener");
    }

    @Override
    public void setExceptionListener(ExceptionListener listener) throws JMSException {
        managed();
        throw notInContainer("setExceptionListener");
    }

    @Override
    public void start() throws JMSException {
        managed().physicalConnection().start();
    }

    @Override
    public void stop() throws JMSException {
        managed();
        throw notInContainer("stop");
    }

    static IllegalStateException notInContainer(String method) {
        return new IllegalStateException(method + " is not allowed in a Jakarta EE web or EJB container"
                + " (JMS 3.1, 12.2)");
    }

    /** Closes what this handle made and gives the managed connection back to the container. Idempotent. */
    @Override
    public void close() throws JMSException {
        MillraceManagedConnection mc;
        synchronized (this) {
            if (closed) {
                return;
            }
            closeChildren();
            closed = true;
            mc = managed;
        }
        mc.handleClosed(this);
    }

    /** The container's cleanup: closes what this handle made, without a CONNECTION_CLOSED event. */
    synchronized void invalidate() {
        closeChildren();
        closed = true;
    }

    private void closeChildren() {
        if (session != null) {
            session.closeHandle();
        }
        if (context != null) {
            context.closeConsumers();
        }
    }

    @Override
    public ConnectionConsumer createConnectionConsumer(Destination destination, String messageSelector,
            ServerSessionPool sessionPool, int maxMessages) throws JMSException {
        throw notInContainer("createConnectionConsumer");
    }

    @Override
    public ConnectionConsumer createConnectionConsumer(Queue queue, String messageSelector,
            ServerSessionPool sessionPool, int maxMessages) throws JMSException {
        throw notInContainer("createConnectionConsumer");
    }

    @Override
    public ConnectionConsumer createConnectionConsumer(Topic topic, String messageSelector,
            ServerSessionPool sessionPool, int maxMessages) throws JMSException {
        throw notInContainer("createConnectionConsumer");
    }

    @Override
    public ConnectionConsumer createSharedConnectionConsumer(Topic topic, String subscriptionName,
            String messageSelector, ServerSessionPool sessionPool, int maxMessages) throws JMSException {
        throw notInContainer("createSharedConnectionConsumer");
    }

    @Override
    public ConnectionConsumer createDurableConnectionConsumer(Topic topic, String subscriptionName,
            String messageSelector, ServerSessionPool sessionPool, int maxMessages) throws JMSException {
        throw notInContainer("createDurableConnectionConsumer");
    }

    @Override
    public ConnectionConsumer createSharedDurableConnectionConsumer(Topic topic, String subscriptionName,
            String messageSelector, ServerSessionPool sessionPool, int maxMessages) throws JMSException {
        throw notInContainer("createSharedDurableConnectionConsumer");
    }

    @Override
    public String toString() {
        return "ConnectionHandle[" + managed + (closed ? ", closed" : "") + "]";
    }
}
