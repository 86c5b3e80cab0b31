package dev.millrace.broker.server;

import java.util.LinkedHashMap;
import java.util.Map;

import java.util.function.Supplier;

import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.ShareAcknowledgeResponse;
import org.apache.kafka.common.requests.ShareFetchResponse;

import dev.millrace.broker.controller.ListenerEndpoint;
import dev.millrace.broker.controller.MetadataImage;
import dev.millrace.broker.controller.MetadataImage.BrokerImage;

/**
 * Where clients reach brokers, by the listener they came in on: Metadata and FindCoordinator must answer a client
 * connected to an SSL listener with that listener's address, never the PLAINTEXT one (kafka-clients connects to
 * exactly what it is told, with the protocol it was configured with).
 *
 * <p>This broker's own listeners are all known here; other brokers' come from their registrations in the metadata
 * ({@link BrokerImage#listeners()}: a broker with {@code listeners} set registers each listener's advertised address).
 * A broker that registered none, or not the listener asked about, is described with its inter-broker endpoint.
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
    private final Supplier<MetadataImage> image;

    private ClientEndpoints(int nodeId, Map<String, Endpoint> byListener, Endpoint interBroker,
                            Supplier<MetadataImage> image) {
        this.nodeId = nodeId;
        this.byListener = Map.copyOf(byListener);
        this.interBroker = interBroker;
        this.image = image;
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
        if (id == nodeId) {
            return self(listener);
        }
        BrokerImage broker = image.get().brokers().get(id);
        if (broker == null || listener == null) {
            return new Endpoint(host, port);
        }
        ListenerEndpoint endpoint = broker.endpoint(listener.value());
        return new Endpoint(endpoint.host(), endpoint.port());
    }

    /**
     * {@code response} with the leader endpoints it names (KIP-951's NodeEndpoints of Produce, ShareFetch and
     * ShareAcknowledge, given where leadership moved) changed to the addresses on {@code listener}, which the client
     * connects to next.
     */
    <R extends AbstractResponse> R forListener(R response, ListenerName listener) {
        if (response instanceof ProduceResponse produce) {
            produce.data().nodeEndpoints().forEach(n -> {
                Endpoint e = of(n.nodeId(), n.host(), n.port(), listener);
                n.setHost(e.host()).setPort(e.port());
            });
        } else if (response instanceof ShareFetchResponse fetch) {
            fetch.data().nodeEndpoints().forEach(n -> {
                Endpoint e = of(n.nodeId(), n.host(), n.port(), listener);
                n.setHost(e.host()).setPort(e.port());
            });
        } else if (response instanceof ShareAcknowledgeResponse acknowledge) {
            acknowledge.data().nodeEndpoints().forEach(n -> {
                Endpoint e = of(n.nodeId(), n.host(), n.port(), listener);
                n.setHost(e.host()).setPort(e.port());
            });
        }
        return response;
    }

    /** Collects the listeners' advertised endpoints as they are bound. Not thread-safe. */
    static final class Builder {
        private final int nodeId;
        private final Supplier<MetadataImage> image;
        private final Map<String, Endpoint> byListener = new LinkedHashMap<>();

        /** @param image the latest metadata, where other brokers' listeners are registered */
        Builder(int nodeId, Supplier<MetadataImage> image) {
            this.nodeId = nodeId;
            this.image = image;
        }

        /** The endpoints added so far, by listener name. */
        void forEach(java.util.function.BiConsumer<String, Endpoint> action) {
            byListener.forEach(action);
        }

        Builder add(String listener, String host, int port) {
            byListener.put(ListenerName.normalised(listener).value(), new Endpoint(host, port));
            return this;
        }

        ClientEndpoints build(String interBrokerListener) {
            return new ClientEndpoints(nodeId, byListener,
                    byListener.get(ListenerName.normalised(interBrokerListener).value()), image);
        }
    }
}
