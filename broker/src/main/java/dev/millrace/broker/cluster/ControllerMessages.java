package dev.millrace.broker.cluster;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.AllocateProducerIdsRequestData;
import org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData;
import org.apache.kafka.common.message.AlterPartitionRequestData;
import org.apache.kafka.common.message.AlterPartitionResponseData;
import org.apache.kafka.common.message.BrokerHeartbeatRequestData;
import org.apache.kafka.common.message.BrokerRegistrationRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsResponseData;
import org.apache.kafka.common.message.ElectLeadersResponseData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.ListPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.ListPartitionReassignmentsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AllocateProducerIdsRequest;
import org.apache.kafka.common.requests.AllocateProducerIdsResponse;
import org.apache.kafka.common.requests.AlterConfigsRequest;
import org.apache.kafka.common.requests.AlterConfigsResponse;
import org.apache.kafka.common.requests.AlterPartitionReassignmentsRequest;
import org.apache.kafka.common.requests.AlterPartitionReassignmentsResponse;
import org.apache.kafka.common.requests.AlterPartitionRequest;
import org.apache.kafka.common.requests.AlterPartitionResponse;
import org.apache.kafka.common.requests.BrokerHeartbeatRequest;
import org.apache.kafka.common.requests.BrokerHeartbeatResponse;
import org.apache.kafka.common.requests.BrokerRegistrationRequest;
import org.apache.kafka.common.requests.BrokerRegistrationResponse;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.CreateTopicsResponse;
import org.apache.kafka.common.requests.ElectLeadersRequest;
import org.apache.kafka.common.requests.ElectLeadersResponse;
import org.apache.kafka.common.requests.IncrementalAlterConfigsRequest;
import org.apache.kafka.common.requests.IncrementalAlterConfigsResponse;
import org.apache.kafka.common.requests.ListPartitionReassignmentsRequest;
import org.apache.kafka.common.requests.ListPartitionReassignmentsResponse;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.security.auth.SecurityProtocol;

import dev.millrace.broker.controller.Controller.AlterPartitionResult;
import dev.millrace.broker.controller.Controller.BrokerHeartbeat;
import dev.millrace.broker.controller.Controller.BrokerHeartbeatReply;
import dev.millrace.broker.controller.Controller.BrokerRegistration;
import dev.millrace.broker.controller.ListenerEndpoint;
import dev.millrace.broker.controller.Controller.IsrChange;
import dev.millrace.broker.controller.Controller.NewTopic;
import dev.millrace.broker.controller.Controller.OngoingReassignment;
import dev.millrace.broker.controller.Controller.GroupConfigChange;
import dev.millrace.broker.controller.Controller.TopicConfigChange;
import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.controller.ProducerIdBlock;

/**
 * The mapping between the controller's calls ({@link dev.millrace.broker.controller.Controller}) and the Kafka
 * controller APIs that carry them between nodes, in both directions: {@link ControllerClient} builds requests and
 * reads responses, {@link ControllerApis} reads requests and builds responses.
 *
 * <pre>
 *   BrokerRegistration   BrokerId, ClusterId, IncarnationId, Listeners: PLAINTEXT = the inter-broker host:port,
 *                        client/<NAME> = each listener's advertised host:port; Rack
 *                        → ErrorCode, BrokerEpoch
 *   BrokerHeartbeat      BrokerId, BrokerEpoch, CurrentMetadataOffset (the applied quorum index), WantFence,
 *                        WantShutDown → ErrorCode, IsCaughtUp, IsFenced, ShouldShutDown
 *   AlterPartition       BrokerId, BrokerEpoch, per TopicId and partition: LeaderEpoch, NewIsrWithEpochs
 *                        (broker epochs -1: not checked), PartitionEpoch → per partition ErrorCode, LeaderId,
 *                        LeaderEpoch, Isr, PartitionEpoch (the committed state)
 *   AllocateProducerIds  BrokerId, BrokerEpoch → ErrorCode, ProducerIdStart, ProducerIdLen
 *   CreateTopics         as kafka-clients' Admin sends it (auto-created and internal topics)
 *   ElectLeaders, AlterPartitionReassignments, ListPartitionReassignments, IncrementalAlterConfigs (topics and
 *   groups; SET and DELETE), AlterConfigs (topics)
 *                        as kafka-clients' Admin sends them, forwarded from the node a client asked; the answering
 *                        node builds the response (dev.millrace.broker.server's admin handlers)
 * </pre>
 *
 * A failed call's error code travels; its message does only where the response has a message field (the forwarded
 * admin calls, per entity; elsewhere the active controller logs the message). Stateless and thread-safe.
 */
