package dev.millrace.broker.controller;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;

import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;

import dev.millrace.broker.controller.Controller.GroupConfigChange;
import dev.millrace.broker.controller.Controller.TopicConfigChange;
import dev.millrace.broker.controller.MetadataImage.TopicImage;
import dev.millrace.broker.controller.MetadataRecord.ConfigRecord;
import dev.millrace.broker.controller.MetadataRecord.GroupConfigRecord;
import dev.millrace.broker.log.LogConfig;

/**
 * Validates topic configs and computes the {@link ConfigRecord}s that change them. A topic's
 * settings are valid when {@link LogConfig} accepts them as a whole (so a combination is checked,
 * not only each value); the error is INVALID_CONFIG with {@link LogConfig}'s message, which names
 * the setting. Group settings ({@link GroupConfigRecord}) are validated by the {@link GroupConfigPolicy} the
 * broker gives. Only settings that actually change produce records.
 *
 * <p>Stateless apart from its immutable inputs; thread-safe. It reads the image it is given and
 * never changes it.
 */
final class ConfigControlManager {

    /**
     * @return NONE when {@code configs} are valid settings for a new topic, else INVALID_CONFIG
     */
    ApiError validateNewTopicConfigs(String topic, Map<String, String> configs) {
        for (Map.Entry<String, String> entry : configs.entrySet()) {
            if (entry.getValue() == null) {
                return new ApiError(Errors.INVALID_CONFIG, "Topic " + topic + ": config '" + entry.getKey()
                        + "' has a null value; leave it out to use the default");
            }
        }
        return validate(topic, configs).orElse(ApiError.NONE);
    }

    /** The records that give a new topic its settings. */
    List<MetadataRecord> newTopicRecords(String topic, Map<String, String> configs) {
        List<MetadataRecord> records = new ArrayList<>(configs.size());
        new TreeSet<>(configs.keySet()).forEach(name -> records.add(new ConfigRecord(topic, name, configs.get(name))));
        return records;
    }

