package dev.millrace.broker.controller;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;

import dev.millrace.broker.controller.Controller.NewTopic;
import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.controller.MetadataImage.TopicImage;
import dev.millrace.broker.controller.MetadataRecord.PartitionRecord;
import dev.millrace.broker.controller.MetadataRecord.RemoveTopicRecord;
import dev.millrace.broker.controller.MetadataRecord.TopicRecord;

/**
 * Validates topic and partition requests against an image and computes the records that carry them
 * out, with one {@link ApiError} per topic. A request's topics are independent: the valid ones
 * produce records, the others an error, and entities later in one request see the effect of
 * earlier ones (a second create of the same name collides with the first).
 *
 * <p>New partitions get replicas from {@link ReplicaPlacer} over the image's unfenced brokers (none
 * registered: INVALID_REPLICATION_FACTOR), or those the request assigns (Kafka's manual assignment: partitions
 * 0..n-1, each a non-empty list of distinct registered brokers, all lists of one length, with the partition count
 * and replication factor left at -1; otherwise INVALID_REQUEST or INVALID_REPLICA_ASSIGNMENT naming the partition
 * and broker). The first replica leads, the ISR is every replica (of an assignment: every unfenced one, the first
 * of them leading), and the leader and partition epochs start at 0. A topic's {@code min.insync.replicas} may not exceed its
 * replication factor (INVALID_CONFIG naming the setting).
 *
 * <p>Never changes the image it is given; results take effect only when the records are replayed
 * ({@link MetadataImageBuilder}). Thread-safe as long as the id supplier is.
 */
final class TopicControlManager {

    /** Most partitions one request may add to one topic, to keep a quorum log entry bounded. */
    static final int MAX_NEW_PARTITIONS_PER_TOPIC = 10_000;

    private final ConfigControlManager configs;
    private final int defaultNumPartitions;
    private final short defaultReplicationFactor;
    private final Supplier<Uuid> idGenerator;

    TopicControlManager(ConfigControlManager configs, int defaultNumPartitions, short defaultReplicationFactor,
                        Supplier<Uuid> idGenerator) {
        this.configs = configs;
        this.defaultNumPartitions = defaultNumPartitions;
        this.defaultReplicationFactor = defaultReplicationFactor;
        this.idGenerator = idGenerator;
    }

    ControllerResult<Map<String, ApiError>> handleCreateTopics(MetadataImage image, List<NewTopic> topics) {
        Map<String, ApiError> response = new LinkedHashMap<>();
        List<MetadataRecord> records = new ArrayList<>();
        ReplicaPlacer placer = ReplicaPlacer.of(image);
        Set<String> seen = new HashSet<>();
        Set<String> duplicates = new HashSet<>();
        topics.forEach(t -> {
            if (!seen.add(t.name())) {
                duplicates.add(t.name());
            }
        });
        Map<String, String> namesByUnified = new HashMap<>();
        Set<Uuid> usedIds = new HashSet<>();
        for (TopicImage topic : image.topics().values()) {
            namesByUnified.put(Topic.unifyCollisionChars(topic.name()), topic.name());
            usedIds.add(topic.topicId());
        }
        for (NewTopic topic : topics) {
            if (duplicates.contains(topic.name())) {
                response.put(topic.name(), new ApiError(Errors.INVALID_REQUEST,
                        "Topic '" + topic.name() + "' appears more than once in the request"));
                continue;
            }
            ApiError error = validateNewTopic(topic, image, namesByUnified, placer);
            if (error.isFailure()) {
                response.put(topic.name(), error);
                continue;
            }
            Uuid topicId = newTopicId(usedIds);
            records.addAll(newTopicRecords(topic, topicId, image, placer));
            namesByUnified.put(Topic.unifyCollisionChars(topic.name()), topic.name());
            response.put(topic.name(), ApiError.NONE);
        }
        return new ControllerResult<>(records, response);
    }

    ControllerResult<Map<String, ApiError>> handleDeleteTopics(MetadataImage image, Collection<String> names) {
        Map<String, ApiError> response = new LinkedHashMap<>();
        List<MetadataRecord> records = new ArrayList<>();
        for (String name : new LinkedHashSet<>(names)) {
            Optional<TopicImage> topic = image.topic(name);
            if (topic.isEmpty()) {
                response.put(name, unknownTopic(name));
            } else {
                records.add(new RemoveTopicRecord(topic.get().topicId()));
                response.put(name, ApiError.NONE);
            }
        }
        return new ControllerResult<>(records, response);
    }

