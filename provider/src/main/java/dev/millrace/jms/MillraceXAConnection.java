package dev.millrace.jms;

import dev.millrace.jms.wire.ExtensionClient;
import dev.millrace.jms.wire.XaRequests;
import jakarta.jms.JMSException;
import jakarta.jms.XAConnection;
import jakarta.jms.XAJMSContext;
import jakarta.jms.XAQueueConnection;
import jakarta.jms.XAQueueSession;
import jakarta.jms.XASession;
import jakarta.jms.XATopicConnection;
import jakarta.jms.XATopicSession;

/**
 * A connection whose {@link #createXASession XA sessions} take part in XA transactions; its plain sessions work as
 * those of a {@link MillraceConnection}. Besides a connection's resources it has the transactional ids (and
 * producers) of its branches ({@link XaProducers}) and a connection for the XA extension requests
 * ({@link XaRequests}), both closed with it. An XAResource of a closed connection still completes prepared branches
 * and recovers (on a short-lived connection, {@link MillraceXAResource}): containers may close a pooled connection
 * between prepare and commit.
 *
 * <p>Thread-safe.
 */
public class MillraceXAConnection extends MillraceConnection implements XAConnection, XAQueueConnection,
        XATopicConnection {

    private final XaProducers producers;
    private ExtensionClient xaClient;
    private XaRequests requests;
    private XaResourceManager manager;

    MillraceXAConnection(ConnectionSettings settings) {
        super(settings);
        this.producers = new XaProducers(settings, connectionId());
    }

    @Override
    public XASession createXASession() throws JMSException {
        return addSession(new MillraceXASession(this, SessionDomain.ANY));
    }

    @Override
    public XAQueueSession createXAQueueSession() throws JMSException {
        return addSession(new MillraceXASession(this, SessionDomain.QUEUE));
    }

    @Override
    public XATopicSession createXATopicSession() throws JMSException {
        return addSession(new MillraceXASession(this, SessionDomain.TOPIC));
    }

    /**
     * A JMSContext over {@code session}, an XA session of this connection, rather than over a connection of its own:
     * for the resource adapter, whose managed connection hands one physical session out through both APIs (a
     * Connection's session and a JMSContext). Closing the context closes this connection.
     *
     * @throws JMSException if this connection is closed or {@code session} is not one of its XA sessions
     */
    public XAJMSContext createXAContext(XASession session) throws JMSException {
        checkClosed();
        if (!(session instanceof MillraceXASession s) || s.connection() != this) {
            throw new jakarta.jms.IllegalStateException("createXAContext needs an XA session of this connection, not "
                    + session);
        }
        return new MillraceXAJMSContext(this, s);
    }

    XaProducers producers() {
        return producers;
    }

    /** The XA extension requests; opened on first use. */
    synchronized XaRequests xaRequests() throws JMSException {
        checkClosed();
        if (requests == null) {
            xaClient = new ExtensionClient("millrace-" + connectionId() + "-xa", settings().requestTimeoutMs(),
                    settings().security());
            requests = new XaRequests(admin(), xaClient, settings());
        }
        return requests;
    }

    /** This cluster as an XA resource manager (its id is asked for once). */
    synchronized XaResourceManager resourceManager() throws JMSException {
        if (manager == null) {
            manager = XaResourceManager.forCluster(xaRequests().clusterId());
        }
        return manager;
    }

    @Override
    public void close() throws JMSException {
        try {
            super.close();
        } finally {
            producers.close();
            synchronized (this) {
                if (xaClient != null) {
                    xaClient.close();
                }
            }
        }
    }
}
