package dev.millrace.broker.server;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.message.MetadataResponseData.MetadataResponseTopic;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;

import dev.millrace.broker.controller.Controller;
import dev.millrace.broker.controller.Controller.NewTopic;
import dev.millrace.broker.controller.MetadataImage;
import dev.millrace.broker.controller.MetadataImage.BrokerImage;
import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.controller.MetadataImage.TopicImage;
import dev.millrace.broker.controller.BrokerState;

/**
 * Metadata: the unfenced brokers of the cluster, the cluster id, the active controller (where
 * kafka-clients' Admin sends topic changes), and the topics asked for (or all), each partition with
 * its leader, leader epoch, replicas, ISR and offline (fenced) replicas; a partition without a leader
 * carries LEADER_NOT_AVAILABLE so that clients wait and ask again. An unknown topic asked for by a
 * client that allows it is created first when {@code auto.create.topics.enable} is on, with the
 * cluster's default partition count and replication factor (through the active controller, wherever
 * that is), and then described, so the client sees it in the same response.
 *
 * <p>Thread-safe; called on request threads.
 */
final class MetadataHandler {

    /** Creates topics through the active controller. */
    @FunctionalInterface
    interface TopicCreator {
        CompletableFuture<Map<String, ApiError>> create(List<NewTopic> topics);
    }

    private final Controller controller;
    private final TopicCreator creator;
    private final ClientEndpoints endpoints;
    private final String clusterId;
    private final boolean autoCreateTopics;

    MetadataHandler(Controller controller, TopicCreator creator, ClientEndpoints endpoints, String clusterId,
                    boolean autoCreateTopics) {
        this.controller = controller;
        this.creator = creator;
        this.endpoints = endpoints;
        this.clusterId = clusterId;
        this.autoCreateTopics = autoCreateTopics;
    }

    /** Where clients of each listener reach the brokers. */
    ClientEndpoints endpoints() {
        return endpoints;
    }

    /** Answers with the brokers' endpoints on {@code listener}, the listener the client connected to. */
    CompletableFuture<MetadataResponse> handle(MetadataRequest request, short version, ListenerName listener) {
        MetadataImage image = controller.image();
        List<String> wanted = wantedTopics(request, image);
        List<NewTopic> toCreate = new ArrayList<>();
        if (autoCreateTopics && request.allowAutoTopicCreation() && wanted != null) {
            for (String name : wanted) {
                // null: an unknown topic id, which is never created
                if (name != null && image.topic(name).isEmpty() && !InternalTopics.isInternal(name)) {
                    toCreate.add(new NewTopic(name, -1, (short) -1, Map.of()));
                }
            }
        }
        if (toCreate.isEmpty()) {
            return CompletableFuture.completedFuture(respond(wanted, Map.of(), version, listener));
        }
        return creator.create(toCreate).thenApply(results -> respond(wanted, results, version, listener));
    }

    private static List<String> wantedTopics(MetadataRequest request, MetadataImage image) {
        if (request.isAllTopics()) {
            return null;
        }
        List<String> names = new ArrayList<>();
        request.data().topics().forEach(t -> {
            if (t.name() != null) {
                names.add(t.name());
            } else if (t.topicId() != null && !t.topicId().equals(Uuid.ZERO_UUID)) {
                image.topic(t.topicId())
                        .ifPresentOrElse(x -> names.add(x.name()), () -> names.add(null));
            }
        });
        return names;
    }

    private MetadataResponse respond(List<String> wanted, Map<String, ApiError> creationErrors, short version,
                                     ListenerName listener) {
        MetadataImage image = controller.image();
        MetadataResponseData data = new MetadataResponseData().setClusterId(clusterId)
                .setControllerId(controllerId(image));
        boolean selfListed = false;
        int self = endpoints.nodeId();
        for (BrokerImage broker : image.brokers().values()) {
            if (broker.state() == BrokerState.UNFENCED || broker.id() == self) {
                selfListed |= broker.id() == self;
                ClientEndpoints.Endpoint endpoint = endpoints.of(broker.id(), broker.host(), broker.port(), listener);
                data.brokers().add(new MetadataResponseData.MetadataResponseBroker().setNodeId(broker.id())
                        .setHost(endpoint.host()).setPort(endpoint.port()).setRack(broker.rack()));
            }
        }
        if (!selfListed) {
            ClientEndpoints.Endpoint endpoint = endpoints.self(listener);
            data.brokers().add(new MetadataResponseData.MetadataResponseBroker().setNodeId(self)
                    .setHost(endpoint.host()).setPort(endpoint.port()));
        }
        List<String> names = wanted == null ? new ArrayList<>(image.topics().keySet()) : wanted;
        for (String name : names) {
            if (name == null) {
                // a topic id the cluster does not know; a name is nullable only from version 12
                data.topics().add(new MetadataResponseTopic().setName(version >= 12 ? null : "")
                        .setErrorCode(Errors.UNKNOWN_TOPIC_ID.code()));
                continue;
            }
            Optional<TopicImage> topic = image.topic(name);
            if (topic.isEmpty()) {
                ApiError creation = creationErrors.get(name);
                Errors error = creation != null && !creation.isSuccess()
                        && creation.error() != Errors.TOPIC_ALREADY_EXISTS ? creation.error()
                        : Errors.UNKNOWN_TOPIC_OR_PARTITION;
                data.topics().add(new MetadataResponseTopic().setName(name).setErrorCode(error.code()));
                continue;
            }
            data.topics().add(describe(topic.get(), image));
        }
        return new MetadataResponse(data, version);
    }

    /**
     * The active controller when it is a listed broker; otherwise this broker, which answers topic
     * changes with NOT_CONTROLLER until the clients' next metadata names the controller.
     */
    private int controllerId(MetadataImage image) {
        Optional<Integer> active = controller.activeControllerId();
        return active.isPresent() && image.brokers().containsKey(active.get()) ? active.get() : endpoints.nodeId();
    }

    private static MetadataResponseTopic describe(TopicImage topic, MetadataImage image) {
        MetadataResponseTopic out = new MetadataResponseTopic().setName(topic.name()).setTopicId(topic.topicId())
                .setIsInternal(InternalTopics.isInternal(topic.name()));
        for (PartitionImage p : topic.partitions().values()) {
            List<Integer> offline = new ArrayList<>();
            for (int replica : p.replicas()) {
                BrokerImage broker = image.brokers().get(replica);
                if (broker == null || broker.state() == BrokerState.FENCED) {
                    offline.add(replica);
                }
            }
            out.partitions().add(new MetadataResponseData.MetadataResponsePartition().setPartitionIndex(p.partition())
                    .setErrorCode(p.leader() < 0 ? Errors.LEADER_NOT_AVAILABLE.code() : Errors.NONE.code())
                    .setLeaderId(p.leader()).setLeaderEpoch(p.leaderEpoch())
                    .setReplicaNodes(new ArrayList<>(p.replicas())).setIsrNodes(new ArrayList<>(p.isr()))
                    .setOfflineReplicas(offline));
        }
        return out;
    }
}
