package dev.millrace.ra.outbound;

import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import javax.security.auth.Subject;
import javax.transaction.xa.XAResource;

import dev.millrace.jms.MillraceXAConnection;
import dev.millrace.jms.MillraceXASession;
import jakarta.jms.JMSException;
import jakarta.jms.XAJMSContext;
import jakarta.resource.ResourceException;
import jakarta.resource.spi.CommException;
import jakarta.resource.spi.ConnectionEvent;
import jakarta.resource.spi.ConnectionEventListener;
import jakarta.resource.spi.ConnectionRequestInfo;
import jakarta.resource.spi.IllegalStateException;
import jakarta.resource.spi.LocalTransaction;
import jakarta.resource.spi.ManagedConnection;
import jakarta.resource.spi.ManagedConnectionMetaData;

/**
 * One physical Millrace connection as the container pools it: an XA connection with one XA session, whose
 * XAResource the container enlists in transactions. The application never sees it, only its handles.
 *
 * <p>Which object owns which provider object:
 * <pre>
 *   MillraceManagedConnection --owns--> MillraceXAConnection (physical, closed by destroy)
 *        |                                  '--owns--> MillraceXASession (the one session; its XAResource is
 *        |                                               getXAResource(), also behind ManagedLocalTransaction)
 *        |                                  '--owns--> XAJMSContext over that session (made on first createContext)
 *        '--hands out--> ConnectionHandle* (per getConnection; the container may move one to another managed
 *                            |               connection with associateConnection)
 *                            '--> SessionHandle (at most one open) --> ConsumerHandle* (closed with the session)
 *                            '--> ContextHandle (for createContext)  --> JMSConsumerHandle*
 * </pre>
 * Handles borrow the physical session; closing a handle closes only the consumers and browsers it made and tells
 * the container (CONNECTION_CLOSED), which returns this managed connection to its pool once the transaction ends.
 * {@link #cleanup} invalidates every handle; {@link #destroy} closes the physical connection. A physical
 * connection that reports a failure (its ExceptionListener: the cluster stayed unreachable past the failover
 * window) is reported to the container as CONNECTION_ERROR_OCCURRED, which destroys it.
 *
 * <p>Thread-safe; the container uses it from one thread at a time, handles may be closed from others.
 */
public final class MillraceManagedConnection implements ManagedConnection {

    private final MillraceManagedConnectionFactory factory;
    private final Credentials credentials;
    private final MillraceXAConnection connection;
    private final MillraceXASession session;
    private final ManagedLocalTransaction localTransaction;
    private final List<ConnectionHandle> handles = new CopyOnWriteArrayList<>();
    private final List<ConnectionEventListener> listeners = new CopyOnWriteArrayList<>();
    private XAJMSContext context;
    private volatile boolean destroyed;
    private PrintWriter logWriter;

    private MillraceManagedConnection(MillraceManagedConnectionFactory factory, Credentials credentials,
            MillraceXAConnection connection, MillraceXASession session) {
        this.factory = factory;
        this.credentials = credentials;
        this.connection = connection;
        this.session = session;
        this.localTransaction = new ManagedLocalTransaction(session.getXAResource());
    }

    /** Opens the physical connection and its session for {@code credentials}. */
    static MillraceManagedConnection open(MillraceManagedConnectionFactory factory, Credentials credentials)
            throws ResourceException {
        MillraceXAConnection connection;
        try {
            connection = (MillraceXAConnection) factory.settings().createXAConnection(credentials.user(),
                    credentials.password());
        } catch (JMSException e) {
            throw new CommException("cannot connect to " + factory.settings().getBrokers() + ": " + e.getMessage(),
                    e);
        }
        try {
            MillraceManagedConnection mc = new MillraceManagedConnection(factory, credentials, connection,
                    (MillraceXASession) connection.createXASession());
            connection.setExceptionListener(mc::onConnectionFailure);
            return mc;
        } catch (JMSException | RuntimeException e) {
            closeQuietly(connection);
            throw new CommException("cannot open a session on " + factory.settings().getBrokers() + ": "
                    + e.getMessage(), e);
        }
    }

    MillraceManagedConnectionFactory factory() {
        return factory;
    }

