package dev.millrace.broker.controller;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;

import dev.millrace.broker.controller.MetadataImage.BrokerImage;
import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.controller.MetadataImage.TopicImage;
import dev.millrace.broker.controller.MetadataRecord.BrokerStateRecord;
import dev.millrace.broker.controller.MetadataRecord.PartitionRecord;

/**
 * The working view of one controller event: an image plus the broker states and partitions the
 * event has changed so far, and the records that make those changes. Later steps of the same event
 * see earlier ones (fencing a second broker considers the first one fenced), while the image itself
 * never changes: the records take effect when replayed.
 *
 * <p>Not thread-safe: one per event, on the event thread.
 */
final class ClusterDelta {

    private final MetadataImage image;
    private final Map<Integer, BrokerState> states = new HashMap<>();
    private final Map<TopicIdPartition, PartitionImage> partitions = new HashMap<>();
    private final List<MetadataRecord> records = new ArrayList<>();

    ClusterDelta(MetadataImage image) {
        this.image = image;
    }

    MetadataImage image() {
        return image;
    }

    /** The broker's state as this event leaves it, or null when it is not registered. */
    BrokerState state(int brokerId) {
        BrokerState changed = states.get(brokerId);
        if (changed != null) {
            return changed;
        }
        BrokerImage broker = image.brokers().get(brokerId);
        return broker == null ? null : broker.state();
    }

    /** Whether the broker may lead or join an ISR: registered and unfenced. */
    boolean isUsable(int brokerId) {
        return state(brokerId) == BrokerState.UNFENCED;
    }

    /** Records the broker's new state (for its current registration's epoch). */
    void setState(BrokerImage broker, BrokerState state) {
        states.put(broker.id(), state);
        records.add(new BrokerStateRecord(broker.id(), broker.epoch(), state));
    }

    /** Notes that a new registration of {@code brokerId} starts fenced, without a record of its own. */
    void noteRegistration(MetadataRecord registration, int brokerId) {
        states.put(brokerId, BrokerState.FENCED);
        records.add(registration);
    }

    void add(MetadataRecord record) {
        records.add(record);
    }

    /** The partition as this event leaves it. */
    PartitionImage partition(TopicImage topic, PartitionImage base) {
        PartitionImage changed = partitions.get(key(topic.topicId(), base.partition()));
        return changed == null ? base : changed;
    }

    /** Records the partition's new state. */
    void putPartition(Uuid topicId, PartitionImage partition) {
        partitions.put(key(topicId, partition.partition()), partition);
        records.add(new PartitionRecord(topicId, partition.partition(), partition.replicas(), partition.isr(),
                partition.leader(), partition.leaderEpoch(), partition.partitionEpoch(), partition.addingReplicas(),
                partition.removingReplicas()));
    }

    /** Visits every partition of every topic in its current state, topics by name, partitions by number. */
    void forEachPartition(BiConsumer<TopicImage, PartitionImage> visitor) {
        for (TopicImage topic : image.topics().values()) {
            for (PartitionImage base : topic.partitions().values()) {
                visitor.accept(topic, partition(topic, base));
            }
        }
    }

    List<MetadataRecord> records() {
        return List.copyOf(records);
    }

    private static TopicIdPartition key(Uuid topicId, int partition) {
        return new TopicIdPartition(topicId, partition, null);
    }
}
