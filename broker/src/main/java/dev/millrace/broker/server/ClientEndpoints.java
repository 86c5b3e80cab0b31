package dev.millrace.broker.server;

import java.util.LinkedHashMap;
import java.util.Map;

import org.apache.kafka.common.network.ListenerName;

/**
 * Where clients reach brokers, by the listener they came in on: Metadata and FindCoordinator must answer a client
 * connected to an SSL listener with that listener's address, never the PLAINTEXT one (kafka-clients connects to
 * exactly what it is told, with the protocol it was configured with).
 *
 * <p>This broker's own listeners are all known here. Other brokers register one endpoint with the controller, their
 * inter-broker listener's, and are described with it whatever the listener: in a cluster whose clients use other
 * listeners, registering every listener is still to be done.
 *
 * <p>Immutable; thread-safe.
 */
final class ClientEndpoints {

    /** A host and port as clients use them. */
    record Endpoint(String host, int port) {
    }

    private final int nodeId;
    private final Map<String, Endpoint> byListener;
    private final Endpoint interBroker;

    private ClientEndpoints(int nodeId, Map<String, Endpoint> byListener, Endpoint interBroker) {
        this.nodeId = nodeId;
        this.byListener = Map.copyOf(byListener);
        this.interBroker = interBroker;
    }

    /** A single PLAINTEXT listener (tests, tools). */
    static ClientEndpoints single(int nodeId, String host, int port) {
        return new Builder(nodeId).add("PLAINTEXT", host, port).build("PLAINTEXT");
    }

    int nodeId() {
        return nodeId;
    }

    /** This broker as the clients of {@code listener} reach it. */
    Endpoint self(ListenerName listener) {
        return listener == null ? interBroker : byListener.getOrDefault(listener.value(), interBroker);
    }

    /** Broker {@code id}, registered at {@code host}:{@code port}, as the clients of {@code listener} reach it. */
    Endpoint of(int id, String host, int port, ListenerName listener) {
        return id == nodeId ? self(listener) : new Endpoint(host, port);
    }

    /** Collects the listeners' advertised endpoints as they are bound. Not thread-safe. */
    static final class Builder {
        private final int nodeId;
        private final Map<String, Endpoint> byListener = new LinkedHashMap<>();

        Builder(int nodeId) {
            this.nodeId = nodeId;
        }

        Builder add(String listener, String host, int port) {
            byListener.put(ListenerName.normalised(listener).value(), new Endpoint(host, port));
            return this;
        }

        ClientEndpoints build(String interBrokerListener) {
            return new ClientEndpoints(nodeId, byListener,
                    byListener.get(ListenerName.normalised(interBrokerListener).value()));
        }
    }
}