    ControllerResult<Map<String, ApiError>> handleCreatePartitions(MetadataImage image,
                                                                   Map<String, Integer> totalCounts) {
        Map<String, ApiError> response = new LinkedHashMap<>();
        List<MetadataRecord> records = new ArrayList<>();
        ReplicaPlacer placer = ReplicaPlacer.of(image);
        for (Map.Entry<String, Integer> entry : totalCounts.entrySet()) {
            String name = entry.getKey();
            Optional<TopicImage> topic = image.topic(name);
            if (topic.isEmpty()) {
                response.put(name, unknownTopic(name));
                continue;
            }
            response.put(name, addPartitions(topic.get(), entry.getValue(), records, placer));
        }
        return new ControllerResult<>(records, response);
    }

    private ApiError validateNewTopic(NewTopic topic, MetadataImage image, Map<String, String> namesByUnified,
                                      ReplicaPlacer placer) {
        try {
            Topic.validate(topic.name());
        } catch (InvalidTopicException e) {
            return new ApiError(Errors.INVALID_TOPIC_EXCEPTION, e.getMessage());
        }
        if (image.topic(topic.name()).isPresent()) {
            return new ApiError(Errors.TOPIC_ALREADY_EXISTS, "Topic '" + topic.name() + "' already exists");
        }
        String collision = namesByUnified.get(Topic.unifyCollisionChars(topic.name()));
        if (collision != null) {
            if (collision.equals(topic.name())) {
                return new ApiError(Errors.TOPIC_ALREADY_EXISTS, "Topic '" + topic.name() + "' already exists");
            }
            return new ApiError(Errors.INVALID_TOPIC_EXCEPTION, "Topic '" + topic.name()
                    + "' collides with existing topic '" + collision + "' ('.' and '_' are treated as the same)");
        }
        if (topic.numPartitions() < 1 && topic.numPartitions() != -1) {
            return new ApiError(Errors.INVALID_PARTITIONS, "Number of partitions must be at least 1, or -1 for "
                    + "the default (" + defaultNumPartitions + "); got " + topic.numPartitions());
        }
        if (numPartitions(topic) > MAX_NEW_PARTITIONS_PER_TOPIC) {
            return new ApiError(Errors.INVALID_PARTITIONS, "Number of partitions " + numPartitions(topic)
                    + " is more than the " + MAX_NEW_PARTITIONS_PER_TOPIC + " one request may create");
        }
        if (!topic.assignments().isEmpty()) {
            ApiError invalid = validateAssignments(topic, image);
            if (invalid.isFailure()) {
                return invalid;
            }
        } else if (topic.replicationFactor() < 1 && topic.replicationFactor() != -1) {
            return new ApiError(Errors.INVALID_REPLICATION_FACTOR, "Replication factor must be at least 1, or -1 "
                    + "for the default (" + defaultReplicationFactor + "); got " + topic.replicationFactor());
        }
        if (topic.assignments().isEmpty() && replicationFactor(topic) > placer.brokerCount()) {
            return new ApiError(Errors.INVALID_REPLICATION_FACTOR,
                    ReplicaPlacer.tooFewBrokers(replicationFactor(topic), placer.brokerCount()));
        }
        ApiError invalid = configs.validateNewTopicConfigs(topic.name(), configsOf(topic));
        if (invalid.isFailure()) {
            return invalid;
        }
        return ConfigControlManager.checkMinInsyncReplicas(topic.name(), configsOf(topic), replicationFactor(topic))
                .orElse(ApiError.NONE);
    }