    ControllerResult<Map<String, ApiError>> handleAlterConfigs(MetadataImage image,
                                                               Map<String, TopicConfigChange> changes) {
        Map<String, ApiError> response = new LinkedHashMap<>();
        List<MetadataRecord> records = new ArrayList<>();
        for (Map.Entry<String, TopicConfigChange> entry : changes.entrySet()) {
            String topic = entry.getKey();
            Optional<TopicImage> existing = image.topic(topic);
            if (existing.isEmpty()) {
                response.put(topic, new ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION,
                        "Topic '" + topic + "' does not exist"));
                continue;
            }
            ApiError error = alterTopic(existing.get(), entry.getValue(), records);
            response.put(topic, error);
        }
        return new ControllerResult<>(records, response);
    }

    /** Computes the records of group setting changes, each group validated as a whole by {@code policy}. */
    ControllerResult<Map<String, ApiError>> handleAlterGroupConfigs(MetadataImage image, GroupConfigPolicy policy,
                                                                    Map<String, GroupConfigChange> changes) {
        Map<String, ApiError> response = new LinkedHashMap<>();
        List<MetadataRecord> records = new ArrayList<>();
        for (Map.Entry<String, GroupConfigChange> entry : changes.entrySet()) {
            String groupId = entry.getKey();
            GroupConfigChange change = entry.getValue();
            if (groupId == null || groupId.isEmpty()) {
                response.put(groupId, new ApiError(Errors.INVALID_GROUP_ID, "The group id must not be empty"));
                continue;
            }
            Map<String, String> set = change.set() == null ? Map.of() : change.set();
            Collection<String> delete = change.delete() == null ? List.of() : change.delete();
            Optional<String> both = delete.stream().filter(set::containsKey).findFirst();
            if (both.isPresent()) {
                response.put(groupId, new ApiError(Errors.INVALID_CONFIG, "Group " + groupId + ": config '"
                        + both.get() + "' is both set and deleted"));
                continue;
            }
            Map<String, String> before = image.groupConfigs(groupId);
            Map<String, String> after;
            try {
                after = policy.apply(groupId, before, set, delete);
            } catch (org.apache.kafka.common.errors.ApiException e) {
                response.put(groupId, ApiError.fromThrowable(e));
                continue;
            }
            TreeSet<String> names = new TreeSet<>(before.keySet());
            names.addAll(after.keySet());
            for (String name : names) {
                if (!Objects.equals(before.get(name), after.get(name))) {
                    records.add(new GroupConfigRecord(groupId, name, after.get(name)));
                }
            }
            response.put(groupId, ApiError.NONE);
        }
        return new ControllerResult<>(records, response);
    }

    private ApiError alterTopic(TopicImage topic, TopicConfigChange change, List<MetadataRecord> records) {
        Map<String, String> set = change.set() == null ? Map.of() : change.set();
        Collection<String> delete = change.delete() == null ? List.of() : change.delete();
        for (Map.Entry<String, String> entry : set.entrySet()) {
            if (entry.getValue() == null) {
                return new ApiError(Errors.INVALID_CONFIG, "Topic " + topic.name() + ": config '"
                        + entry.getKey() + "' has a null value; delete it to return to the default");
            }
        }
        for (String name : delete) {
            if (set.containsKey(name)) {
                return new ApiError(Errors.INVALID_CONFIG, "Topic " + topic.name() + ": config '" + name
                        + "' is both set and deleted");
            }
            if (!LogConfig.DEFINITION.names().contains(name)) {
                return new ApiError(Errors.INVALID_CONFIG, "Topic " + topic.name() + ": unknown config '" + name
                        + "' cannot be deleted; known settings are " + new TreeSet<>(LogConfig.DEFINITION.names()));
            }
        }
        Map<String, String> target = new HashMap<>(change.replace() ? Map.of() : topic.configs());
        delete.forEach(target::remove);
        target.putAll(set);
        Optional<ApiError> invalid = validate(topic.name(), target);
        if (invalid.isPresent()) {
            return invalid.get();
        }
        if (!topic.partitions().isEmpty()) {
            int replicationFactor = topic.partitions().values().iterator().next().targetReplicas().size();
            invalid = checkMinInsyncReplicas(topic.name(), target, replicationFactor);
            if (invalid.isPresent()) {
                return invalid.get();
            }
        }
        TreeSet<String> names = new TreeSet<>(topic.configs().keySet());
        names.addAll(target.keySet());
        for (String name : names) {
            String before = topic.configs().get(name);
            String after = target.get(name);
            if (!Objects.equals(before, after)) {
                records.add(new ConfigRecord(topic.name(), name, after));
            }
        }
        return ApiError.NONE;
    }

    /**
     * {@code min.insync.replicas} above the replication factor would make every {@code acks=all} write
     * fail: INVALID_CONFIG naming the setting and both numbers. Call after {@link LogConfig} accepted
     * the settings.
     */
    static Optional<ApiError> checkMinInsyncReplicas(String topic, Map<String, String> configs,
                                                     int replicationFactor) {
        int minInsync = new LogConfig(configs).getInt(LogConfig.MIN_INSYNC_REPLICAS);
        if (minInsync > replicationFactor) {
            return Optional.of(new ApiError(Errors.INVALID_CONFIG, "Topic " + topic + ": "
                    + LogConfig.MIN_INSYNC_REPLICAS + " " + minInsync + " is larger than the replication factor "
                    + replicationFactor));
        }
        return Optional.empty();
    }

    private static Optional<ApiError> validate(String topic, Map<String, String> configs) {
        try {
            new LogConfig(configs);
            return Optional.empty();
        } catch (ConfigException e) {
            return Optional.of(new ApiError(Errors.INVALID_CONFIG, "Topic " + topic + ": " + e.getMessage()));
        }
    }
}
