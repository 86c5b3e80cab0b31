package dev.millrace.jms;

import javax.naming.NamingException;
import javax.naming.Reference;

import jakarta.jms.JMSException;
import jakarta.jms.XAConnection;
import jakarta.jms.XAConnectionFactory;
import jakarta.jms.XAJMSContext;
import jakarta.jms.XAQueueConnection;
import jakarta.jms.XAQueueConnectionFactory;
import jakarta.jms.XATopicConnection;
import jakarta.jms.XATopicConnectionFactory;

/**
 * The connection factory for XA: the same constructors and options as {@link MillraceConnectionFactory} (which it
 * extends, so that its plain connections work as that factory's), and XA connections and contexts whose sessions
 * take part in XA transactions through an XAResource ({@link MillraceXAResource}, the design in {@link XaBranch}).
 *
 * <p>Thread-safe once configured, like {@link MillraceConnectionFactory}.
 */
public class MillraceXAConnectionFactory extends MillraceConnectionFactory implements XAConnectionFactory,
        XAQueueConnectionFactory, XATopicConnectionFactory {

    private static final long serialVersionUID = 1L;

    /** A factory for the broker at {@value MillraceConnectionFactory#DEFAULT_BROKERS}. */
    public MillraceXAConnectionFactory() {
    }

    /**
     * @param brokers bootstrap brokers, {@code host:port[,host:port...]}
     * @throws IllegalArgumentException if the list is empty or an entry is not {@code host:port}
     */
    public MillraceXAConnectionFactory(String brokers) {
        super(brokers);
    }

    @Override
    public XAConnection createXAConnection() throws JMSException {
        return createXAConnection(getUser(), getPassword());
    }

    @Override
    public XAConnection createXAConnection(String userName, String password) throws JMSException {
        return MillraceConnection.open(settings(userName, password), MillraceXAConnection::new);
    }

    @Override
    public XAQueueConnection createXAQueueConnection() throws JMSException {
        return (XAQueueConnection) createXAConnection();
    }

    @Override
    public XAQueueConnection createXAQueueConnection(String userName, String password) throws JMSException {
        return (XAQueueConnection) createXAConnection(userName, password);
    }

    @Override
    public XATopicConnection createXATopicConnection() throws JMSException {
        return (XATopicConnection) createXAConnection();
    }

    @Override
    public XATopicConnection createXATopicConnection(String userName, String password) throws JMSException {
        return (XATopicConnection) createXAConnection(userName, password);
    }

    @Override
    public XAJMSContext createXAContext() {
        return createXAContext(getUser(), getPassword());
    }

    @Override
    public XAJMSContext createXAContext(String userName, String password) {
        MillraceXAConnection connection;
        try {
            connection = (MillraceXAConnection) createXAConnection(userName, password);
        } catch (JMSException e) {
            throw JmsExceptions.toRuntime(e);
        }
        try {
            return new MillraceXAJMSContext(connection, (MillraceXASession) connection.createXASession());
        } catch (JMSException | RuntimeException e) {
            try {
                connection.close();
            } catch (JMSException ignored) {
                // the first failure is the one to report
            }
            throw e instanceof JMSException j ? JmsExceptions.toRuntime(j) : (RuntimeException) e;
        }
    }

    @Override
    public Reference getReference() throws NamingException {
        return reference(MillraceXAConnectionFactory.class.getName());
    }

    @Override
    public String toString() {
        return "MillraceXA" + super.toString().substring("Millrace".length());
    }
}
