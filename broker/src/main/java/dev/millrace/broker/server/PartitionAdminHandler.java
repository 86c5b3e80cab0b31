package dev.millrace.broker.server;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData;
import org.apache.kafka.common.message.ElectLeadersResponseData;
import org.apache.kafka.common.message.ListPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.ListPartitionReassignmentsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AlterPartitionReassignmentsRequest;
import org.apache.kafka.common.requests.AlterPartitionReassignmentsResponse;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.ElectLeadersRequest;
import org.apache.kafka.common.requests.ElectLeadersResponse;
import org.apache.kafka.common.requests.ListPartitionReassignmentsRequest;
import org.apache.kafka.common.requests.ListPartitionReassignmentsResponse;

import dev.millrace.broker.cluster.ControllerClient;
import dev.millrace.broker.controller.Controller;
import dev.millrace.broker.controller.Controller.OngoingReassignment;
import dev.millrace.broker.controller.MetadataImage;

/**
 * The Admin client's partition calls: leader election (ElectLeaders, PREFERRED and UNCLEAN) and partition
 * reassignment (AlterPartitionReassignments, ListPartitionReassignments), decided by the active controller.
 *
 * <p>kafka-clients' Admin sends these to the node the Metadata response names as controller, but any node answers
 * them: a request from a client goes to the active controller through the {@link ControllerClient} (the local
 * controller when this node is active, else the same request to the active controller's node); a request that another
 * node forwarded ({@link ControllerClient#isForwarded}) is answered by the local controller, NOT_CONTROLLER when it is
 * not (or no longer) active, and the forwarding node tries again.
 *
 * <p>Errors, as Kafka gives them: per partition ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE,
 * ELIGIBLE_LEADERS_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICA_ASSIGNMENT (naming the broker),
 * INVALID_REPLICATION_FACTOR (a reassignment that changes the replica count when the request does not allow it),
 * NO_REASSIGNMENT_IN_PROGRESS; for the whole request NOT_CONTROLLER or REQUEST_TIMED_OUT. An election of every
 * partition (no partitions named) reports the partitions it moved or could not move, not those already led by their
 * preferred replica.
 *
 * <p>Thread-safe; called on request threads. Futures complete on the controller's or the controller client's threads.
 */
final class PartitionAdminHandler {

    private final Controller controller;
    private final ControllerClient controllerClient;

    PartitionAdminHandler(Controller controller, ControllerClient controllerClient) {
        this.controller = controller;
        this.controllerClient = controllerClient;
    }

    CompletableFuture<ElectLeadersResponse> electLeaders(ElectLeadersRequest request, boolean forwarded) {
        boolean preferred = request.electionType() == ElectionType.PREFERRED;
        Set<TopicPartition> partitions = request.data().topicPartitions() == null ? null
                : request.topicPartitions();
        CompletableFuture<Map<TopicPartition, ApiError>> results = forwarded
                ? controller.electLeaders(preferred, partitions)
                : controllerClient.electLeaders(preferred, partitions);
        return results.handle((byPartition, error) -> {
            ElectLeadersResponseData data = new ElectLeadersResponseData();
            if (error != null) {
                ApiError failure = ApiError.fromThrowable(unwrap(error));
                if (request.version() >= 1) {
                    data.setErrorCode(failure.error().code());
                }
                if (partitions != null) {
                    Map<TopicPartition, ApiError> all = new LinkedHashMap<>();
                    partitions.forEach(tp -> all.put(tp, failure));
                    addElectionResults(data, all);
                }
                return new ElectLeadersResponse(data);
            }
            Map<TopicPartition, ApiError> reported = new LinkedHashMap<>(byPartition);
            if (partitions == null) {
                reported.values().removeIf(e -> e.error() == Errors.ELECTION_NOT_NEEDED);
            }
            addElectionResults(data, reported);
            return new ElectLeadersResponse(data);
        });
    }

    private static void addElectionResults(ElectLeadersResponseData data, Map<TopicPartition, ApiError> results) {
        Map<String, ElectLeadersResponseData.ReplicaElectionResult> topics = new LinkedHashMap<>();
        results.forEach((tp, error) -> topics.computeIfAbsent(tp.topic(), name -> {
            ElectLeadersResponseData.ReplicaElectionResult topic = new ElectLeadersResponseData.ReplicaElectionResult()
                    .setTopic(name);
            data.replicaElectionResults().add(topic);
            return topic;
        }).partitionResult().add(new ElectLeadersResponseData.PartitionResult().setPartitionId(tp.partition())
                .setErrorCode(error.error().code()).setErrorMessage(error.isSuccess() ? null : error.message())));
    }

