package dev.millrace.broker.server;

import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.message.FindCoordinatorResponseData.Coordinator;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorRequest.CoordinatorType;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.utils.Utils;

import dev.millrace.broker.coordinator.CoordinatorLocator;

/**
 * FindCoordinator: the coordinator of a key is the leader of the partition of an internal topic that the key hashes
 * to ({@code Utils.abs(key.hashCode()) % partitions}, as Kafka does):
 *
 * <ul>
 *   <li>{@code GROUP}: consumer groups and share groups, over {@code __consumer_offsets};</li>
 *   <li>{@code TRANSACTION}: transactional ids, over {@code __transaction_state};</li>
 *   <li>{@code SHARE}: share-partition state keys {@code groupId:topicId:partition}, over
 *       {@code __share_group_state}, hashed by the group id (so one group's state is in one partition).</li>
 * </ul>
 *
 * A key whose partition has no live leader gets COORDINATOR_NOT_AVAILABLE, which clients retry. Thread-safe.
 */
final class FindCoordinatorHandler {

    /** One internal topic's coordinators: its partition count and where each partition's leader is. */
    record Coordinators(int partitionCount, CoordinatorLocator locator) {
        Optional<Node> forKey(String hashedKey) {
            return locator.leaderOf(Utils.abs(hashedKey.hashCode()) % partitionCount);
        }
    }

    private final Coordinators groups;
    private final Coordinators transactions;
    private final Coordinators shareStates;
    private final ClientEndpoints endpoints;

    FindCoordinatorHandler(Coordinators groups, Coordinators transactions, Coordinators shareStates) {
        this(groups, transactions, shareStates, null);
    }

    /** @param endpoints where the clients of each listener reach the coordinators, or null: where they registered */
    FindCoordinatorHandler(Coordinators groups, Coordinators transactions, Coordinators shareStates,
                           ClientEndpoints endpoints) {
        this.endpoints = endpoints;
        this.groups = groups;
        this.transactions = transactions;
        this.shareStates = shareStates;
    }

    CompletableFuture<FindCoordinatorResponse> handle(FindCoordinatorRequest request, short apiVersion) {
        return handle(request, apiVersion, null);
    }

    /** Answers with the coordinators' endpoints on {@code listener}, the listener the client connected to. */
    CompletableFuture<FindCoordinatorResponse> handle(FindCoordinatorRequest request, short apiVersion,
                                                      ListenerName listener) {
        FindCoordinatorRequestData data = request.data();
        FindCoordinatorResponseData response = new FindCoordinatorResponseData();
        if (apiVersion < FindCoordinatorRequest.MIN_BATCHED_VERSION) {
            Coordinator c = coordinatorFor(data.key(), data.keyType(), listener);
            response.setErrorCode(c.errorCode()).setErrorMessage(c.errorMessage()).setNodeId(c.nodeId())
                    .setHost(c.host()).setPort(c.port());
        } else {
            for (String key : data.coordinatorKeys()) {
                response.coordinators().add(coordinatorFor(key, data.keyType(), listener));
            }
        }
        return CompletableFuture.completedFuture(new FindCoordinatorResponse(response));
    }

    private Coordinator coordinatorFor(String key, byte keyType, ListenerName listener) {
        Coordinator coordinator = new Coordinator().setKey(key).setNodeId(-1).setHost("").setPort(-1);
        CoordinatorType type;
        try {
            type = CoordinatorType.forId(keyType);
        } catch (RuntimeException e) {
            return error(coordinator, Errors.INVALID_REQUEST, "Unknown coordinator key type " + keyType);
        }
        if (key == null || key.isEmpty()) {
            return error(coordinator, Errors.INVALID_REQUEST, "The " + type.name().toLowerCase(Locale.ROOT)
                    + " coordinator key must not be empty");
        }
        Optional<Node> node;
        switch (type) {
            case GROUP -> node = groups.forKey(key);
            case TRANSACTION -> node = transactions.forKey(key);
            case SHARE -> {
                int colon = key.indexOf(':');
                if (colon <= 0) {
                    return error(coordinator, Errors.INVALID_REQUEST, "A share coordinator key is "
                            + "groupId:topicId:partition, got '" + key + "'");
                }
                node = shareStates.forKey(key.substring(0, colon));
            }
            default -> {
                return error(coordinator, Errors.INVALID_REQUEST, "Unknown coordinator key type " + type);
            }
        }
        if (node.isEmpty()) {
            return error(coordinator, Errors.COORDINATOR_NOT_AVAILABLE, "The " + type.name().toLowerCase(Locale.ROOT)
                    + " coordinator of '" + key + "' has no live leader right now; try again");
        }
        Node found = node.get();
        if (endpoints != null) {
            ClientEndpoints.Endpoint endpoint = endpoints.of(found.id(), found.host(), found.port(), listener);
            found = new Node(found.id(), endpoint.host(), endpoint.port());
        }
        return coordinator.setErrorCode(Errors.NONE.code()).setNodeId(found.id()).setHost(found.host())
                .setPort(found.port());
    }

    private static Coordinator error(Coordinator coordinator, Errors error, String message) {
        return coordinator.setErrorCode(error.code()).setErrorMessage(message);
    }
}