final class ControllerMessages {

    private static final String LISTENER = "PLAINTEXT";
    /**
     * Prefix of the registration's entries for the listeners clients use, one per listener of {@code listeners}
     * (a listener name has no '/'); the entry named {@link #LISTENER} is the inter-broker endpoint.
     */
    private static final String CLIENT_LISTENER_PREFIX = "client/";

    private ControllerMessages() {
    }

    static BrokerRegistrationRequest.Builder registration(BrokerRegistration registration) {
        BrokerRegistrationRequestData.ListenerCollection listeners = new BrokerRegistrationRequestData
                .ListenerCollection();
        listeners.add(new BrokerRegistrationRequestData.Listener().setName(LISTENER).setHost(registration.host())
                .setPort(registration.port()).setSecurityProtocol(SecurityProtocol.PLAINTEXT.id));
        registration.listeners().forEach((name, endpoint) -> listeners.add(new BrokerRegistrationRequestData
                .Listener().setName(CLIENT_LISTENER_PREFIX + name).setHost(endpoint.host()).setPort(endpoint.port())
                .setSecurityProtocol(SecurityProtocol.PLAINTEXT.id)));
        return new BrokerRegistrationRequest.Builder(new BrokerRegistrationRequestData()
                .setBrokerId(registration.brokerId()).setClusterId(registration.clusterId())
                .setIncarnationId(registration.incarnationId()).setListeners(listeners)
                .setRack(registration.rack()));
    }

    static BrokerRegistration registration(BrokerRegistrationRequestData data) {
        BrokerRegistrationRequestData.Listener listener = data.listeners().find(LISTENER);
        if (listener == null && !data.listeners().isEmpty()) {
            listener = data.listeners().iterator().next();
        }
        String host = listener == null ? "" : listener.host();
        int port = listener == null ? 0 : listener.port();
        Map<String, ListenerEndpoint> clientListeners = new java.util.TreeMap<>();
        for (BrokerRegistrationRequestData.Listener l : data.listeners()) {
            if (l.name().startsWith(CLIENT_LISTENER_PREFIX)) {
                clientListeners.put(l.name().substring(CLIENT_LISTENER_PREFIX.length()),
                        new ListenerEndpoint(l.host(), l.port()));
            }
        }
        return new BrokerRegistration(data.brokerId(), data.clusterId(), data.incarnationId(), host, port,
                data.rack(), clientListeners);
    }

    static long registrationEpoch(BrokerRegistrationResponse response) {
        Errors error = Errors.forCode(response.data().errorCode());
        if (error != Errors.NONE) {
            throw error.exception("BrokerRegistration refused by the active controller: " + error.message());
        }
        return response.data().brokerEpoch();
    }

    static BrokerHeartbeatRequest.Builder heartbeat(BrokerHeartbeat heartbeat) {
        return new BrokerHeartbeatRequest.Builder(new BrokerHeartbeatRequestData().setBrokerId(heartbeat.brokerId())
                .setBrokerEpoch(heartbeat.brokerEpoch()).setCurrentMetadataOffset(heartbeat.appliedMetadataIndex())
                .setWantFence(heartbeat.wantFence()).setWantShutDown(heartbeat.wantShutdown()));
    }