    CompletableFuture<AlterPartitionReassignmentsResponse> alterPartitionReassignments(
            AlterPartitionReassignmentsRequest request, boolean forwarded) {
        AlterPartitionReassignmentsRequestData data = request.data();
        Map<TopicPartition, ApiError> refused = new LinkedHashMap<>();
        Map<TopicPartition, Optional<List<Integer>>> reassignments = new LinkedHashMap<>();
        MetadataImage image = controller.image();
        for (AlterPartitionReassignmentsRequestData.ReassignableTopic topic : data.topics()) {
            for (AlterPartitionReassignmentsRequestData.ReassignablePartition p : topic.partitions()) {
                TopicPartition tp = new TopicPartition(topic.name(), p.partitionIndex());
                Optional<List<Integer>> target = Optional.ofNullable(p.replicas()).map(List::copyOf);
                Optional<ApiError> sizeChange = data.allowReplicationFactorChange() || target.isEmpty()
                        ? Optional.empty() : replicationFactorChange(image, tp, target.get());
                if (sizeChange.isPresent()) {
                    refused.put(tp, sizeChange.get());
                } else {
                    reassignments.put(tp, target);
                }
            }
        }
        CompletableFuture<Map<TopicPartition, ApiError>> results = reassignments.isEmpty()
                ? CompletableFuture.completedFuture(Map.of())
                : forwarded ? controller.alterPartitionReassignments(reassignments)
                : controllerClient.alterPartitionReassignments(reassignments);
        return results.handle((byPartition, error) -> {
            AlterPartitionReassignmentsResponseData response = new AlterPartitionReassignmentsResponseData()
                    .setAllowReplicationFactorChange(data.allowReplicationFactorChange());
            Map<TopicPartition, ApiError> all = new LinkedHashMap<>(refused);
            if (error != null) {
                ApiError failure = ApiError.fromThrowable(unwrap(error));
                response.setErrorCode(failure.error().code()).setErrorMessage(failure.message());
                reassignments.keySet().forEach(tp -> all.put(tp, failure));
            } else {
                for (TopicPartition tp : reassignments.keySet()) {
                    all.put(tp, byPartition.getOrDefault(tp, new ApiError(Errors.UNKNOWN_SERVER_ERROR,
                            "The controller gave no result for " + tp)));
                }
            }
            Map<String, AlterPartitionReassignmentsResponseData.ReassignableTopicResponse> topics =
                    new LinkedHashMap<>();
            all.forEach((tp, e) -> topics.computeIfAbsent(tp.topic(), name -> {
                AlterPartitionReassignmentsResponseData.ReassignableTopicResponse topic =
                        new AlterPartitionReassignmentsResponseData.ReassignableTopicResponse().setName(name);
                response.responses().add(topic);
                return topic;
            }).partitions().add(new AlterPartitionReassignmentsResponseData.ReassignablePartitionResponse()
                    .setPartitionIndex(tp.partition()).setErrorCode(e.error().code())
                    .setErrorMessage(e.isSuccess() ? null : e.message())));
            return new AlterPartitionReassignmentsResponse(response);
        });
    }

    /** INVALID_REPLICATION_FACTOR when {@code target} has another size than the partition's replicas before it. */
    private static Optional<ApiError> replicationFactorChange(MetadataImage image, TopicPartition tp,
                                                             List<Integer> target) {
        return image.topic(tp.topic()).map(t -> t.partitions().get(tp.partition())).flatMap(p -> {
            long original = p.replicas().stream().filter(r -> !p.addingReplicas().contains(r)).count();
            return original == target.size() ? Optional.empty()
                    : Optional.of(new ApiError(Errors.INVALID_REPLICATION_FACTOR, "Reassigning " + tp + " to "
                    + target + " changes its replication factor from " + original + " to " + target.size()
                    + ", which the request does not allow"));
        });
    }

    CompletableFuture<ListPartitionReassignmentsResponse> listPartitionReassignments(
            ListPartitionReassignmentsRequest request, boolean forwarded) {
        List<ListPartitionReassignmentsRequestData.ListPartitionReassignmentsTopics> wanted = request.data().topics();
        Set<TopicPartition> filter = null;
        if (wanted != null) {
            filter = new HashSet<>();
            for (ListPartitionReassignmentsRequestData.ListPartitionReassignmentsTopics topic : wanted) {
                for (int partition : topic.partitionIndexes()) {
                    filter.add(new TopicPartition(topic.name(), partition));
                }
            }
        }
        Set<TopicPartition> only = filter;
        CompletableFuture<Map<TopicPartition, OngoingReassignment>> results = forwarded
                ? controller.listPartitionReassignments() : controllerClient.listPartitionReassignments();
        return results.handle((ongoing, error) -> {
            ListPartitionReassignmentsResponseData data = new ListPartitionReassignmentsResponseData();
            if (error != null) {
                ApiError failure = ApiError.fromThrowable(unwrap(error));
                return new ListPartitionReassignmentsResponse(data.setErrorCode(failure.error().code())
                        .setErrorMessage(failure.message()));
            }
            Map<String, ListPartitionReassignmentsResponseData.OngoingTopicReassignment> topics = new LinkedHashMap<>();
            ongoing.forEach((tp, r) -> {
                if (only != null && !only.contains(tp)) {
                    return;
                }
                topics.computeIfAbsent(tp.topic(), name -> {
                    ListPartitionReassignmentsResponseData.OngoingTopicReassignment topic =
                            new ListPartitionReassignmentsResponseData.OngoingTopicReassignment().setName(name);
                    data.topics().add(topic);
                    return topic;
                }).partitions().add(new ListPartitionReassignmentsResponseData.OngoingPartitionReassignment()
                        .setPartitionIndex(tp.partition()).setReplicas(new ArrayList<>(r.replicas()))
                        .setAddingReplicas(new ArrayList<>(r.addingReplicas()))
                        .setRemovingReplicas(new ArrayList<>(r.removingReplicas())));
            });
            return new ListPartitionReassignmentsResponse(data);
        });
    }

    private static Throwable unwrap(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }
}
