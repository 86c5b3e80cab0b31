package dev.millrace.broker.controller;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.common.Uuid;

/**
 * An immutable view of the cluster metadata at one applied quorum index.
 *
 * @param appliedIndex   the index of the last quorum log entry reflected here
 * @param topics         by name
 * @param nextProducerId the first producer id not yet allocated in a block; every id below it is
 *                       taken ({@link MetadataRecord.ProducerIdsRecord}); starts at 0
 */
public record MetadataImage(long appliedIndex, Map<String, TopicImage> topics, long nextProducerId) {

    public static final MetadataImage EMPTY = new MetadataImage(0, Map.of());

    /** An image in which no producer id has been allocated yet. */
    public MetadataImage(long appliedIndex, Map<String, TopicImage> topics) {
        this(appliedIndex, topics, 0);
    }

    public Optional<TopicImage> topic(String name) {
        return Optional.ofNullable(topics.get(name));
    }

    /** The topic with {@code topicId}, from an index built once per image ({@link TopicIdIndex}). */
    public Optional<TopicImage> topic(Uuid topicId) {
        return Optional.ofNullable(TopicIdIndex.of(this).get(topicId));
    }

    /**
     * A topic.
     *
     * @param configs only the settings set for this topic (defaults are not listed)
     */
    public record TopicImage(String name, Uuid topicId, Map<Integer, PartitionImage> partitions,
                             Map<String, String> configs) {
    }

    /**
     * A partition's replica assignment and leadership. {@code leaderEpoch} grows with every leader
     * change; {@code partitionEpoch} with every change to the partition's record.
     */
    public record PartitionImage(int partition, List<Integer> replicas, List<Integer> isr, int leader,
                                 int leaderEpoch, int partitionEpoch) {
    }
}