    static BrokerHeartbeat heartbeat(BrokerHeartbeatRequestData data) {
        return new BrokerHeartbeat(data.brokerId(), data.brokerEpoch(), data.currentMetadataOffset(),
                data.wantFence(), data.wantShutDown());
    }

    static BrokerHeartbeatReply heartbeatReply(BrokerHeartbeatResponse response) {
        Errors error = Errors.forCode(response.data().errorCode());
        if (error != Errors.NONE) {
            throw error.exception("BrokerHeartbeat refused by the active controller: " + error.message());
        }
        return new BrokerHeartbeatReply(response.data().isCaughtUp(), response.data().isFenced(),
                response.data().shouldShutDown());
    }

    static AlterPartitionRequest.Builder alterPartition(int brokerId, long brokerEpoch, List<IsrChange> changes) {
        AlterPartitionRequestData data = new AlterPartitionRequestData().setBrokerId(brokerId)
                .setBrokerEpoch(brokerEpoch);
        Map<Uuid, AlterPartitionRequestData.TopicData> topics = new LinkedHashMap<>();
        for (IsrChange change : changes) {
            AlterPartitionRequestData.TopicData topic = topics.computeIfAbsent(change.topicId(), id -> {
                AlterPartitionRequestData.TopicData t = new AlterPartitionRequestData.TopicData().setTopicId(id);
                data.topics().add(t);
                return t;
            });
            List<AlterPartitionRequestData.BrokerState> isr = new ArrayList<>();
            for (int replica : change.newIsr()) {
                isr.add(new AlterPartitionRequestData.BrokerState().setBrokerId(replica).setBrokerEpoch(-1));
            }
            topic.partitions().add(new AlterPartitionRequestData.PartitionData().setPartitionIndex(change.partition())
                    .setLeaderEpoch(change.leaderEpoch()).setNewIsrWithEpochs(isr)
                    .setPartitionEpoch(change.partitionEpoch()));
        }
        return new AlterPartitionRequest.Builder(data);
    }

    static List<IsrChange> isrChanges(AlterPartitionRequestData data) {
        List<IsrChange> changes = new ArrayList<>();
        for (AlterPartitionRequestData.TopicData topic : data.topics()) {
            for (AlterPartitionRequestData.PartitionData p : topic.partitions()) {
                List<Integer> isr = new ArrayList<>();
                if (!p.newIsrWithEpochs().isEmpty()) {
                    p.newIsrWithEpochs().forEach(b -> isr.add(b.brokerId()));
                } else {
                    isr.addAll(p.newIsr());
                }
                changes.add(new IsrChange(topic.topicId(), p.partitionIndex(), p.leaderEpoch(), isr,
                        p.partitionEpoch()));
            }
        }
        return changes;
    }

    static AlterPartitionResponse alterPartitionResponse(Map<TopicIdPartition, AlterPartitionResult> results) {
        AlterPartitionResponseData data = new AlterPartitionResponseData();
        Map<Uuid, AlterPartitionResponseData.TopicData> topics = new LinkedHashMap<>();
        results.forEach((tp, result) -> {
            AlterPartitionResponseData.TopicData topic = topics.computeIfAbsent(tp.topicId(), id -> {
                AlterPartitionResponseData.TopicData t = new AlterPartitionResponseData.TopicData().setTopicId(id);
                data.topics().add(t);
                return t;
            });
            AlterPartitionResponseData.PartitionData out = new AlterPartitionResponseData.PartitionData()
                    .setPartitionIndex(tp.partition()).setErrorCode(result.error().code());
            PartitionImage state = result.partition();
            if (state != null) {
                out.setLeaderId(state.leader()).setLeaderEpoch(state.leaderEpoch())
                        .setIsr(new ArrayList<>(state.isr())).setPartitionEpoch(state.partitionEpoch());
            }
            topic.partitions().add(out);
        });
        return new AlterPartitionResponse(data);
    }

