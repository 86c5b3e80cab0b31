package dev.millrace.broker.server;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.Uuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.controller.Controller;
import dev.millrace.broker.controller.Controller.BrokerHeartbeat;
import dev.millrace.broker.controller.Controller.BrokerHeartbeatReply;
import dev.millrace.broker.controller.Controller.BrokerRegistration;

/**
 * Embedded mode's broker membership: the broker registers with the controller in its own process
 * (a new incarnation per start), heartbeats once caught up so that it is unfenced before anything
 * places replicas on it, then heartbeats every {@link #HEARTBEAT_INTERVAL} so that its session never
 * expires. The port is 0 when the listener is not bound yet (it is registered before the internal
 * topics are created, which happens before the network starts).
 *
 * <p>Stopgap until the broker side of the cluster (forwarding to a remote active controller) is wired.
 * Thread-safe: heartbeats run on the given scheduler; {@link #close} stops them.
 */
final class EmbeddedBrokerMembership implements AutoCloseable {

    static final Duration HEARTBEAT_INTERVAL = Duration.ofSeconds(2);

    private static final Logger log = LoggerFactory.getLogger(EmbeddedBrokerMembership.class);

    private final ScheduledFuture<?> heartbeats;

    private EmbeddedBrokerMembership(ScheduledFuture<?> heartbeats) {
        this.heartbeats = heartbeats;
    }

    /** Registers and unfences broker {@code brokerId}, then keeps heartbeating; blocks until unfenced. */
    static EmbeddedBrokerMembership start(Controller controller, int brokerId, String clusterId, String host,
                                          int port, ScheduledExecutorService scheduler) throws Exception {
        long epoch = controller.registerBroker(new BrokerRegistration(brokerId, clusterId, Uuid.randomUuid(), host,
                port, null)).get(30, TimeUnit.SECONDS);
        BrokerHeartbeatReply reply = controller.brokerHeartbeat(heartbeat(controller, brokerId, epoch))
                .get(30, TimeUnit.SECONDS);
        if (reply.fenced()) {
            throw new IllegalStateException("Broker " + brokerId + " is still fenced after a caught-up heartbeat: "
                    + reply);
        }
        long intervalMs = HEARTBEAT_INTERVAL.toMillis();
        ScheduledFuture<?> heartbeats = scheduler.scheduleWithFixedDelay(() ->
                controller.brokerHeartbeat(heartbeat(controller, brokerId, epoch)).whenComplete((r, error) -> {
                    if (error != null) {
                        log.warn("Broker {} heartbeat failed: {}", brokerId, error.toString());
                    }
                }), intervalMs, intervalMs, TimeUnit.MILLISECONDS);
        return new EmbeddedBrokerMembership(heartbeats);
    }

    private static BrokerHeartbeat heartbeat(Controller controller, int brokerId, long epoch) {
        return new BrokerHeartbeat(brokerId, epoch, controller.image().appliedIndex(), false, false);
    }

    @Override
    public void close() {
        heartbeats.cancel(false);
    }
}
