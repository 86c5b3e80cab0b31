package dev.millrace.broker.controller;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.requests.ApiError;

/**
 * The cluster metadata service: topics, partitions (replicas, leader, leader epoch, ISR), topic
 * configs and producer-id blocks, kept as a replicated state machine. Each call validates on the
 * leader, commits records through the quorum and completes once they are applied; {@link #image()}
 * then reflects them.
 *
 * <p>Results are per entity ({@link ApiError} with Kafka's error code and a message that says what
 * was wrong), never one error for a whole batch. Thread-safe.
 */
public interface Controller extends AutoCloseable {

    /** Starts the quorum member and waits until this node can serve (leader elected, log replayed). */
    void start() throws Exception;

    /** The latest applied metadata; immutable. */
    MetadataImage image();

    /** Called on the applying thread after every change to the image, in order. */
    void registerListener(MetadataListener listener);

    /**
     * Creates topics. A partition count or replication factor of -1 takes the broker default.
     *
     * @return per topic name: NONE, TOPIC_ALREADY_EXISTS, INVALID_TOPIC_EXCEPTION, INVALID_PARTITIONS,
     *         INVALID_REPLICATION_FACTOR, INVALID_CONFIG, ...
     */
    CompletableFuture<Map<String, ApiError>> createTopics(List<NewTopic> topics, boolean validateOnly);

    /** @return per topic name: NONE or UNKNOWN_TOPIC_OR_PARTITION, ... */
    CompletableFuture<Map<String, ApiError>> deleteTopics(Collection<String> names);

    /** Grows topics to the given total partition counts; @return per topic name. */
    CompletableFuture<Map<String, ApiError>> createPartitions(Map<String, Integer> totalCounts, boolean validateOnly);

    /**
     * Changes topic configs: {@code set} entries are set, {@code delete} names return to the default.
     * With {@code replace} every setting not in {@code set} returns to its default (legacy AlterConfigs).
     *
     * @return per topic name: NONE, UNKNOWN_TOPIC_OR_PARTITION, INVALID_CONFIG (naming the setting)
     */
    CompletableFuture<Map<String, ApiError>> alterTopicConfigs(Map<String, TopicConfigChange> changes,
                                                               boolean validateOnly);

    /**
     * Allocates the next block of {@link ProducerIdBlock#BLOCK_SIZE} consecutive producer ids to a
     * broker (Kafka's AllocateProducerIds). No id is ever in two blocks, also across restarts and
     * leader changes. The future fails with
     * {@link org.apache.kafka.common.errors.NotControllerException} when this node is not the active
     * controller, or with another {@link org.apache.kafka.common.errors.ApiException}.
     */
    CompletableFuture<ProducerIdBlock> allocateProducerIds(int brokerId);

    /** A topic to create. */
    record NewTopic(String name, int numPartitions, short replicationFactor, Map<String, String> configs) {
    }

    /** Config changes for one topic. */
    record TopicConfigChange(Map<String, String> set, Collection<String> delete, boolean replace) {
    }
}
