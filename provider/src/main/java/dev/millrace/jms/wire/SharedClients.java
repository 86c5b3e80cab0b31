package dev.millrace.jms.wire;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.producer.KafkaProducer;

import dev.millrace.jms.ConnectionSettings;
import dev.millrace.jms.JmsExceptions;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;

/**
 * The kafka-clients objects that connections with the same client settings share, so that a connection costs no
 * thread of its own: one admin client (destinations, groups, liveness), and one producer per delivery mode for
 * non-transacted sends (kafka-clients producers are thread-safe; each record carries its connection's id where JMS needs
 * it, for noLocal). Connections lease an entry when they open and release it when they close; the last release closes
 * the clients. Entries are keyed by every setting that shapes these clients (brokers, acks, linger, batch size, request
 * timeout, failover window, user, and the destination settings), so connections of differently configured
 * factories never share.
 * The entry also holds what connections learn about destinations ({@link Destinations}: which exist;
 * {@link DestinationSetup}: whose policy was written; {@link QueueGroups}: which queue groups were configured), so
 * that a new connection does not ask the brokers again what an earlier one found out: a destination is set up once
 * per entry, not once per connection.
 *
 * <p>What each part costs (threads): the admin client 1 and each producer 1 (created on a connection's first send of
 * that delivery mode) per entry; {@link #scheduler()} 1 per JVM; the share-group client's event loops
 * ({@code ClientEventLoops}) at most 2 per JVM. A session with a MessageListener or asynchronous sends has a delivery
 * thread; a topic subscriber has a fetch thread and a kafka-clients consumer; a transacted session that sends has a
 * transactional producer.
 *
 * <p>Liveness: {@link #checkAlive} asks the cluster to describe itself at most once per
 * {@code connectionCheckIntervalMs} for all connections of the entry, and answers the others from that result; each
 * connection decides from these answers when an outage has outlasted its failover window.
 *
 * <p>Thread-safe.
 */
public final class SharedClients {

    private record Key(String brokers, String persistentAcks, String nonPersistentAcks, int lingerMs,
                       int batchSizeBytes, int requestTimeoutMs, int failoverTimeoutMs, String user,
                       String securityKey, String destinationKey) {
        static Key of(ConnectionSettings s) {
            // the security key holds the credentials: a connection with another password never shares clients
            return new Key(s.brokers(), s.persistentAcks(), s.nonPersistentAcks(), s.lingerMs(), s.batchSizeBytes(),
                    s.requestTimeoutMs(), s.failoverTimeoutMs(), s.user(), s.security().key(), s.destinationKey());
        }
    }

    private static final Map<Key, SharedClients> POOL = new HashMap<>();