    /**
     * The per-partition results of an AlterPartition response. The returned {@link PartitionImage}s carry the
     * committed leader, leader epoch, ISR and partition epoch; their replica list is empty (the response does not
     * carry it; callers keep the one they know).
     */
    static Map<TopicIdPartition, AlterPartitionResult> alterPartitionResults(AlterPartitionResponse response) {
        Errors top = Errors.forCode(response.data().errorCode());
        if (top != Errors.NONE) {
            throw top.exception("AlterPartition refused by the active controller: " + top.message());
        }
        Map<TopicIdPartition, AlterPartitionResult> results = new LinkedHashMap<>();
        for (AlterPartitionResponseData.TopicData topic : response.data().topics()) {
            for (AlterPartitionResponseData.PartitionData p : topic.partitions()) {
                Errors error = Errors.forCode(p.errorCode());
                PartitionImage state = p.leaderEpoch() < 0 && error != Errors.NONE ? null
                        : new PartitionImage(p.partitionIndex(), List.of(), p.isr(), p.leaderId(), p.leaderEpoch(),
                        p.partitionEpoch());
                results.put(new TopicIdPartition(topic.topicId(), new TopicPartition("", p.partitionIndex())),
                        new AlterPartitionResult(error, state));
            }
        }
        return results;
    }

    static CreateTopicsRequest.Builder createTopics(List<NewTopic> topics, int timeoutMs) {
        CreateTopicsRequestData.CreatableTopicCollection collection = new CreateTopicsRequestData
                .CreatableTopicCollection();
        for (NewTopic topic : topics) {
            CreateTopicsRequestData.CreatableTopic creatable = new CreateTopicsRequestData.CreatableTopic()
                    .setName(topic.name()).setNumPartitions(topic.numPartitions())
                    .setReplicationFactor(topic.replicationFactor());
            topic.configs().forEach((name, value) -> creatable.configs().add(
                    new CreateTopicsRequestData.CreatableTopicConfig().setName(name).setValue(value)));
            topic.assignments().forEach((partition, brokers) -> creatable.assignments().add(
                    new CreateTopicsRequestData.CreatableReplicaAssignment().setPartitionIndex(partition)
                            .setBrokerIds(brokers)));
            collection.add(creatable);
        }
        return new CreateTopicsRequest.Builder(new CreateTopicsRequestData().setTopics(collection)
                .setTimeoutMs(timeoutMs));
    }

    static Map<String, ApiError> createTopicsResults(CreateTopicsResponse response) {
        Map<String, ApiError> results = new LinkedHashMap<>();
        for (CreateTopicsResponseData.CreatableTopicResult result : response.data().topics()) {
            results.put(result.name(), new ApiError(Errors.forCode(result.errorCode()), result.errorMessage()));
        }
        return results;
    }

    static AllocateProducerIdsRequest.Builder allocateProducerIds(int brokerId, long brokerEpoch) {
        return new AllocateProducerIdsRequest.Builder(new AllocateProducerIdsRequestData().setBrokerId(brokerId)
                .setBrokerEpoch(brokerEpoch));
    }

    static ProducerIdBlock producerIdBlock(int brokerId, AllocateProducerIdsResponse response) {
        Errors error = Errors.forCode(response.data().errorCode());
        if (error != Errors.NONE) {
            throw error.exception("AllocateProducerIds refused by the active controller: " + error.message());
        }
        return new ProducerIdBlock(brokerId, response.data().producerIdStart(), response.data().producerIdLen());
    }

    static ElectLeadersRequest.Builder electLeaders(boolean preferred, Set<TopicPartition> partitions, int timeoutMs) {
        return new ElectLeadersRequest.Builder(preferred ? ElectionType.PREFERRED : ElectionType.UNCLEAN, partitions,
                timeoutMs);
    }