    Credentials credentials() {
        return credentials;
    }

    boolean isUsable() {
        return !destroyed;
    }

    /** The physical connection, for a handle of this managed connection. */
    MillraceXAConnection physicalConnection() throws JMSException {
        checkUsable();
        return connection;
    }

    /** The one physical session, shared by every handle of this managed connection. */
    MillraceXASession physicalSession() throws JMSException {
        checkUsable();
        return session;
    }

    /** The physical context over {@link #physicalSession()}, made on first use. */
    synchronized XAJMSContext physicalContext() throws JMSException {
        checkUsable();
        if (context == null) {
            context = connection.createXAContext(session);
        }
        return context;
    }

    private void checkUsable() throws JMSException {
        if (destroyed) {
            throw new jakarta.jms.IllegalStateException("the managed connection is destroyed");
        }
    }

    @Override
    public Object getConnection(Subject subject, ConnectionRequestInfo info) throws ResourceException {
        if (destroyed) {
            throw new IllegalStateException("getConnection on a destroyed managed connection");
        }
        ConnectionHandle handle = new ConnectionHandle(this);
        handles.add(handle);
        return handle;
    }

    @Override
    public void associateConnection(Object handle) throws ResourceException {
        if (!(handle instanceof ConnectionHandle h)) {
            throw new IllegalStateException("not a Millrace connection handle: " + handle);
        }
        MillraceManagedConnection previous = h.reassociate(this);
        if (previous != null) {
            previous.handles.remove(h);
        }
        handles.add(h);
    }

    /** Called by a handle's close: the container may return this managed connection to its pool. */
    void handleClosed(ConnectionHandle handle) {
        handles.remove(handle);
        ConnectionEvent event = new ConnectionEvent(this, ConnectionEvent.CONNECTION_CLOSED);
        event.setConnectionHandle(handle);
        for (ConnectionEventListener l : listeners) {
            l.connectionClosed(event);
        }
    }

    private void onConnectionFailure(JMSException failure) {
        ConnectionEvent event = new ConnectionEvent(this, ConnectionEvent.CONNECTION_ERROR_OCCURRED, failure);
        for (ConnectionEventListener l : listeners) {
            l.connectionErrorOccurred(event);
        }
    }

    /** Invalidates every handle (closing what they made); the physical connection stays for the next user. */
    @Override
    public void cleanup() throws ResourceException {
        for (ConnectionHandle h : handles) {
            h.invalidate();
        }
        handles.clear();
    }

    @Override
    public void destroy() throws ResourceException {
        if (destroyed) {
            return;
        }
        cleanup();
        destroyed = true;
        closeQuietly(connection);
    }

    private static void closeQuietly(MillraceXAConnection connection) {
        try {
            connection.close();
        } catch (JMSException ignored) {
            // closing a connection the container gave up: nothing left to do with the failure
        }
    }

    @Override
    public void addConnectionEventListener(ConnectionEventListener listener) {
        listeners.add(listener);
    }

    @Override
    public void removeConnectionEventListener(ConnectionEventListener listener) {
        listeners.remove(listener);
    }

    @Override
    public XAResource getXAResource() throws ResourceException {
        return session.getXAResource();
    }

    @Override
    public LocalTransaction getLocalTransaction() throws ResourceException {
        return localTransaction;
    }

    @Override
    public ManagedConnectionMetaData getMetaData() throws ResourceException {
        return new MetaData(credentials.user());
    }

    @Override
    public void setLogWriter(PrintWriter out) {
        this.logWriter = out;
    }

    @Override
    public PrintWriter getLogWriter() {
        return logWriter;
    }

    @Override
    public String toString() {
        return "MillraceManagedConnection[" + connection + "]";
    }

    /** What the container shows about the connection. */
    private record MetaData(String user) implements ManagedConnectionMetaData {

        @Override
        public String getEISProductName() {
            return "Millrace";
        }

        @Override
        public String getEISProductVersion() {
            String v = MillraceManagedConnection.class.getPackage().getImplementationVersion();
            return v != null ? v : "unknown";
        }

        @Override
        public int getMaxConnections() {
            return 0;
        }

        @Override
        public String getUserName() {
            return user;
        }
    }
}
