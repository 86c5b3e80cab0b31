package dev.millrace.broker.cluster;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.DuplicateBrokerRegistrationException;
import org.apache.kafka.common.errors.InconsistentClusterIdException;
import org.apache.kafka.common.errors.StaleBrokerEpochException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.controller.Controller.BrokerHeartbeat;
import dev.millrace.broker.controller.Controller.BrokerHeartbeatReply;
import dev.millrace.broker.controller.Controller.BrokerRegistration;
import dev.millrace.broker.controller.ListenerEndpoint;

/**
 * This broker's membership of the cluster, as the active controller sees it: registration, heartbeats, fencing and
 * controlled shutdown.
 *
 * <pre>
 *   start ──► register (new incarnation id per process start) ──► FENCED ──heartbeats, metadata caught up──► UNFENCED
 *                                                                   ▲                                        │
 *                                                                   └── no heartbeat for the session timeout ─┘
 *   controlledShutdown ──► heartbeats with WantShutDown until the controller answers ShouldShutDown
 *                          (its leaderships have moved to other in-sync replicas)
 * </pre>
 *
 * A registration refused because the node id is still registered by a live incarnation (the previous process of
 * this node, killed less than a session timeout ago, or another process configured with the same {@code node.id})
 * is retried until {@code registrationTimeoutMs}, after which the start fails with a message naming
 * {@code node.id}. A registration whose connection the controller's inter-broker listener refused (a wrong password,
 * an unknown SCRAM user, a certificate it does not trust, or one of its own this node does not trust) is logged at
 * WARN, naming the settings that hold this node's credentials, and retried the same way (a SCRAM user created after
 * this node started is then accepted); the start fails with that message once the time is up. A registration from a
 * data directory of another cluster is refused at once. A heartbeat answered
 * with STALE_BROKER_EPOCH (the controller no longer knows this registration) registers again.
 *
 * <p>Threading: thread-safe; registration and heartbeats run on one scheduler thread of their own.
 */
