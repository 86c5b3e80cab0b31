package dev.millrace.ra.outbound;

import java.io.Serializable;
import java.util.Map;

import javax.naming.Reference;

import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSException;
import jakarta.jms.JMSRuntimeException;
import jakarta.jms.JMSSecurityException;
import jakarta.jms.QueueConnection;
import jakarta.jms.QueueConnectionFactory;
import jakarta.jms.TopicConnection;
import jakarta.jms.TopicConnectionFactory;
import jakarta.resource.Referenceable;
import jakarta.resource.ResourceException;
import jakarta.resource.spi.ConnectionManager;
import jakarta.resource.spi.SecurityException;

/**
 * The connection factory an application gets ({@code @Resource ConnectionFactory}, a JNDI lookup): every
 * {@code createConnection}/{@code createContext} asks the container's {@link ConnectionManager} for a connection,
 * which takes a pooled {@link MillraceManagedConnection} (or makes one) and enlists it in the caller's transaction.
 * It owns nothing but the reference to its {@link MillraceManagedConnectionFactory} and the manager.
 *
 * <p>Thread-safe.
 */
public class MillraceConnectionFactoryHandle implements ConnectionFactory, QueueConnectionFactory,
        TopicConnectionFactory, Serializable, Referenceable {

    private static final long serialVersionUID = 1L;

    private final MillraceManagedConnectionFactory factory;
    private final ConnectionManager manager;
    private Reference reference;

    MillraceConnectionFactoryHandle(MillraceManagedConnectionFactory factory, ConnectionManager manager) {
        this.factory = factory;
        this.manager = manager;
    }

    @Override
    public Connection createConnection() throws JMSException {
        return allocate(null);
    }

    @Override
    public Connection createConnection(String userName, String password) throws JMSException {
        return allocate(new Credentials(userName, password));
    }

    private ConnectionHandle allocate(Credentials credentials) throws JMSException {
        try {
            return (ConnectionHandle) manager.allocateConnection(factory, credentials);
        } catch (SecurityException e) {
            throw jms(new JMSSecurityException("connection refused: " + e.getMessage()), e);
        } catch (ResourceException e) {
            throw jms(new JMSException("no connection from " + factory + ": " + e.getMessage()), e);
        }
    }

    private static JMSException jms(JMSException jmse, Exception cause) {
        jmse.setLinkedException(cause);
        jmse.initCause(cause);
        return jmse;
    }

    @Override
    public QueueConnection createQueueConnection() throws JMSException {
        return allocate(null);
    }

    @Override
    public QueueConnection createQueueConnection(String userName, String password) throws JMSException {
        return allocate(new Credentials(userName, password));
    }

    @Override
    public TopicConnection createTopicConnection() throws JMSException {
        return allocate(null);
    }

    @Override
    public TopicConnection createTopicConnection(String userName, String password) throws JMSException {
        return allocate(new Credentials(userName, password));
    }

    /** A context over a pooled connection; in a transaction the session mode is ignored (JMS 3.1, 12.3). */
    @Override
    public JMSContext createContext() {
        return context(null, JMSContext.AUTO_ACKNOWLEDGE);
    }

    @Override
    public JMSContext createContext(String userName, String password) {
        return context(new Credentials(userName, password), JMSContext.AUTO_ACKNOWLEDGE);
    }

    @Override
    public JMSContext createContext(String userName, String password, int sessionMode) {
        return context(new Credentials(userName, password), sessionMode);
    }

    @Override
    public JMSContext createContext(int sessionMode) {
        return context(null, sessionMode);
    }

    private JMSContext context(Credentials credentials, int sessionMode) {
        checkSessionMode(sessionMode);
        ConnectionHandle connection;
        try {
            connection = allocate(credentials);
        } catch (JMSException e) {
            JMSRuntimeException r = new JMSRuntimeException(e.getMessage(), e.getErrorCode(), e);
            throw r;
        }
        return connection.createContextHandle();
    }

    private static void checkSessionMode(int mode) {
        if (mode != JMSContext.AUTO_ACKNOWLEDGE && mode != JMSContext.CLIENT_ACKNOWLEDGE
                && mode != JMSContext.DUPS_OK_ACKNOWLEDGE && mode != JMSContext.SESSION_TRANSACTED) {
            throw new JMSRuntimeException("unknown session mode " + mode);
        }
    }

    /**
     * The options of this factory's connections, by the provider's option names (a copy, as
     * {@code MillraceConnectionFactory.getProperties}): what a message-driven bean whose
     * {@code connectionFactoryLookup} names this factory starts its own connections from.
     */
    public Map<String, String> connectionOptions() {
        return factory.options();
    }

    @Override
    public void setReference(Reference reference) {
        this.reference = reference;
    }

    @Override
    public Reference getReference() {
        return reference;
    }

    @Override
    public String toString() {
        return "MillraceConnectionFactoryHandle[" + factory + "]";
    }
}
