package dev.millrace.broker.server;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.AlterConfigsRequestData;
import org.apache.kafka.common.message.AlterConfigsResponseData;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreatePartitionsResponseData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsResponseData;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DeleteTopicsResponseData;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AlterConfigsRequest;
import org.apache.kafka.common.requests.AlterConfigsResponse;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.CreatePartitionsRequest;
import org.apache.kafka.common.requests.CreatePartitionsResponse;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.CreateTopicsResponse;
import org.apache.kafka.common.requests.DeleteTopicsRequest;
import org.apache.kafka.common.requests.DeleteTopicsResponse;
import org.apache.kafka.common.requests.DescribeConfigsRequest;
import org.apache.kafka.common.requests.DescribeConfigsResponse;
import org.apache.kafka.common.requests.IncrementalAlterConfigsRequest;
import org.apache.kafka.common.requests.IncrementalAlterConfigsResponse;

import dev.millrace.broker.cluster.ControllerClient;
import dev.millrace.broker.config.BrokerConfigLoader;
import dev.millrace.broker.controller.Controller;
import dev.millrace.broker.controller.Controller.NewTopic;
import dev.millrace.broker.controller.Controller.GroupConfigChange;
import dev.millrace.broker.controller.Controller.TopicConfigChange;
import dev.millrace.broker.controller.MetadataImage;
import dev.millrace.broker.log.LogConfig;

/**
 * Topic administration for the Admin client: create, delete and grow topics, describe and alter
 * topic configs (incrementally, and the legacy replace-all form). Changes go through the
 * {@link Controller}; results and errors are per topic.
 *
 * <p>Topic config changes come from kafka-clients' Admin to any broker (its least loaded node), so they go to the
 * active controller through the {@link ControllerClient}: the local controller when this node is active, else the same
 * request to the active controller's node. A change that another node forwarded ({@code forwarded}) is applied by the
 * local controller (NOT_CONTROLLER per topic when it is not active; the forwarding node tries again). Describing
 * configs reads the local metadata image, on any node. Create, delete and grow go to the local controller: Admin sends
 * them to the node the Metadata response names as controller, and retries on NOT_CONTROLLER. Broker-resource configs are described as
 * empty and cannot be altered yet (INVALID_REQUEST, naming the resource).
 *
 * <p>Thread-safe; called on request threads.
 */
final class TopicAdminHandler {

    private final Controller controller;
    private final ControllerClient controllerClient;
    private final PartitionManager partitions;
    private final List<BrokerConfigLoader.SettingValue> brokerSettings;

    TopicAdminHandler(Controller controller, ControllerClient controllerClient, PartitionManager partitions,
                      List<BrokerConfigLoader.SettingValue> brokerSettings) {
        this.brokerSettings = List.copyOf(brokerSettings);
        this.controller = controller;
        this.controllerClient = controllerClient;
        this.partitions = partitions;
    }

    CompletableFuture<CreateTopicsResponse> createTopics(CreateTopicsRequest request) {
        CreateTopicsRequestData data = request.data();
        List<NewTopic> topics = new ArrayList<>();
        for (CreateTopicsRequestData.CreatableTopic t : data.topics()) {
            Map<String, String> configs = new LinkedHashMap<>();
            t.configs().forEach(c -> configs.put(c.name(), c.value()));
            Map<Integer, List<Integer>> assignments = new LinkedHashMap<>();
            t.assignments().forEach(a -> assignments.put(a.partitionIndex(), List.copyOf(a.brokerIds())));
            topics.add(new NewTopic(t.name(), t.numPartitions(), t.replicationFactor(), configs, assignments));
        }
        return controller.createTopics(topics, data.validateOnly()).thenApply(results -> {
            CreateTopicsResponseData response = new CreateTopicsResponseData();
            MetadataImage image = controller.image();
            for (NewTopic t : topics) {
                ApiError error = results.getOrDefault(t.name(), new ApiError(Errors.UNKNOWN_SERVER_ERROR, "no result"));
                CreateTopicsResponseData.CreatableTopicResult result = new CreateTopicsResponseData.CreatableTopicResult()
                        .setName(t.name()).setErrorCode(error.error().code()).setErrorMessage(error.message())
                        .setNumPartitions(t.numPartitions()).setReplicationFactor(t.replicationFactor());
                image.topic(t.name()).filter(x -> error.isSuccess()).ifPresent(created -> result
                        .setTopicId(created.topicId()).setNumPartitions(created.partitions().size())
                        .setReplicationFactor((short) created.partitions().get(0).replicas().size()));
                response.topics().add(result);
            }
            return new CreateTopicsResponse(response);
        });
    }

    CompletableFuture<DeleteTopicsResponse> deleteTopics(DeleteTopicsRequest request) {
        List<String> names = new ArrayList<>(request.topicNames());
        return controller.deleteTopics(names).thenApply(results -> {
            DeleteTopicsResponseData response = new DeleteTopicsResponseData();
            for (String name : names) {
                ApiError error = results.getOrDefault(name, new ApiError(Errors.UNKNOWN_SERVER_ERROR, "no result"));
                response.responses().add(new DeleteTopicsResponseData.DeletableTopicResult().setName(name)
                        .setErrorCode(error.error().code()).setErrorMessage(error.message()));
            }
            return new DeleteTopicsResponse(response);
        });
    }