    static Map<TopicPartition, ApiError> electLeadersResults(ElectLeadersResponse response) {
        throwIfFailed("ElectLeaders", response.data().errorCode(), null);
        Map<TopicPartition, ApiError> results = new LinkedHashMap<>();
        for (ElectLeadersResponseData.ReplicaElectionResult topic : response.data().replicaElectionResults()) {
            for (ElectLeadersResponseData.PartitionResult p : topic.partitionResult()) {
                results.put(new TopicPartition(topic.topic(), p.partitionId()),
                        new ApiError(Errors.forCode(p.errorCode()), p.errorMessage()));
            }
        }
        return results;
    }

    static AlterPartitionReassignmentsRequest.Builder alterPartitionReassignments(
            Map<TopicPartition, Optional<List<Integer>>> reassignments, int timeoutMs) {
        AlterPartitionReassignmentsRequestData data = new AlterPartitionReassignmentsRequestData()
                .setTimeoutMs(timeoutMs);
        Map<String, AlterPartitionReassignmentsRequestData.ReassignableTopic> topics = new LinkedHashMap<>();
        reassignments.forEach((tp, target) -> topics.computeIfAbsent(tp.topic(), name -> {
            AlterPartitionReassignmentsRequestData.ReassignableTopic t = new AlterPartitionReassignmentsRequestData
                    .ReassignableTopic().setName(name);
            data.topics().add(t);
            return t;
        }).partitions().add(new AlterPartitionReassignmentsRequestData.ReassignablePartition()
                .setPartitionIndex(tp.partition()).setReplicas(target == null ? null : target.orElse(null))));
        return new AlterPartitionReassignmentsRequest.Builder(data);
    }

    static Map<TopicPartition, ApiError> alterPartitionReassignmentsResults(
            AlterPartitionReassignmentsResponse response) {
        throwIfFailed("AlterPartitionReassignments", response.data().errorCode(), response.data().errorMessage());
        Map<TopicPartition, ApiError> results = new LinkedHashMap<>();
        for (AlterPartitionReassignmentsResponseData.ReassignableTopicResponse topic : response.data().responses()) {
            for (AlterPartitionReassignmentsResponseData.ReassignablePartitionResponse p : topic.partitions()) {
                results.put(new TopicPartition(topic.name(), p.partitionIndex()),
                        new ApiError(Errors.forCode(p.errorCode()), p.errorMessage()));
            }
        }
        return results;
    }

    /** Lists every reassignment in progress (the asking node filters). */
    static ListPartitionReassignmentsRequest.Builder listPartitionReassignments(int timeoutMs) {
        return new ListPartitionReassignmentsRequest.Builder(new ListPartitionReassignmentsRequestData()
                .setTimeoutMs(timeoutMs).setTopics(null));
    }

    static Map<TopicPartition, OngoingReassignment> listPartitionReassignmentsResults(
            ListPartitionReassignmentsResponse response) {
        throwIfFailed("ListPartitionReassignments", response.data().errorCode(), response.data().errorMessage());
        Map<TopicPartition, OngoingReassignment> results = new LinkedHashMap<>();
        for (ListPartitionReassignmentsResponseData.OngoingTopicReassignment topic : response.data().topics()) {
            for (ListPartitionReassignmentsResponseData.OngoingPartitionReassignment p : topic.partitions()) {
                results.put(new TopicPartition(topic.name(), p.partitionIndex()), new OngoingReassignment(
                        List.copyOf(p.replicas()), List.copyOf(p.addingReplicas()),
                        List.copyOf(p.removingReplicas())));
            }
        }
        return results;
    }

    /** Whether every change replaces its topic's whole config (legacy AlterConfigs); a mix is a bug. */
    static boolean allReplace(Map<String, TopicConfigChange> changes) {
        long replacing = changes.values().stream().filter(TopicConfigChange::replace).count();
        if (replacing != 0 && replacing != changes.size()) {
            throw new IllegalArgumentException("Incremental and replacing config changes in one call: " + changes);
        }
        return replacing != 0;
    }