public final class BrokerLifecycle implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(BrokerLifecycle.class);

    /**
     * What the broker registers with, and how often it heartbeats.
     *
     * @param host      with {@code port}, the inter-broker listener's advertised address
     * @param listeners every listener's advertised endpoint by name (for clients of other brokers' Metadata)
     * @param credentialSettings the settings holding what this node presents to the controller's inter-broker
     *                           listener (named when the controller refuses it), empty for PLAINTEXT
     */
    public record Settings(int nodeId, String clusterId, String host, int port, String rack,
                           long heartbeatIntervalMs, long registrationTimeoutMs,
                           Map<String, ListenerEndpoint> listeners, String credentialSettings) {
        public Settings {
            listeners = Map.copyOf(listeners);
            credentialSettings = credentialSettings == null ? "" : credentialSettings;
        }

        /** A broker with one PLAINTEXT listener. */
        public Settings(int nodeId, String clusterId, String host, int port, String rack, long heartbeatIntervalMs,
                        long registrationTimeoutMs) {
            this(nodeId, clusterId, host, port, rack, heartbeatIntervalMs, registrationTimeoutMs, Map.of(), "");
        }
    }

    private final Settings settings;
    private final ControllerClient client;
    private final LongSupplier appliedMetadataIndex;
    private final Uuid incarnationId = Uuid.randomUuid();
    private final ScheduledExecutorService scheduler;
    private final CompletableFuture<Void> unfenced = new CompletableFuture<>();
    private final CompletableFuture<Void> shutdownAllowed = new CompletableFuture<>();
    private final AtomicBoolean heartbeatInFlight = new AtomicBoolean();
    private volatile long brokerEpoch = -1;
    private volatile boolean fenced = true;
    private volatile boolean wantShutdown;
    private volatile boolean closed;
    private long registrationDeadlineNanos;
    /** Whether a refusal of this node's credentials was logged at WARN (once: retries log at INFO). */
    private boolean refusalLogged;

    public BrokerLifecycle(Settings settings, ControllerClient client, LongSupplier appliedMetadataIndex) {
        this.settings = settings;
        this.client = client;
        this.appliedMetadataIndex = appliedMetadataIndex;
        this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, "millrace-broker-lifecycle-" + settings.nodeId());
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Registers and starts heartbeating; the returned future completes once the controller has unfenced this
     * broker, or fails when registration is refused for good.
     */
    public CompletableFuture<Void> start() {
        registrationDeadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(settings.registrationTimeoutMs());
        scheduler.execute(this::register);
        scheduler.scheduleWithFixedDelay(this::heartbeat, settings.heartbeatIntervalMs(),
                settings.heartbeatIntervalMs(), TimeUnit.MILLISECONDS);
        return unfenced;
    }

    /** The epoch of the current registration, or -1 before the first one. */
    public long brokerEpoch() {
        return brokerEpoch;
    }

    public boolean isFenced() {
        return fenced;
    }

    /**
     * Asks the controller to move this broker's leaderships away; completes when it says the broker may stop. The
     * caller bounds the wait.
     */
    public CompletableFuture<Void> controlledShutdown() {
        wantShutdown = true;
        if (brokerEpoch < 0) {
            shutdownAllowed.complete(null);
        } else {
            scheduler.execute(this::heartbeat);
        }
        return shutdownAllowed;
    }

    private void register() {
        if (closed) {
            return;
        }
        BrokerRegistration registration = new BrokerRegistration(settings.nodeId(), settings.clusterId(),
                incarnationId, settings.host(), settings.port(), settings.rack(), settings.listeners());
        client.registerBroker(registration).whenComplete((epoch, error) -> {
            if (error == null) {
                brokerEpoch = epoch;
                refusalLogged = false; // a later refusal (credentials changed, registering again) is logged again
                LOG.info("Broker {} registered with epoch {} (incarnation {})", settings.nodeId(), epoch,
                        incarnationId);
                scheduler.execute(this::heartbeat);
                return;
            }
            Throwable cause = unwrap(error);
            if (cause instanceof InconsistentClusterIdException) {
                unfenced.completeExceptionally(new IllegalStateException("The active controller refused node.id "
                        + settings.nodeId() + ": its data directory belongs to cluster " + settings.clusterId()
                        + ", which is not the cluster of controller.quorum.voters", cause));
                return;
            }
            boolean refused = isAuthenticationFailure(cause);
            if (System.nanoTime() - registrationDeadlineNanos > 0) {
                String why;
                if (cause instanceof DuplicateBrokerRegistrationException) {
                    why = "node.id " + settings.nodeId() + " is registered by another live broker; every node of a "
                            + "cluster needs its own node.id";
                } else if (refused) {
                    why = refusedCredentials() + ": " + cause;
                } else {
                    why = "node.id " + settings.nodeId() + " could not register with the active controller: " + cause;
                }
                unfenced.completeExceptionally(new IllegalStateException(why + " (gave up after "
                        + settings.registrationTimeoutMs() + " ms)", cause));
                return;
            }
            if (refused && !refusalLogged) {
                // a SCRAM user created after this node started is accepted on a later try: retry, but say why now
                refusalLogged = true;
                LOG.warn("{}; registration is retried for up to {} ms: {}", refusedCredentials(),
                        settings.registrationTimeoutMs(), cause.toString());
            } else {
                LOG.info("Broker {} registration will be retried: {}", settings.nodeId(), cause.toString());
            }
            schedule(this::register);
        });
    }

    private void heartbeat() {
        long epoch = brokerEpoch;
        if (closed || epoch < 0 || !heartbeatInFlight.compareAndSet(false, true)) {
            return;
        }
        boolean shutdown = wantShutdown;
        client.heartbeat(new BrokerHeartbeat(settings.nodeId(), epoch, appliedMetadataIndex.getAsLong(), false,
                shutdown)).whenComplete((reply, error) -> {
                    heartbeatInFlight.set(false);
                    if (error != null) {
                        onHeartbeatError(epoch, unwrap(error));
                    } else {
                        onHeartbeat(reply, shutdown);
                    }
                });
    }

    private void onHeartbeat(BrokerHeartbeatReply reply, boolean shutdownAsked) {
        boolean wasFenced = fenced;
        fenced = reply.fenced();
        if (wasFenced != fenced) {
            LOG.info("Broker {} is {} by the controller", settings.nodeId(), fenced ? "fenced" : "unfenced");
        }
        if (!fenced) {
            unfenced.complete(null);
        }
        if (shutdownAsked && reply.shouldShutdown()) {
            shutdownAllowed.complete(null);
        } else if (shutdownAsked) {
            schedule(this::heartbeat);
        }
    }

    private void onHeartbeatError(long epoch, Throwable cause) {
        if (cause instanceof StaleBrokerEpochException && epoch == brokerEpoch) {
            LOG.warn("Broker {}: the controller no longer knows epoch {}; registering again", settings.nodeId(),
                    epoch);
            brokerEpoch = -1;
            fenced = true;
            registrationDeadlineNanos = System.nanoTime()
                    + TimeUnit.MILLISECONDS.toNanos(settings.registrationTimeoutMs());
            schedule(this::register);
        } else {
            LOG.debug("Broker {} heartbeat failed: {}", settings.nodeId(), cause.toString());
        }
    }

    private void schedule(Runnable task) {
        if (closed) {
            return;
        }
        try {
            scheduler.schedule(task, Math.min(500, settings.heartbeatIntervalMs()), TimeUnit.MILLISECONDS);
        } catch (RuntimeException e) {
            // shutting down
        }
    }

    private String refusedCredentials() {
        return "node.id " + settings.nodeId() + " could not register: the active controller's inter-broker listener "
                + "refused this node's credentials"
                + (settings.credentialSettings().isEmpty() ? "" : ", set in " + settings.credentialSettings());
    }

    /** Whether a TLS handshake or SASL authentication refused this node, anywhere in {@code error}'s causes. */
    private static boolean isAuthenticationFailure(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof AuthenticationException) {
                return true;
            }
        }
        return false;
    }

    private static Throwable unwrap(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }

    @Override
    public void close() {
        closed = true;
        scheduler.shutdownNow();
        unfenced.completeExceptionally(new IllegalStateException("Broker " + settings.nodeId() + " is closed"));
        shutdownAllowed.complete(null);
    }
}
