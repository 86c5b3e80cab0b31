package dev.millrace.broker.controller;

import java.util.List;

import org.apache.kafka.common.errors.DuplicateBrokerRegistrationException;
import org.apache.kafka.common.errors.InconsistentClusterIdException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.StaleBrokerEpochException;

import dev.millrace.broker.controller.Controller.BrokerHeartbeat;
import dev.millrace.broker.controller.Controller.BrokerHeartbeatReply;
import dev.millrace.broker.controller.Controller.BrokerRegistration;
import dev.millrace.broker.controller.MetadataImage.BrokerImage;
import dev.millrace.broker.controller.MetadataRecord.BrokerRegistrationRecord;
import dev.millrace.broker.controller.MetadataRecord.ClusterIdRecord;

/**
 * Cluster membership: the cluster id, broker registrations, heartbeats and session expiry, and the
 * broker state changes they cause ({@link BrokerState}), with the partition changes that follow from
 * them computed by {@link ReplicationControlManager}.
 *
 * <p>Broker epochs: a registration gets {@code max(highest registered epoch, image's applied index) + 1}.
 * The registration is applied at an index above the image it was computed on, so every later
 * registration's epoch is larger than every earlier one's, on any controller, across failover,
 * without a counter of its own in the image.
 *
 * <pre>
 *   register ──► FENCED ──(heartbeat, caught up)──► UNFENCED
 *                  ▲  ▲                                │  │
 *                  │  └──(session expired / wantFence)─┘  │ wantShutdown
 *                  └──────(session expired)─────── CONTROLLED_SHUTDOWN ◄─┘
 * </pre>
 *
 * <p>Stateless apart from its settings: liveness is in {@link BrokerSessions}, owned by the caller.
 * Thread-safe as far as this class goes; the sessions it is given are not.
 */
final class ClusterControlManager {

    private final ReplicationControlManager replication;

    ClusterControlManager(ReplicationControlManager replication) {
        this.replication = replication;
    }

    /** The cluster id record when the image has none and this voter has one to give. */
    ControllerResult<Void> handleLeaderStart(MetadataImage image, String initialClusterId) {
        if (image.clusterId() != null || initialClusterId == null) {
            return new ControllerResult<>(List.of(), null);
        }
        return new ControllerResult<>(List.of(new ClusterIdRecord(initialClusterId)), null);
    }

    /**
     * @return the broker epoch of the registration
     * @throws InconsistentClusterIdException when the broker belongs to another cluster (or the cluster
     *         has no id yet)
     * @throws DuplicateBrokerRegistrationException when another incarnation of the id is alive (this
     *         controller heard from it within the session timeout, see {@link BrokerSessions})
     */
    ControllerResult<Long> handleRegisterBroker(MetadataImage image, BrokerRegistration registration,
                                                BrokerSessions sessions, long nowMs) {
        int id = registration.brokerId();
        if (image.clusterId() == null) {
            throw new InconsistentClusterIdException("Broker " + id + " cannot register with cluster id "
                    + registration.clusterId() + ": the cluster has no id yet (no voter has an initial cluster id)");
        }
        if (!image.clusterId().equals(registration.clusterId())) {
            throw new InconsistentClusterIdException("Broker " + id + " registered with cluster id "
                    + registration.clusterId() + " but this cluster's id is " + image.clusterId());
        }
        if (id < 0 || registration.incarnationId() == null || registration.host() == null
                || registration.host().isBlank() || registration.port() < 0 || registration.port() > 65535) {
            throw new InvalidRequestException("Broker registration needs a broker id of at least 0, an incarnation "
                    + "id, a host and a port in 0..65535 (0: not bound yet); got " + registration);
        }
        BrokerImage existing = image.brokers().get(id);
        if (existing != null && existing.incarnationId().equals(registration.incarnationId())) {
            sessions.touch(id, nowMs);
            return new ControllerResult<>(List.of(), existing.epoch());
        }
        if (existing != null && sessions.hasLiveSession(id, nowMs)) {
            throw new DuplicateBrokerRegistrationException("Broker " + id + " is already registered by incarnation "
                    + existing.incarnationId() + " (epoch " + existing.epoch() + ") whose session is alive; "
                    + "incarnation " + registration.incarnationId() + " may register once it has expired");
        }
        long epoch = Math.max(image.appliedIndex(), image.brokers().values().stream()
                .mapToLong(BrokerImage::epoch).max().orElse(0)) + 1;
        ClusterDelta delta = new ClusterDelta(image);
        delta.noteRegistration(new BrokerRegistrationRecord(id, registration.incarnationId(), epoch,
                registration.host(), registration.port(), registration.rack(), registration.listeners()), id);
        if (existing != null) {
            replication.moveAwayFrom(delta, id, false);
        }
        sessions.touch(id, nowMs);
        return new ControllerResult<>(delta.records(), epoch, index -> sessions.registered(id, index));
    }