    static IncrementalAlterConfigsRequest.Builder incrementalAlterConfigs(Map<String, TopicConfigChange> changes,
                                                                         boolean validateOnly) {
        IncrementalAlterConfigsRequestData data = new IncrementalAlterConfigsRequestData()
                .setValidateOnly(validateOnly);
        changes.forEach((topic, change) -> {
            IncrementalAlterConfigsRequestData.AlterConfigsResource resource = new IncrementalAlterConfigsRequestData
                    .AlterConfigsResource().setResourceType(ConfigResource.Type.TOPIC.id()).setResourceName(topic);
            change.set().forEach((name, value) -> resource.configs().add(new IncrementalAlterConfigsRequestData
                    .AlterableConfig().setName(name).setValue(value).setConfigOperation((byte) 0)));
            change.delete().forEach(name -> resource.configs().add(new IncrementalAlterConfigsRequestData
                    .AlterableConfig().setName(name).setValue(null).setConfigOperation((byte) 1)));
            data.resources().add(resource);
        });
        return new IncrementalAlterConfigsRequest.Builder(data);
    }

    /** Group setting changes as IncrementalAlterConfigs of {@code GROUP} resources (SET and DELETE). */
    static IncrementalAlterConfigsRequest.Builder incrementalAlterGroupConfigs(Map<String, GroupConfigChange> changes,
                                                                              boolean validateOnly) {
        IncrementalAlterConfigsRequestData data = new IncrementalAlterConfigsRequestData()
                .setValidateOnly(validateOnly);
        changes.forEach((groupId, change) -> {
            IncrementalAlterConfigsRequestData.AlterConfigsResource resource = new IncrementalAlterConfigsRequestData
                    .AlterConfigsResource().setResourceType(ConfigResource.Type.GROUP.id()).setResourceName(groupId);
            change.set().forEach((name, value) -> resource.configs().add(new IncrementalAlterConfigsRequestData
                    .AlterableConfig().setName(name).setValue(value).setConfigOperation((byte) 0)));
            change.delete().forEach(name -> resource.configs().add(new IncrementalAlterConfigsRequestData
                    .AlterableConfig().setName(name).setValue(null).setConfigOperation((byte) 1)));
            data.resources().add(resource);
        });
        return new IncrementalAlterConfigsRequest.Builder(data);
    }

    static Map<String, ApiError> incrementalAlterConfigsResults(IncrementalAlterConfigsResponse response) {
        Map<String, ApiError> results = new LinkedHashMap<>();
        response.data().responses().forEach(r -> results.put(r.resourceName(),
                new ApiError(Errors.forCode(r.errorCode()), r.errorMessage())));
        return results;
    }

    static AlterConfigsRequest.Builder alterConfigs(Map<String, TopicConfigChange> changes, boolean validateOnly) {
        Map<ConfigResource, AlterConfigsRequest.Config> configs = new LinkedHashMap<>();
        changes.forEach((topic, change) -> {
            List<AlterConfigsRequest.ConfigEntry> entries = new ArrayList<>();
            change.set().forEach((name, value) -> entries.add(new AlterConfigsRequest.ConfigEntry(name, value)));
            configs.put(new ConfigResource(ConfigResource.Type.TOPIC, topic), new AlterConfigsRequest.Config(entries));
        });
        return new AlterConfigsRequest.Builder(configs, validateOnly);
    }

    static Map<String, ApiError> alterConfigsResults(AlterConfigsResponse response) {
        Map<String, ApiError> results = new LinkedHashMap<>();
        response.data().responses().forEach(r -> results.put(r.resourceName(),
                new ApiError(Errors.forCode(r.errorCode()), r.errorMessage())));
        return results;
    }

    /** Throws the kafka-clients exception of a whole-request error (NOT_CONTROLLER makes the caller retry). */
    private static void throwIfFailed(String what, short errorCode, String message) {
        Errors error = Errors.forCode(errorCode);
        if (error != Errors.NONE) {
            throw error.exception(what + " refused by the active controller: "
                    + (message == null ? error.message() : message));
        }
    }
}
