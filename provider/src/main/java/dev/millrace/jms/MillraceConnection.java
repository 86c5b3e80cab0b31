package dev.millrace.jms;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.producer.KafkaProducer;

import dev.millrace.jms.wire.BrokerExtensions;
import dev.millrace.jms.wire.ClientIdClaim;
import dev.millrace.jms.wire.Delivery;
import dev.millrace.jms.wire.DestinationSetup;
import dev.millrace.jms.wire.Destinations;
import dev.millrace.jms.wire.ExpiredRecords;
import dev.millrace.jms.wire.ExtensionClient;
import dev.millrace.jms.wire.KafkaClients;
import dev.millrace.jms.wire.QueueGroups;
import dev.millrace.jms.wire.SharedClients;
import dev.millrace.jms.wire.SharedSubscriptions;
import dev.millrace.jms.wire.TemporaryDestinationReaper;
import dev.millrace.jms.wire.failover.Outage;
import jakarta.jms.Connection;
import jakarta.jms.ConnectionConsumer;
import jakarta.jms.ConnectionMetaData;
import jakarta.jms.DeliveryMode;
import jakarta.jms.Destination;
import jakarta.jms.ExceptionListener;
import jakarta.jms.IllegalStateException;
import jakarta.jms.InvalidClientIDException;
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
 * A connection to a Millrace cluster: an admin client (destinations, liveness) and one producer per delivery mode, both
 * shared with the other connections of the same settings ({@link SharedClients}) and
 * by its sessions (kafka-clients producers are thread-safe), and its sessions.
 *
 * <ul>
 *   <li><b>Client id</b>: set by the factory or once by {@link #setClientID} before anything else is done with the
 *       connection; unique across the cluster, held as membership of a share group ({@link ClientIdClaim}).
 *   <li><b>start/stop</b>: no message is delivered while stopped; {@link #stop} waits for listeners in progress.
 *   <li><b>Liveness and failover</b>: a monitor thread asks the cluster to describe itself every
 *       {@code connectionCheckIntervalMs}; the ExceptionListener is called once the cluster has stayed unreachable
 *       for longer than {@code failoverTimeoutMs} ({@link Outage}), once per such outage. Meanwhile the connection
 *       stays open and its blocking calls retry (see "Failover" in {@code provider/README.md}).
 *   <li><b>close</b>: idempotent; waits for listeners in progress, closes sessions, deletes temporary destinations.
 * </ul>
 *
 * <p>Thread-safe.
 */
public class MillraceConnection implements Connection, QueueConnection, TopicConnection, TemporaryDestinationOwner {

    private final ConnectionSettings settings;
    private final String connectionId;
    private final byte[] connectionIdBytes;
    private final Admin admin;
    private final Destinations destinations;
    private ExtensionClient extensions;
    private BrokerExtensions brokerExtensions;
    private final SharedSubscriptions sharedSubscriptions;
    private final QueueGroups queueGroups;
    private final DestinationSetup destinationSetup;
    private final SharedClients shared;
    private final ScheduledExecutorService monitor = SharedClients.scheduler();
    private volatile java.util.concurrent.ScheduledFuture<?> monitorTask;
    private final List<MillraceSession> sessions = new CopyOnWriteArrayList<>();
    private final Set<String> temporaryDestinations = ConcurrentHashMap.newKeySet();
    private final AtomicLong sequence = new AtomicLong();
    private final Object lock = new Object();
    private final Outage outage;
    private volatile boolean sent;
    private volatile ExceptionListener exceptionListener;
    private volatile boolean started;
    private volatile boolean closed;
    private volatile boolean used;
    private volatile String clientId;
    private volatile boolean clientIdFromFactory;
    private volatile ClientIdClaim claim;
    private volatile ClientIdClaim temporaryOwnership;
    private final java.util.concurrent.atomic.AtomicBoolean sweepScheduled = new java.util.concurrent.atomic.AtomicBoolean();
    private long checksSinceSweep;

    /** Opens nothing yet: {@link #open} checks the cluster and starts the liveness checks. */
    MillraceConnection(ConnectionSettings settings) {
        this.settings = settings;
        this.outage = new Outage(settings.failoverTimeoutMs(), System::nanoTime);
        UUID uuid = UUID.randomUUID();
        this.connectionId = uuid.toString();
        this.connectionIdBytes = ByteBuffer.allocate(16).putLong(uuid.getMostSignificantBits())
                .putLong(uuid.getLeastSignificantBits()).array();
        this.shared = SharedClients.acquire(settings);
        this.admin = shared.admin();
        this.destinations = shared.destinations();
        this.queueGroups = shared.queueGroups();
        this.sharedSubscriptions = new SharedSubscriptions(admin, settings);
        this.destinationSetup = shared.destinationSetup();
    }

    static MillraceConnection open(ConnectionSettings settings) throws JMSException {
        return open(settings, MillraceConnection::new);
    }

    /** Opens a connection made by {@code create} (a subclass, e.g. an XA connection). */
    static <C extends MillraceConnection> C open(ConnectionSettings settings,
                                                 java.util.function.Function<ConnectionSettings, C> create)
            throws JMSException {
        return open(settings, create, true);
    }

    /**
     * As {@link #open(ConnectionSettings, java.util.function.Function)}; {@code claimClientId} false opens it without
     * the factory's client id (a connection for the provider's own short work, which must not compete for it).
     */
    static <C extends MillraceConnection> C open(ConnectionSettings settings,
                                                 java.util.function.Function<ConnectionSettings, C> create,
                                                 boolean claimClientId) throws JMSException {
        C made;
        try {
            made = create.apply(settings);
        } catch (RuntimeException e) {
            throw JmsExceptions.fromClient("cannot create a connection to " + settings.brokers(), e);
        }
        MillraceConnection c = made;
        try {
            c.shared.checkAliveForOpen(settings.connectionCheckIntervalMs());
            if (claimClientId && settings.clientId() != null) {
                c.claimClientId(settings.clientId());
                c.clientIdFromFactory = true;
            }
        } catch (JMSException | RuntimeException e) {
            c.close();
            throw e;
        }
        c.monitorTask = c.monitor.scheduleWithFixedDelay(c::checkAlive, settings.connectionCheckIntervalMs(),
                settings.connectionCheckIntervalMs(), TimeUnit.MILLISECONDS);
        return made;
    }

    private void checkBroker() throws JMSException {
        shared.checkAlive(settings.connectionCheckIntervalMs());
    }

    /**
     * The liveness check, every {@code connectionCheckIntervalMs} on the monitor thread: the cluster answers, and the
     * client-id and temporary-destination memberships hold. Failures within the failover window are ridden out
     * ({@link Outage}); the ExceptionListener hears of an outage once, when it outlasts the window.
     */
    private void checkAlive() {
        long started = outage.now();
        ClientIdClaim c = claim;
        try {
            if (c != null) {
                c.keepAlive();
            }
            ClientIdClaim ownership = temporaryOwnership;
            if (ownership != null) {
                ownership.keepAlive();
            }
            checkBroker();
            if (++checksSinceSweep * settings.connectionCheckIntervalMs() >= SWEEP_INTERVAL_MS) {
                checksSinceSweep = 0;
                sweepTemporaries();
            }
            outage.onSuccess();
        } catch (JMSException | RuntimeException e) {
            if (outage.onFailure(started) && !closed) {
                ExceptionListener listener = exceptionListener;
                if (listener != null) {
                    JMSException failure = e instanceof JMSException ? (JMSException) e
                            : JmsExceptions.fromClient("connection check", e);
                    JMSException broken = new JMSException("the cluster at " + settings.brokers() + " stayed "
                            + "unreachable for longer than failoverTimeoutMs (" + settings.failoverTimeoutMs()
                            + " ms): " + failure.getMessage(), failure.getErrorCode());
                    broken.setLinkedException(failure);
                    broken.initCause(failure);
                    listener.onException(broken);
                }
            }
        }
    }

    private void claimClientId(String id) throws JMSException {
        if (id == null || id.isBlank()) {
            throw new InvalidClientIDException("client id must not be empty");
        }
        this.claim = ClientIdClaim.claim(settings, admin, destinations, connectionId, id);
        this.clientId = id;
    }

    // ---- for sessions

    /** The liveness checks' view of the cluster (tests wait on it). */
    Outage outage() {
        return outage;
    }

    ConnectionSettings settings() {
        return settings;
    }

    String connectionId() {
        return connectionId;
    }

    byte[] connectionIdBytes() {
        return connectionIdBytes;
    }

    /** The Millrace extension requests (browsing, transactional acknowledgements); opened on first use. */
    synchronized BrokerExtensions extensions() throws IllegalStateException {
        if (closed) {
            throw new IllegalStateException("the connection is closed");
        }
        if (brokerExtensions == null) {
            extensions = new ExtensionClient("millrace-" + connectionId + "-ext", settings.requestTimeoutMs(),
                    settings.security());
            brokerExtensions = new BrokerExtensions(admin, extensions, settings);
        }
        return brokerExtensions;
    }

    QueueGroups queueGroups() {
        return queueGroups;
    }

    Destinations destinations() {
        return destinations;
    }

    Admin admin() {
        return admin;
    }

    SharedSubscriptions sharedSubscriptions() {
        return sharedSubscriptions;
    }

    /** Applies destination policies (redelivery, dead-letter and expiry queues) before a destination's first consumer. */
    DestinationSetup destinationSetup() {
        return destinationSetup;
    }

    /**
     * Copies the expired message {@code d} to {@code expiryQueue} ({@link ExpiredRecords}) with the PERSISTENT
     * producer and waits for the broker's acknowledgement.
     */
    void moveToExpiryQueue(Delivery d, String expiryQueue, long nowMs) throws JMSException {
        try {
            KafkaProducer<byte[], byte[]> p = producer(DeliveryMode.PERSISTENT);
            int partitions = p.partitionsFor(expiryQueue).size();
            p.send(ExpiredRecords.copy(d, expiryQueue, partitions, nowMs)).get(settings.blockingTimeoutMs()
                    + settings.requestTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw JmsExceptions.fromClient("move expired message " + d + " to " + expiryQueue, e);
        } catch (Exception e) {
            throw JmsExceptions.fromClient("move expired message " + d + " to " + expiryQueue, e);
        }
    }

    /**
     * Runs {@code task} on the connection's monitor thread after {@code delayMs}; a task scheduled as the connection
     * closes may not run.
     */
    void schedule(Runnable task, long delayMs) {
        try {
            monitor.schedule(task, delayMs, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closing
        }
    }

    /** A new message id: "ID:" + connection id + sequence. */
    String nextMessageId() {
        return "ID:" + connectionId + "-" + sequence.incrementAndGet();
    }

    /** The producer for this connection's non-transacted sends of {@code deliveryMode} (shared, see class doc). */
    KafkaProducer<byte[], byte[]> producer(int deliveryMode) {
        if (!sent) {
            sent = true; // a volatile write only once, not on every send
        }
        return shared.producer(deliveryMode);
    }

    boolean isStarted() {
        return started;
    }

    /** Waits until the connection is started, up to {@code timeoutMs} (negative = forever); false on timeout. */
    boolean awaitStarted(long deadlineNanos) throws InterruptedException {
        synchronized (lock) {
            while (!started && !closed) {
                if (deadlineNanos == Long.MAX_VALUE) {
                    lock.wait(100);
                } else {
                    long left = deadlineNanos - System.nanoTime();
                    if (left <= 0) {
                        return false;
                    }
                    TimeUnit.NANOSECONDS.timedWait(lock, left);
                }
            }
            return started;
        }
    }

    boolean isOwnTemporary(String name) {
        return temporaryDestinations.contains(name);
    }

    String newTemporaryName(String kind) {
        return "millrace.tmp." + kind + "." + connectionId + "." + sequence.incrementAndGet();
    }

    /** How often a connection looks for temporary destinations of crashed connections (besides on creation). */
    static final long SWEEP_INTERVAL_MS = 60_000;

    /**
     * Before this connection's first temporary destination: joins its owner group, which tells other connections
     * that its temporary destinations are in use ({@link TemporaryDestinationReaper}). Also schedules a sweep.
     */
    void prepareTemporary() throws JMSException {
        if (temporaryOwnership == null) {
            synchronized (temporaryDestinations) {
                if (temporaryOwnership == null) {
                    checkClosed();
                    temporaryOwnership = ClientIdClaim.hold(settings, admin, destinations, connectionId,
                            TemporaryDestinationReaper.ownerGroup(connectionId));
                }
            }
        }
        if (sweepScheduled.compareAndSet(false, true)) {
            try {
                monitor.execute(() -> {
                    sweepScheduled.set(false);
                    sweepTemporaries();
                });
            } catch (java.util.concurrent.RejectedExecutionException e) {
                sweepScheduled.set(false);
            }
        }
    }

    private void sweepTemporaries() {
        if (closed) {
            return;
        }
        try {
            TemporaryDestinationReaper.sweep(admin, settings, connectionId);
        } catch (JMSException | RuntimeException e) {
            // best effort; the next sweep tries again
        }
    }

    void addTemporary(String name) {
        temporaryDestinations.add(name);
    }

    void removeSession(MillraceSession session) {
        sessions.remove(session);
    }

    boolean isClosed() {
        return closed;
    }

    void checkClosed() throws IllegalStateException {
        if (closed) {
            throw new IllegalStateException("the connection is closed");
        }
    }

    boolean hasActiveDurable(String subscription) {
        return sessions.stream().anyMatch(s -> s.hasActiveDurable(subscription));
    }

    /** Whether the calling thread delivers messages for one of this connection's sessions. */
    boolean isDeliveryThread() {
        for (MillraceSession s : sessions) {
            if (s.isDeliveryThread()) {
                return true;
            }
        }
        return false;
    }

    // ---- Connection

    @Override
    public Session createSession(boolean transacted, int acknowledgeMode) throws JMSException {
        return createSession(transacted ? Session.SESSION_TRANSACTED : acknowledgeMode);
    }

    @Override
    public Session createSession(int sessionMode) throws JMSException {
        return createSession(sessionMode, SessionDomain.ANY);
    }

    /** A session of {@code domain}: a QueueSession or TopicSession refuses the other domain's methods. */
    private MillraceSession createSession(int sessionMode, SessionDomain domain) throws JMSException {
        checkClosed();
        used = true;
        if (sessionMode != Session.SESSION_TRANSACTED && sessionMode != Session.AUTO_ACKNOWLEDGE && sessionMode != Session.CLIENT_ACKNOWLEDGE
                && sessionMode != Session.DUPS_OK_ACKNOWLEDGE) {
            throw new JMSException("unknown session mode " + sessionMode);
        }
        MillraceSession session = new MillraceSession(this, sessionMode, domain);
        sessions.add(session);
        return session;
    }

    /** Registers a session a subclass made (an XA session), after the checks {@link #createSession} makes. */
    <S extends MillraceSession> S addSession(S session) throws JMSException {
        checkClosed();
        used = true;
        sessions.add(session);
        return session;
    }

    @Override
    public Session createSession() throws JMSException {
        return createSession(Session.AUTO_ACKNOWLEDGE);
    }

    @Override
    public QueueSession createQueueSession(boolean transacted, int acknowledgeMode) throws JMSException {
        return createSession(transacted ? Session.SESSION_TRANSACTED : acknowledgeMode, SessionDomain.QUEUE);
    }

    @Override
    public TopicSession createTopicSession(boolean transacted, int acknowledgeMode) throws JMSException {
        return createSession(transacted ? Session.SESSION_TRANSACTED : acknowledgeMode, SessionDomain.TOPIC);
    }

    @Override
    public String getClientID() throws JMSException {
        checkClosed();
        return clientId;
    }

    /** Claims the id across the cluster; see {@link ClientIdClaim}. */
    @Override
    public void setClientID(String id) throws JMSException {
        checkClosed();
        synchronized (lock) {
            if (clientIdFromFactory || clientId != null) {
                throw new IllegalStateException("the client id is already set (" + clientId + ")");
            }
            if (used) {
                throw new IllegalStateException("the client id must be set before the connection is used");
            }
            used = true;
            claimClientId(id);
        }
    }

    @Override
    public ConnectionMetaData getMetaData() throws JMSException {
        checkClosed();
        used = true;
        return new MillraceConnectionMetaData();
    }

    @Override
    public ExceptionListener getExceptionListener() throws JMSException {
        checkClosed();
        used = true;
        return exceptionListener;
    }

    @Override
    public void setExceptionListener(ExceptionListener listener) throws JMSException {
        checkClosed();
        used = true;
        this.exceptionListener = listener;
    }

    @Override
    public void start() throws JMSException {
        checkClosed();
        used = true;
        synchronized (lock) {
            started = true;
            lock.notifyAll();
        }
        for (MillraceSession s : sessions) {
            s.onStarted();
        }
    }

    /**
     * Stops delivery and waits for listeners in progress. From a MessageListener of this connection it throws
     * IllegalStateException (the Connection.stop javadoc allows failing or succeeding there); from a
     * CompletionListener it works (JMS 3.1 section 7.3, asynchronous send, forbids only close, commit and rollback
     * there) and does not wait for the listener's own session, whose delivery thread it runs on.
     */
    @Override
    public void stop() throws JMSException {
        checkClosed();
        used = true;
        if (sessions.stream().anyMatch(MillraceSession::isInMessageListener)) {
            throw new IllegalStateException("stop() from a MessageListener of its own connection would deadlock");
        }
        synchronized (lock) {
            started = false;
        }
        for (MillraceSession s : sessions) {
            s.awaitDeliveryIdle();
        }
    }

    @Override
    public void close() throws JMSException {
        if (closed) {
            return;
        }
        if (isDeliveryThread()) {
            throw new IllegalStateException("close() from a MessageListener or CompletionListener of its own "
                    + "connection would deadlock");
        }
        synchronized (lock) {
            if (closed) {
                return;
            }
            started = false;
            closed = true;
            lock.notifyAll();
        }
        JMSException first = null;
        for (MillraceSession s : sessions) {
            try {
                s.close();
            } catch (JMSException e) {
                first = first == null ? e : first;
            }
        }
        for (String temporary : temporaryDestinations) {
            try {
                destinations.delete(temporary);
            } catch (JMSException e) {
                first = first == null ? e : first;
            }
        }
        temporaryDestinations.clear();
        ClientIdClaim c = claim;
        ClientIdClaim ownership = temporaryOwnership;
        java.util.concurrent.ScheduledFuture<?> task = monitorTask;
        if (task != null) {
            task.cancel(false);
        }
        if (c != null) {
            c.close();
        }
        if (ownership != null) {
            ownership.close();
        }
        if (sent) {
            // this connection's sends complete before close returns (the producers are shared, so flush, not close)
            shared.flushProducers();
        }
        synchronized (this) {
            if (extensions != null) {
                extensions.close();
            }
        }
        shared.release();
        if (first != null) {
            throw first;
        }
    }

    @Override
    public void deleteTemporaryDestination(MillraceDestination destination) throws JMSException {
        checkClosed();
        String name = destination.getName();
        if (!temporaryDestinations.contains(name)) {
            throw new IllegalStateException("temporary destination " + name + " does not belong to this connection "
                    + "or was deleted");
        }
        for (MillraceSession s : sessions) {
            if (s.hasConsumerOn(name)) {
                throw new IllegalStateException("temporary destination " + name + " still has consumers");
            }
        }
        temporaryDestinations.remove(name);
        destinations.delete(name);
    }

    // ---- not supported (application server facilities)

    @Override
    public ConnectionConsumer createConnectionConsumer(Destination destination, String messageSelector,
                                                       ServerSessionPool sessionPool, int maxMessages)
            throws JMSException {
        throw new JMSException("connection consumers are not supported; use the resource adapter");
    }

    @Override
    public ConnectionConsumer createConnectionConsumer(Queue queue, String messageSelector,
                                                       ServerSessionPool sessionPool, int maxMessages)
            throws JMSException {
        return createConnectionConsumer((Destination) queue, messageSelector, sessionPool, maxMessages);
    }

    @Override
    public ConnectionConsumer createConnectionConsumer(Topic topic, String messageSelector,
                                                       ServerSessionPool sessionPool, int maxMessages)
            throws JMSException {
        return createConnectionConsumer((Destination) topic, messageSelector, sessionPool, maxMessages);
    }

    @Override
    public ConnectionConsumer createSharedConnectionConsumer(Topic topic, String subscriptionName,
                                                             String messageSelector, ServerSessionPool sessionPool,
                                                             int maxMessages) throws JMSException {
        return createConnectionConsumer((Destination) topic, messageSelector, sessionPool, maxMessages);
    }

    @Override
    public ConnectionConsumer createDurableConnectionConsumer(Topic topic, String subscriptionName,
                                                              String messageSelector, ServerSessionPool sessionPool,
                                                              int maxMessages) throws JMSException {
        return createConnectionConsumer((Destination) topic, messageSelector, sessionPool, maxMessages);
    }

    @Override
    public ConnectionConsumer createSharedDurableConnectionConsumer(Topic topic, String subscriptionName,
                                                                    String messageSelector,
                                                                    ServerSessionPool sessionPool, int maxMessages)
            throws JMSException {
        return createConnectionConsumer((Destination) topic, messageSelector, sessionPool, maxMessages);
    }

    @Override
    public String toString() {
        return "MillraceConnection[" + connectionId + (clientId == null ? "" : ", client id " + clientId) + "]";
    }
}