    /** @throws StaleBrokerEpochException when the broker is not registered with that epoch */
    ControllerResult<BrokerHeartbeatReply> handleBrokerHeartbeat(MetadataImage image, BrokerHeartbeat heartbeat,
                                                                 BrokerSessions sessions, long nowMs) {
        int id = heartbeat.brokerId();
        BrokerImage broker = checkEpoch(image, id, heartbeat.brokerEpoch(), "Heartbeat");
        sessions.touch(id, nowMs);
        boolean caughtUp = sessions.isCaughtUp(id, heartbeat.appliedMetadataIndex(), image);
        ClusterDelta delta = new ClusterDelta(image);
        boolean shouldShutdown = false;
        if (heartbeat.wantShutdown()) {
            if (broker.state() != BrokerState.CONTROLLED_SHUTDOWN) {
                delta.setState(broker, BrokerState.CONTROLLED_SHUTDOWN);
            }
            replication.moveAwayFrom(delta, id, true);
            shouldShutdown = !replication.leadsMovablePartition(delta, id);
        } else if (heartbeat.wantFence()) {
            if (broker.state() != BrokerState.FENCED) {
                delta.setState(broker, BrokerState.FENCED);
                replication.moveAwayFrom(delta, id, false);
            }
        } else if (broker.state() == BrokerState.FENCED && caughtUp) {
            delta.setState(broker, BrokerState.UNFENCED);
            replication.electReturningBroker(delta, id);
        }
        boolean fenced = delta.state(id) != BrokerState.UNFENCED;
        return new ControllerResult<>(delta.records(), new BrokerHeartbeatReply(caughtUp, fenced, shouldShutdown));
    }

    /** Fences every broker whose session expired; @return their ids. */
    ControllerResult<List<Integer>> handleSessionExpiry(MetadataImage image, BrokerSessions sessions, long nowMs) {
        List<BrokerImage> expired = sessions.expired(image, nowMs);
        ClusterDelta delta = new ClusterDelta(image);
        expired.forEach(broker -> delta.setState(broker, BrokerState.FENCED));
        expired.forEach(broker -> replication.moveAwayFrom(delta, broker.id(), false));
        return new ControllerResult<>(delta.records(), expired.stream().map(BrokerImage::id).toList());
    }

    /**
     * @return the broker's registration
     * @throws StaleBrokerEpochException when the broker is not registered or with another epoch
     */
    static BrokerImage checkEpoch(MetadataImage image, int brokerId, long brokerEpoch, String operation) {
        BrokerImage broker = image.brokers().get(brokerId);
        if (broker == null) {
            throw new StaleBrokerEpochException(operation + " from broker " + brokerId + " with epoch " + brokerEpoch
                    + ": the broker is not registered");
        }
        if (broker.epoch() != brokerEpoch) {
            throw new StaleBrokerEpochException(operation + " from broker " + brokerId + " with epoch " + brokerEpoch
                    + ": its current registration has epoch " + broker.epoch());
        }
        return broker;
    }
}
