package dev.millrace.jms;

import java.io.Serializable;
import java.util.concurrent.atomic.AtomicInteger;

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
import jakarta.jms.MessageConsumer;
import jakarta.jms.ObjectMessage;
import jakarta.jms.Queue;
import jakarta.jms.QueueBrowser;
import jakarta.jms.StreamMessage;
import jakarta.jms.TemporaryQueue;
import jakarta.jms.TemporaryTopic;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;

/**
 * The simplified API over one {@link MillraceConnection} and one {@link MillraceSession}. Contexts made with
 * {@link #createContext(int)} share the connection, which closes with the last of them. With autoStart (the
 * default) the connection starts when the first consumer is created. JMSExceptions become their
 * {@link JMSRuntimeException} counterparts ({@link JmsExceptions#toRuntime}).
 *
 * <p>Used by one thread at a time, like a session; {@link #close()} may come from another.
 */
public class MillraceJMSContext implements JMSContext {

    private final MillraceConnection connection;
    private final AtomicInteger connectionUsers;
    private final int sessionMode;
    private volatile MillraceSession session;
    private volatile MillraceMessageProducer producer;
    private volatile boolean autoStart = true;
    private volatile boolean closed;

    private MillraceJMSContext(MillraceConnection connection, AtomicInteger connectionUsers, int sessionMode) {
        this.connection = connection;
        this.connectionUsers = connectionUsers;
        this.sessionMode = sessionMode;
    }

    /** A context over a session made already (an XA context's XA session); it owns {@code connection}. */
    MillraceJMSContext(MillraceConnection connection, MillraceSession session) throws JMSException {
        this(connection, new AtomicInteger(1), session.getAcknowledgeMode());
        this.session = session;
    }

    static JMSContext create(MillraceConnection connection, int sessionMode, boolean owner) {
        if (!isSessionMode(sessionMode)) {
            JmsExceptions.runtime(() -> {
                connection.close();
                return null;
            });
            throw unknownMode(sessionMode);
        }
        return new MillraceJMSContext(connection, new AtomicInteger(1), sessionMode);
    }

    /** Whether {@code mode} is one of the four session modes of {@link JMSContext}. */
    private static boolean isSessionMode(int mode) {
        return mode == SESSION_TRANSACTED || mode == AUTO_ACKNOWLEDGE || mode == CLIENT_ACKNOWLEDGE
                || mode == DUPS_OK_ACKNOWLEDGE;
    }

    private static JMSRuntimeException unknownMode(int mode) {
        return new JMSRuntimeException("unknown session mode " + mode + "; expected SESSION_TRANSACTED ("
                + SESSION_TRANSACTED + "), AUTO_ACKNOWLEDGE (" + AUTO_ACKNOWLEDGE + "), CLIENT_ACKNOWLEDGE ("
                + CLIENT_ACKNOWLEDGE + ") or DUPS_OK_ACKNOWLEDGE (" + DUPS_OK_ACKNOWLEDGE + ")");
    }

    private void checkClosed() {
        if (closed) {
            throw new IllegalStateRuntimeException("the context is closed");
        }
    }

    /** The session, created on first need (so setClientID can come first). */
    private MillraceSession session() {
        checkClosed();
        MillraceSession s = session;
        if (s == null) {
            synchronized (this) {
                if (session == null) {
                    session = (MillraceSession) JmsExceptions.runtime(() -> connection.createSession(sessionMode));
                }
                s = session;
            }
        }
        return s;
    }

    private void maybeStart() {
        if (autoStart) {
            JmsExceptions.runtime(() -> {
                connection.start();
                return null;
            });
        }
    }

    /**
     * A context on the same connection with a session of its own, in any of the four modes (SESSION_TRANSACTED too:
     * its session has its own broker transaction, independent of this context's; JMSContext.createContext javadoc).
     */
    @Override
    public JMSContext createContext(int sessionMode) {
        checkClosed();
        if (!isSessionMode(sessionMode)) {
            throw unknownMode(sessionMode);
        }
        connectionUsers.incrementAndGet();
        return new MillraceJMSContext(connection, connectionUsers, sessionMode);
    }

    @Override
    public JMSProducer createProducer() {
        MillraceSession s = session();
        MillraceMessageProducer p = producer;
        if (p == null) {
            p = (MillraceMessageProducer) JmsExceptions.runtime(() -> s.createProducer(null));
            producer = p;
        }
        return new MillraceJMSProducer(this, p);
    }

    @Override
    public String getClientID() {
        checkClosed();
        return JmsExceptions.runtime(connection::getClientID);
    }

    @Override
    public void setClientID(String clientID) {
        checkClosed();
        JmsExceptions.runtime(() -> {
            connection.setClientID(clientID);
            return null;
        });
    }

    @Override
    public ConnectionMetaData getMetaData() {
        checkClosed();
        return JmsExceptions.runtime(connection::getMetaData);
    }

    @Override
    public ExceptionListener getExceptionListener() {
        checkClosed();
        return JmsExceptions.runtime(connection::getExceptionListener);
    }

    @Override
    public void setExceptionListener(ExceptionListener listener) {
        checkClosed();
        JmsExceptions.runtime(() -> {
            connection.setExceptionListener(listener);
            return null;
        });
    }

    @Override
    public void start() {
        checkClosed();
        JmsExceptions.runtime(() -> {
            connection.start();
            return null;
        });
    }

    /**
     * Stops the connection ({@link MillraceConnection#stop}): from a MessageListener of this context (or of a context
     * sharing its connection) IllegalStateRuntimeException; from a CompletionListener it works.
     */
    @Override
    public void stop() {
        checkClosed();
        JmsExceptions.runtime(() -> {
            connection.stop();
            return null;
        });
    }

