package dev.millrace.broker.controller;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.Uuid;

import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.controller.MetadataRecord.BrokerRegistrationRecord;
import dev.millrace.broker.controller.MetadataRecord.BrokerStateRecord;
import dev.millrace.broker.controller.MetadataRecord.ClusterIdRecord;
import dev.millrace.broker.controller.MetadataRecord.PartitionRecord;
import dev.millrace.broker.controller.MetadataRecord.TopicRecord;

/** Images for unit tests, built by replaying records as the quorum would. */
final class ImageFixtures {

    static final String CLUSTER_ID = "test-cluster-id";

    private ImageFixtures() {
    }

    /** A cluster with the given brokers registered (epoch = 100 + id, no rack) and unfenced. */
    static MetadataImage withUnfencedBrokers(int... ids) {
        List<MetadataRecord> records = new ArrayList<>();
        records.add(new ClusterIdRecord(CLUSTER_ID));
        for (int id : ids) {
            records.addAll(unfencedBroker(id, null));
        }
        return replay(MetadataImage.EMPTY, records);
    }

    /** The registration and unfencing of one broker, epoch 100 + id, incarnation (0, id). */
    static List<MetadataRecord> unfencedBroker(int id, String rack) {
        return List.of(new BrokerRegistrationRecord(id, new Uuid(0, id), 100 + id, "127.0.0.1", 9000 + id, rack),
                new BrokerStateRecord(id, 100 + id, BrokerState.UNFENCED));
    }

    /** Adds topic {@code name} (id (1, n) for the nth topic) with partitions given as replicas, isr, leader. */
    static MetadataImage withTopic(MetadataImage image, String name, Uuid topicId, List<PartitionImage> partitions) {
        List<MetadataRecord> records = new ArrayList<>();
        records.add(new TopicRecord(name, topicId));
        for (PartitionImage p : partitions) {
            records.add(new PartitionRecord(topicId, p.partition(), p.replicas(), p.isr(), p.leader(), p.leaderEpoch(),
                    p.partitionEpoch()));
        }
        return replay(image, records);
    }

    static MetadataImage replay(MetadataImage image, List<? extends MetadataRecord> records) {
        MetadataImageBuilder builder = new MetadataImageBuilder(image);
        records.forEach(builder::replay);
        return builder.build(image.appliedIndex() + 1);
    }

    static PartitionImage partition(int partition, List<Integer> replicas, List<Integer> isr, int leader) {
        return new PartitionImage(partition, replicas, isr, leader, 0, 0);
    }

    static Map<Integer, PartitionImage> partitions(MetadataImage image, String topic) {
        return image.topic(topic).orElseThrow().partitions();
    }
}