    CompletableFuture<CreatePartitionsResponse> createPartitions(CreatePartitionsRequest request) {
        CreatePartitionsRequestData data = request.data();
        Map<String, Integer> counts = new LinkedHashMap<>();
        data.topics().forEach(t -> counts.put(t.name(), t.count()));
        return controller.createPartitions(counts, data.validateOnly()).thenApply(results -> {
            CreatePartitionsResponseData response = new CreatePartitionsResponseData();
            for (String name : counts.keySet()) {
                ApiError error = results.getOrDefault(name, new ApiError(Errors.UNKNOWN_SERVER_ERROR, "no result"));
                response.results().add(new CreatePartitionsResponseData.CreatePartitionsTopicResult().setName(name)
                        .setErrorCode(error.error().code()).setErrorMessage(error.message()));
            }
            return new CreatePartitionsResponse(response);
        });
    }

    DescribeConfigsResponse describeConfigs(DescribeConfigsRequest request) {
        DescribeConfigsResponseData response = new DescribeConfigsResponseData();
        MetadataImage image = controller.image();
        for (DescribeConfigsRequestData.DescribeConfigsResource resource : request.data().resources()) {
            DescribeConfigsResponseData.DescribeConfigsResult result = new DescribeConfigsResponseData.DescribeConfigsResult()
                    .setResourceType(resource.resourceType()).setResourceName(resource.resourceName());
            if (resource.resourceType() == ConfigResource.Type.TOPIC.id()) {
                var topic = image.topic(resource.resourceName());
                if (topic.isEmpty()) {
                    result.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code())
                            .setErrorMessage("Topic " + resource.resourceName() + " does not exist");
                } else {
                    describeTopicConfigs(topic.get().configs(), resource.configurationKeys(), result);
                }
            } else if (resource.resourceType() == ConfigResource.Type.BROKER.id()) {
                describeBrokerConfigs(resource.configurationKeys(), result);
            } else {
                result.setErrorCode(Errors.INVALID_REQUEST.code())
                        .setErrorMessage("Configs of resource type " + resource.resourceType() + " are not supported");
            }
            response.results().add(result);
        }
        return new DescribeConfigsResponse(response);
    }

    /**
     * The broker's settings as they are in effect (read-only: they come from the command line and the config file).
     * Clients use this to learn, for example, whether {@code auto.create.topics.enable} is on.
     */
    private void describeBrokerConfigs(List<String> keys, DescribeConfigsResponseData.DescribeConfigsResult result) {
        for (BrokerConfigLoader.SettingValue setting : brokerSettings) {
            if (keys != null && !keys.isEmpty() && !keys.contains(setting.name())) {
                continue;
            }
            result.configs().add(new DescribeConfigsResponseData.DescribeConfigsResourceResult()
                    .setName(setting.name()).setValue(setting.value()).setReadOnly(true)
                    .setConfigSource(DescribeConfigsResponse.ConfigSource.STATIC_BROKER_CONFIG.id())
                    .setIsSensitive(setting.sensitive()).setDocumentation(setting.doc()));
        }
    }

    private void describeTopicConfigs(Map<String, String> topicConfigs, List<String> keys,
                                      DescribeConfigsResponseData.DescribeConfigsResult result) {
        LogConfig effective = partitions.logConfig(topicConfigs);
        for (Map.Entry<String, ConfigDef.ConfigKey> e : LogConfig.DEFINITION.configKeys().entrySet()) {
            String name = e.getKey();
            if (keys != null && !keys.isEmpty() && !keys.contains(name)) {
                continue;
            }
            Object value = effective.values().get(name);
            boolean set = topicConfigs.containsKey(name);
            result.configs().add(new DescribeConfigsResponseData.DescribeConfigsResourceResult().setName(name)
                    .setValue(value instanceof List<?> list ? String.join(",", list.stream().map(String::valueOf).toList())
                            : String.valueOf(value))
                    .setReadOnly(false)
                    .setConfigSource(set ? DescribeConfigsResponse.ConfigSource.TOPIC_CONFIG.id()
                            : DescribeConfigsResponse.ConfigSource.DEFAULT_CONFIG.id())
                    .setIsSensitive(false)
                    .setDocumentation(e.getValue().documentation));
        }
    }

    CompletableFuture<IncrementalAlterConfigsResponse> incrementalAlterConfigs(IncrementalAlterConfigsRequest request,
                                                                            boolean forwarded) {
        IncrementalAlterConfigsRequestData data = request.data();
        Map<String, TopicConfigChange> changes = new LinkedHashMap<>();
        IncrementalAlterConfigsResponseData response = new IncrementalAlterConfigsResponseData();
        for (IncrementalAlterConfigsRequestData.AlterConfigsResource resource : data.resources()) {
            if (resource.resourceType() != ConfigResource.Type.TOPIC.id()) {
                response.responses().add(unsupported(resource.resourceType(), resource.resourceName()));
                continue;
            }
            Map<String, String> set = new HashMap<>();
            List<String> delete = new ArrayList<>();
            String unsupportedOp = null;
            for (IncrementalAlterConfigsRequestData.AlterableConfig c : resource.configs()) {
                if (c.configOperation() == 0) {
                    set.put(c.name(), c.value());
                } else if (c.configOperation() == 1) {
                    delete.add(c.name());
                } else {
                    unsupportedOp = "operation " + c.configOperation() + " (APPEND/SUBTRACT) on " + c.name()
                            + " is not supported; use SET with the whole list";
                }
            }
            if (unsupportedOp != null) {
                response.responses().add(new IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse()
                        .setResourceType(resource.resourceType()).setResourceName(resource.resourceName())
                        .setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage(unsupportedOp));
                continue;
            }
            changes.put(resource.resourceName(), new TopicConfigChange(set, delete, false));
        }
        return alterTopicConfigs(changes, data.validateOnly(), forwarded).thenApply(results -> {
            results.forEach((topic, error) -> response.responses().add(
                    new IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse()
                            .setResourceType(ConfigResource.Type.TOPIC.id()).setResourceName(topic)
                            .setErrorCode(error.error().code()).setErrorMessage(error.message())));
            return new IncrementalAlterConfigsResponse(response);
        });
    }

    CompletableFuture<AlterConfigsResponse> alterConfigs(AlterConfigsRequest request, boolean forwarded) {
        AlterConfigsRequestData data = request.data();
        Map<String, TopicConfigChange> changes = new LinkedHashMap<>();
        AlterConfigsResponseData response = new AlterConfigsResponseData();
        for (AlterConfigsRequestData.AlterConfigsResource resource : data.resources()) {
            if (resource.resourceType() != ConfigResource.Type.TOPIC.id()) {
                var r = unsupported(resource.resourceType(), resource.resourceName());
                response.responses().add(new AlterConfigsResponseData.AlterConfigsResourceResponse()
                        .setResourceType(r.resourceType()).setResourceName(r.resourceName())
                        .setErrorCode(r.errorCode()).setErrorMessage(r.errorMessage()));
                continue;
            }
            Map<String, String> set = new HashMap<>();
            resource.configs().forEach(c -> set.put(c.name(), c.value()));
            changes.put(resource.resourceName(), new TopicConfigChange(set, Set.of(), true));
        }
        return alterTopicConfigs(changes, data.validateOnly(), forwarded).thenApply(results -> {
            results.forEach((topic, error) -> response.responses().add(
                    new AlterConfigsResponseData.AlterConfigsResourceResponse()
                            .setResourceType(ConfigResource.Type.TOPIC.id()).setResourceName(topic)
                            .setErrorCode(error.error().code()).setErrorMessage(error.message())));
            return new AlterConfigsResponse(response);
        });
    }

    /**
     * Applies topic config changes at the active controller; a failure of the whole call (no active controller within
     * the controller client's timeout) becomes every topic's error.
     */
    private CompletableFuture<Map<String, ApiError>> alterTopicConfigs(Map<String, TopicConfigChange> changes,
                                                                       boolean validateOnly, boolean forwarded) {
        if (changes.isEmpty()) {
            return CompletableFuture.completedFuture(Map.of());
        }
        CompletableFuture<Map<String, ApiError>> results = forwarded
                ? controller.alterTopicConfigs(changes, validateOnly)
                : controllerClient.alterTopicConfigs(changes, validateOnly);
        return results.exceptionally(error -> {
            Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause()
                    : error;
            ApiError failure = ApiError.fromThrowable(cause);
            Map<String, ApiError> all = new LinkedHashMap<>();
            changes.keySet().forEach(topic -> all.put(topic, failure));
            return all;
        });
    }

    /**
     * Applies group config changes at the active controller, like {@link #alterTopicConfigs}: directly when
     * {@code forwarded} (this node's controller answers), else through the controller client; a failure of the whole
     * call becomes every group's error.
     */
    CompletableFuture<Map<String, ApiError>> alterGroupConfigs(Map<String, GroupConfigChange> changes,
                                                               boolean validateOnly, boolean forwarded) {
        if (changes.isEmpty()) {
            return CompletableFuture.completedFuture(Map.of());
        }
        CompletableFuture<Map<String, ApiError>> results = forwarded
                ? controller.alterGroupConfigs(changes, validateOnly)
                : controllerClient.alterGroupConfigs(changes, validateOnly);
        return results.exceptionally(error -> {
            Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause()
                    : error;
            ApiError failure = ApiError.fromThrowable(cause);
            Map<String, ApiError> all = new LinkedHashMap<>();
            changes.keySet().forEach(group -> all.put(group, failure));
            return all;
        });
    }

    private static IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse unsupported(byte type, String name) {
        return new IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse().setResourceType(type)
                .setResourceName(name).setErrorCode(Errors.INVALID_REQUEST.code())
                .setErrorMessage("Altering configs of resource type " + type + " (" + name + ") is not supported yet");
    }
}