    /** A manual assignment as Kafka accepts it (see the class comment), or the error naming what is wrong. */
    private static ApiError validateAssignments(NewTopic topic, MetadataImage image) {
        if (topic.numPartitions() != -1 || topic.replicationFactor() != -1) {
            return new ApiError(Errors.INVALID_REQUEST, "Topic '" + topic.name() + "': give either replica "
                    + "assignments or a partition count and replication factor, not both (got " + topic.numPartitions()
                    + " partitions, replication factor " + topic.replicationFactor() + " and assignments for "
                    + topic.assignments().size() + " partitions)");
        }
        int size = -1;
        for (int p = 0; p < topic.assignments().size(); p++) {
            List<Integer> replicas = topic.assignments().get(p);
            if (replicas == null) {
                return new ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, "Topic '" + topic.name() + "': the assigned "
                        + "partitions must be numbered 0 to " + (topic.assignments().size() - 1) + " with none "
                        + "missing; got " + new TreeSet<>(topic.assignments().keySet()));
            }
            if (replicas.isEmpty() || new HashSet<>(replicas).size() != replicas.size()) {
                return new ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, "Topic '" + topic.name() + "': the replicas "
                        + replicas + " of partition " + p + " must be a non-empty list of distinct broker ids");
            }
            size = p == 0 ? replicas.size() : size;
            if (replicas.size() != size) {
                return new ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, "Topic '" + topic.name() + "': every "
                        + "partition needs the same number of replicas; partition " + p + " has " + replicas.size()
                        + ", partition 0 " + size);
            }
            for (int broker : replicas) {
                if (!image.brokers().containsKey(broker)) {
                    return new ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, "Topic '" + topic.name() + "': broker "
                            + broker + " in the replicas " + replicas + " of partition " + p + " is not registered");
                }
            }
            if (replicas.stream().noneMatch(image::isUnfenced)) {
                return new ApiError(Errors.INVALID_REPLICATION_FACTOR, "Topic '" + topic.name() + "': every broker "
                        + "in the replicas " + replicas + " of partition " + p + " is fenced; none could lead it");
            }
        }
        return ApiError.NONE;
    }

    private List<MetadataRecord> newTopicRecords(NewTopic topic, Uuid topicId, MetadataImage image,
                                                 ReplicaPlacer placer) {
        List<MetadataRecord> records = new ArrayList<>();
        records.add(new TopicRecord(topic.name(), topicId));
        records.addAll(configs.newTopicRecords(topic.name(), configsOf(topic)));
        if (!topic.assignments().isEmpty()) {
            for (int p = 0; p < topic.assignments().size(); p++) {
                // as assigned; the ISR and the leader are those that are unfenced (validated: at least one)
                List<Integer> replicas = topic.assignments().get(p);
                List<Integer> isr = replicas.stream().filter(image::isUnfenced).toList();
                records.add(new PartitionRecord(topicId, p, replicas, isr, isr.get(0), 0, 0));
            }
            return records;
        }
        List<List<Integer>> assignments = placer.place(0, numPartitions(topic), replicationFactor(topic));
        for (int p = 0; p < assignments.size(); p++) {
            records.add(newPartition(topicId, p, assignments.get(p)));
        }
        return records;
    }

    private ApiError addPartitions(TopicImage topic, Integer totalCount, List<MetadataRecord> records,
                                   ReplicaPlacer placer) {
        int current = topic.partitions().size();
        if (totalCount == null || totalCount <= current) {
            return new ApiError(Errors.INVALID_PARTITIONS, "Topic " + topic.name() + " has " + current
                    + " partitions, cannot reduce or keep the count: asked for " + totalCount);
        }
        if (totalCount - current > MAX_NEW_PARTITIONS_PER_TOPIC) {
            return new ApiError(Errors.INVALID_PARTITIONS, "Topic " + topic.name() + " has " + current
                    + " partitions; growing to " + totalCount + " adds more than the "
                    + MAX_NEW_PARTITIONS_PER_TOPIC + " partitions one request may create");
        }
        PartitionImage first = topic.partitions().get(0);
        int replicationFactor = first == null ? defaultReplicationFactor : first.targetReplicas().size();
        List<List<Integer>> assignments;
        try {
            assignments = placer.place(current, totalCount - current, replicationFactor);
        } catch (InvalidReplicationFactorException e) {
            return new ApiError(Errors.INVALID_REPLICATION_FACTOR, e.getMessage());
        }
        for (int i = 0; i < assignments.size(); i++) {
            records.add(newPartition(topic.topicId(), current + i, assignments.get(i)));
        }
        return ApiError.NONE;
    }

    private static PartitionRecord newPartition(Uuid topicId, int partition, List<Integer> replicas) {
        return new PartitionRecord(topicId, partition, replicas, replicas, replicas.get(0), 0, 0);
    }

    private Uuid newTopicId(Set<Uuid> usedIds) {
        Uuid id = idGenerator.get();
        while (!usedIds.add(id)) {
            id = idGenerator.get();
        }
        return id;
    }

    private int numPartitions(NewTopic topic) {
        if (!topic.assignments().isEmpty()) {
            return topic.assignments().size();
        }
        return topic.numPartitions() == -1 ? defaultNumPartitions : topic.numPartitions();
    }

    private int replicationFactor(NewTopic topic) {
        if (!topic.assignments().isEmpty()) {
            return topic.assignments().get(0).size(); // validated: every partition has as many
        }
        return topic.replicationFactor() == -1 ? defaultReplicationFactor : topic.replicationFactor();
    }

    private static Map<String, String> configsOf(NewTopic topic) {
        return topic.configs() == null ? Map.of() : topic.configs();
    }

    private static ApiError unknownTopic(String name) {
        return new ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, "Topic '" + name + "' does not exist");
    }
}