    private static final class SchedulerHolder {
        static final ScheduledExecutorService SCHEDULER = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "millrace-connection-monitor");
            t.setDaemon(true);
            return t;
        });
    }

    private final Key key;
    private final ConnectionSettings settings;
    private final Admin admin;
    private final Destinations destinations;
    private final DestinationSetup destinationSetup;
    private final QueueGroups queueGroups;
    private int references;
    private final String clientId = "millrace-shared-" + Integer.toHexString(System.identityHashCode(this));
    private volatile KafkaProducer<byte[], byte[]> persistentProducer;
    private volatile KafkaProducer<byte[], byte[]> nonPersistentProducer;
    private final Object checkLock = new Object();
    private long lastCheckNanos;
    private JMSException lastCheckFailure;
    private boolean checked;

    private SharedClients(Key key, ConnectionSettings settings) {
        this.key = key;
        this.settings = settings;
        this.admin = KafkaClients.admin(settings, clientId);
        this.destinations = new Destinations(admin, settings);
        this.destinationSetup = new DestinationSetup(admin, settings, destinations);
        this.queueGroups = new QueueGroups(admin, settings);
    }

    public Destinations destinations() {
        return destinations;
    }

    public DestinationSetup destinationSetup() {
        return destinationSetup;
    }

    public QueueGroups queueGroups() {
        return queueGroups;
    }

    /** Leases the entry for {@code settings}, creating it on first use. Release it once with {@link #release}. */
    public static SharedClients acquire(ConnectionSettings settings) {
        Key key = Key.of(settings);
        synchronized (POOL) {
            SharedClients shared = POOL.computeIfAbsent(key, k -> new SharedClients(k, settings));
            shared.references++;
            return shared;
        }
    }

    /** The one thread (per JVM) that runs every connection's periodic checks and delayed tasks; never block it long. */
    public static ScheduledExecutorService scheduler() {
        return SchedulerHolder.SCHEDULER;
    }

    /** Gives the lease back; the last one closes the admin client and the producers (which flushes them). */
    public void release() {
        synchronized (POOL) {
            if (--references > 0) {
                return;
            }
            POOL.remove(key);
        }
        KafkaProducer<byte[], byte[]> p;
        KafkaProducer<byte[], byte[]> np;
        synchronized (this) {
            p = persistentProducer;
            np = nonPersistentProducer;
        }
        if (p != null) {
            p.close(Duration.ofSeconds(5));
        }
        if (np != null) {
            np.close(Duration.ofSeconds(5));
        }
        admin.close(Duration.ofSeconds(5));
    }

    public Admin admin() {
        return admin;
    }

    /**
     * The producer for non-transacted sends of {@code deliveryMode}, created on first use. Called on every send: once
     * created, it is returned without locking.
     */
    public KafkaProducer<byte[], byte[]> producer(int deliveryMode) {
        boolean persistent = deliveryMode == DeliveryMode.PERSISTENT;
        KafkaProducer<byte[], byte[]> p = persistent ? persistentProducer : nonPersistentProducer;
        return p != null ? p : createProducer(persistent);
    }

    private synchronized KafkaProducer<byte[], byte[]> createProducer(boolean persistent) {
        if (persistent) {
            if (persistentProducer == null) {
                persistentProducer = KafkaClients.producer(settings, clientId + "-p", settings.persistentAcks());
            }
            return persistentProducer;
        }
        if (nonPersistentProducer == null) {
            nonPersistentProducer = KafkaClients.producer(settings, clientId + "-np", settings.nonPersistentAcks());
        }
        return nonPersistentProducer;
    }

    /** Waits until every record sent so far through the shared producers is acknowledged or failed. */
    public void flushProducers() {
        KafkaProducer<byte[], byte[]> p;
        KafkaProducer<byte[], byte[]> np;
        synchronized (this) {
            p = persistentProducer;
            np = nonPersistentProducer;
        }
        for (KafkaProducer<byte[], byte[]> producer : java.util.Arrays.asList(p, np)) {
            if (producer != null) {
                try {
                    producer.flush();
                } catch (RuntimeException e) {
                    // a failed send was reported to its sender
                }
            }
        }
    }

    /**
     * Whether the cluster answers: describes it when the last answer is older than {@code maxAgeMs} (one connection
     * at a time asks; the others wait for and share its answer), else repeats the last answer.
     *
     * @throws JMSException naming the brokers when the cluster did not answer
     */
    public void checkAlive(long maxAgeMs) throws JMSException {
        synchronized (checkLock) {
            checkAliveLocked(maxAgeMs, false);
        }
    }

    /**
     * As {@link #checkAlive}, for a connection being opened: a remembered failure is not repeated but checked again
     * (it may be from just before the cluster came back).
     */
    public void checkAliveForOpen(long maxAgeMs) throws JMSException {
        synchronized (checkLock) {
            checkAliveLocked(maxAgeMs, true);
        }
    }

    /**
     * How long one liveness check waits: the request timeout, but with failover at most a quarter of the window
     * (at least 1 s), so that several checks fall within it and one slow answer does not decide.
     */
    static int checkTimeoutMs(ConnectionSettings s) {
        if (s.failoverTimeoutMs() == 0) {
            return s.requestTimeoutMs();
        }
        return Math.min(s.requestTimeoutMs(), Math.max(1000, s.failoverTimeoutMs() / 4));
    }

    /** Under {@link #checkLock}, never under {@code this}: a send must not wait for a liveness check. */
    private void checkAliveLocked(long maxAgeMs, boolean recheckFailure) throws JMSException {
        long now = System.nanoTime();
        if (!checked || now - lastCheckNanos >= TimeUnit.MILLISECONDS.toNanos(maxAgeMs)
                || recheckFailure && lastCheckFailure != null) {
            int timeoutMs = checkTimeoutMs(settings);
            try {
                admin.describeCluster(new DescribeClusterOptions().timeoutMs(timeoutMs))
                        .clusterId().get(timeoutMs, TimeUnit.MILLISECONDS);
                lastCheckFailure = null;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                lastCheckFailure = JmsExceptions.fromClient("cannot reach the brokers at " + settings.brokers(), e);
            } catch (Exception e) {
                lastCheckFailure = JmsExceptions.fromClient("cannot reach the brokers at " + settings.brokers(), e);
            }
            lastCheckNanos = System.nanoTime();
            checked = true;
        }
        if (lastCheckFailure != null) {
            throw lastCheckFailure;
        }
    }
}