    @Override
    public void setAutoStart(boolean autoStart) {
        checkClosed();
        this.autoStart = autoStart;
    }

    @Override
    public boolean getAutoStart() {
        checkClosed();
        return autoStart;
    }

    /**
     * Closes the session and, with the last context of the connection, the connection. From this context's own
     * MessageListener or CompletionListener it throws IllegalStateRuntimeException (JMSContext.close javadoc).
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        if (session != null && (session.isDeliveryThread())) {
            throw new IllegalStateRuntimeException("close() from a listener of its own context");
        }
        closed = true;
        JmsExceptions.runtime(() -> {
            if (session != null) {
                session.close();
            }
            if (connectionUsers.decrementAndGet() == 0) {
                connection.close();
            }
            return null;
        });
    }

    @Override
    public BytesMessage createBytesMessage() {
        return JmsExceptions.runtime(session()::createBytesMessage);
    }

    @Override
    public MapMessage createMapMessage() {
        return JmsExceptions.runtime(session()::createMapMessage);
    }

    @Override
    public Message createMessage() {
        return JmsExceptions.runtime(session()::createMessage);
    }

    @Override
    public ObjectMessage createObjectMessage() {
        return JmsExceptions.runtime(session()::createObjectMessage);
    }

    @Override
    public ObjectMessage createObjectMessage(Serializable object) {
        return JmsExceptions.runtime(() -> session().createObjectMessage(object));
    }

    @Override
    public StreamMessage createStreamMessage() {
        return JmsExceptions.runtime(session()::createStreamMessage);
    }

    @Override
    public TextMessage createTextMessage() {
        return JmsExceptions.runtime(session()::createTextMessage);
    }

    @Override
    public TextMessage createTextMessage(String text) {
        return JmsExceptions.runtime(() -> session().createTextMessage(text));
    }

    @Override
    public boolean getTransacted() {
        return JmsExceptions.runtime(session()::getTransacted);
    }

    @Override
    public int getSessionMode() {
        checkClosed();
        return sessionMode;
    }

    @Override
    public void commit() {
        JmsExceptions.runtime(() -> {
            session().commit();
            return null;
        });
    }

    @Override
    public void rollback() {
        JmsExceptions.runtime(() -> {
            session().rollback();
            return null;
        });
    }

    @Override
    public void recover() {
        JmsExceptions.runtime(() -> {
            session().recover();
            return null;
        });
    }

    private JMSConsumer consumer(JmsExceptions.JmsAction<MessageConsumer> create) {
        MessageConsumer c = JmsExceptions.runtime(create);
        maybeStart();
        return new MillraceJMSConsumer((MillraceMessageConsumer) c);
    }

    @Override
    public JMSConsumer createConsumer(Destination destination) {
        return consumer(() -> session().createConsumer(destination));
    }

    @Override
    public JMSConsumer createConsumer(Destination destination, String messageSelector) {
        return consumer(() -> session().createConsumer(destination, messageSelector));
    }

    @Override
    public JMSConsumer createConsumer(Destination destination, String messageSelector, boolean noLocal) {
        return consumer(() -> session().createConsumer(destination, messageSelector, noLocal));
    }

    @Override
    public Queue createQueue(String queueName) {
        return JmsExceptions.runtime(() -> session().createQueue(queueName));
    }

    @Override
    public Topic createTopic(String topicName) {
        return JmsExceptions.runtime(() -> session().createTopic(topicName));
    }

    @Override
    public JMSConsumer createDurableConsumer(Topic topic, String name) {
        return consumer(() -> session().createDurableConsumer(topic, name));
    }

    @Override
    public JMSConsumer createDurableConsumer(Topic topic, String name, String messageSelector, boolean noLocal) {
        return consumer(() -> session().createDurableConsumer(topic, name, messageSelector, noLocal));
    }

    @Override
    public JMSConsumer createSharedDurableConsumer(Topic topic, String name) {
        return consumer(() -> session().createSharedDurableConsumer(topic, name));
    }

    @Override
    public JMSConsumer createSharedDurableConsumer(Topic topic, String name, String messageSelector) {
        return consumer(() -> session().createSharedDurableConsumer(topic, name, messageSelector));
    }

    @Override
    public JMSConsumer createSharedConsumer(Topic topic, String sharedSubscriptionName) {
        return consumer(() -> session().createSharedConsumer(topic, sharedSubscriptionName));
    }

    @Override
    public JMSConsumer createSharedConsumer(Topic topic, String sharedSubscriptionName, String messageSelector) {
        return consumer(() -> session().createSharedConsumer(topic, sharedSubscriptionName, messageSelector));
    }

    @Override
    public QueueBrowser createBrowser(Queue queue) {
        return JmsExceptions.runtime(() -> session().createBrowser(queue));
    }

    @Override
    public QueueBrowser createBrowser(Queue queue, String messageSelector) {
        return JmsExceptions.runtime(() -> session().createBrowser(queue, messageSelector));
    }

    @Override
    public TemporaryQueue createTemporaryQueue() {
        return JmsExceptions.runtime(session()::createTemporaryQueue);
    }

    @Override
    public TemporaryTopic createTemporaryTopic() {
        return JmsExceptions.runtime(session()::createTemporaryTopic);
    }

    @Override
    public void unsubscribe(String name) {
        JmsExceptions.runtime(() -> {
            session().unsubscribe(name);
            return null;
        });
    }

    @Override
    public void acknowledge() {
        JmsExceptions.runtime(() -> {
            session().acknowledge();
            return null;
        });
    }
}
