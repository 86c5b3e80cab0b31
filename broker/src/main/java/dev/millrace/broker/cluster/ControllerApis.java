package dev.millrace.broker.cluster;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import org.apache.kafka.common.message.AllocateProducerIdsResponseData;
import org.apache.kafka.common.message.AlterPartitionResponseData;
import org.apache.kafka.common.message.BrokerHeartbeatResponseData;
import org.apache.kafka.common.message.BrokerRegistrationResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.AllocateProducerIdsRequest;
import org.apache.kafka.common.requests.AllocateProducerIdsResponse;
import org.apache.kafka.common.requests.AlterPartitionRequest;
import org.apache.kafka.common.requests.AlterPartitionResponse;
import org.apache.kafka.common.requests.BrokerHeartbeatRequest;
import org.apache.kafka.common.requests.BrokerHeartbeatResponse;
import org.apache.kafka.common.requests.BrokerRegistrationRequest;
import org.apache.kafka.common.requests.BrokerRegistrationResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.controller.Controller;

/**
 * Answers the controller APIs that other nodes send to this one while its voter is the active controller
 * (BrokerRegistration, BrokerHeartbeat, AlterPartition, AllocateProducerIds; see {@link ControllerMessages}) by
 * calling the local {@link Controller}. On a node that is not the active controller the controller answers
 * NOT_CONTROLLER and the sender looks again. These APIs are served from the moment the listener is bound, before
 * the rest of the broker has started, because the other nodes' registrations may be what this node's start waits
 * for.
 *
 * <p>Liveness hint: the connection a broker's registration or heartbeats came on is remembered; when it closes the
 * controller is told ({@link Controller#brokerUnreachable}), so that a killed broker is fenced within the
 * unreachable grace rather than a whole session timeout.
 *
 * <p>Thread-safe; called on request threads (and {@link #onConnectionClosed} on the connection's event loop).
 */
public final class ControllerApis {

    private static final Logger LOG = LoggerFactory.getLogger(ControllerApis.class);

    private final Controller controller;
    /** Which broker's registration or heartbeats came on each open connection, by connection id. */
    private final Map<String, Integer> brokerConnections = new ConcurrentHashMap<>();

    public ControllerApis(Controller controller) {
        this.controller = controller;
    }

    /** The connection {@code connectionId} closed: if a broker's heartbeats came on it, that broker may be dead. */
    public void onConnectionClosed(String connectionId) {
        Integer brokerId = brokerConnections.remove(connectionId);
        if (brokerId != null) {
            controller.brokerUnreachable(brokerId);
        }
    }

    /** Whether {@code key} is one of the APIs answered here. */
    public static boolean handles(ApiKeys key) {
        return key == ApiKeys.BROKER_REGISTRATION || key == ApiKeys.BROKER_HEARTBEAT
                || key == ApiKeys.ALTER_PARTITION || key == ApiKeys.ALLOCATE_PRODUCER_IDS;
    }

    /** Answers one of the APIs for which {@link #handles} is true, which came on connection {@code connectionId}. */
    public Optional<CompletableFuture<AbstractResponse>> handle(String connectionId, AbstractRequest request) {
        if (request instanceof BrokerRegistrationRequest r) {
            brokerConnections.put(connectionId, r.data().brokerId());
            return Optional.of(controller.registerBroker(ControllerMessages.registration(r.data()))
                    .<AbstractResponse>handle((epoch, error) -> new BrokerRegistrationResponse(new BrokerRegistrationResponseData()
                            .setErrorCode(code("BrokerRegistration of broker " + r.data().brokerId(), error))
                            .setBrokerEpoch(epoch == null ? -1 : epoch))));
        }
        if (request instanceof BrokerHeartbeatRequest r) {
            brokerConnections.put(connectionId, r.data().brokerId());
            return Optional.of(controller.brokerHeartbeat(ControllerMessages.heartbeat(r.data()))
                    .<AbstractResponse>handle((reply, error) -> {
                        BrokerHeartbeatResponseData data = new BrokerHeartbeatResponseData()
                                .setErrorCode(code("BrokerHeartbeat of broker " + r.data().brokerId(), error));
                        if (reply != null) {
                            data.setIsCaughtUp(reply.caughtUp()).setIsFenced(reply.fenced())
                                    .setShouldShutDown(reply.shouldShutdown());
                        }
                        return new BrokerHeartbeatResponse(data);
                    }));
        }
        if (request instanceof AlterPartitionRequest r) {
            return Optional.of(controller.alterPartition(r.data().brokerId(), r.data().brokerEpoch(),
                    ControllerMessages.isrChanges(r.data())).<AbstractResponse>handle((results, error) -> results != null
                    ? ControllerMessages.alterPartitionResponse(results)
                    : new AlterPartitionResponse(new AlterPartitionResponseData()
                            .setErrorCode(code("AlterPartition of broker " + r.data().brokerId(), error)))));
        }
        if (request instanceof AllocateProducerIdsRequest r) {
            return Optional.of(controller.allocateProducerIds(r.data().brokerId()).<AbstractResponse>handle((block, error) -> {
                AllocateProducerIdsResponseData data = new AllocateProducerIdsResponseData()
                        .setErrorCode(code("AllocateProducerIds of broker " + r.data().brokerId(), error));
                if (block != null) {
                    data.setProducerIdStart(block.firstProducerId()).setProducerIdLen(block.size());
                }
                return new AllocateProducerIdsResponse(data);
            }));
        }
        return Optional.empty();
    }

    private static short code(String what, Throwable error) {
        if (error == null) {
            return Errors.NONE.code();
        }
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        Errors code = Errors.forException(cause);
        if (code != Errors.NOT_CONTROLLER) {
            LOG.info("{} failed: {}", what, cause.toString());
        }
        return code.code();
    }
}
