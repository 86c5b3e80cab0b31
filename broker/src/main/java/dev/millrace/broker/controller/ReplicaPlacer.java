package dev.millrace.broker.controller;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.kafka.common.errors.InvalidReplicationFactorException;

import dev.millrace.broker.controller.MetadataImage.BrokerImage;

/**
 * Chooses the replicas of new partitions over the usable brokers (the image's unfenced ones).
 *
 * <p>The brokers are first put in one placement order. Without racks that is by id. When any broker
 * has a rack, the order alternates racks: racks sorted by name (brokers without a rack form one more
 * rack, sorted first), brokers within a rack by id, then the first broker of every rack, the second of
 * every rack, and so on:
 * <pre>
 *   racks  a: 1 4    b: 2 5    c: 3        order: 1 2 3 4 5   (a b c a b)
 * </pre>
 * Partition {@code p} takes {@code replicationFactor} consecutive brokers of that order starting at
 * {@code p mod n}: its leader (the first replica) rotates over every broker, so leadership spreads
 * evenly, and consecutive replicas sit on different racks wherever the racks hold equally many
 * brokers. Partitions added later continue the rotation where the topic's existing partitions left off.
 *
 * <p>Immutable and thread-safe.
 */
final class ReplicaPlacer {

    private final List<Integer> order;

    ReplicaPlacer(List<BrokerImage> usable) {
        this.order = placementOrder(usable);
    }

    /** Places over the image's unfenced brokers. */
    static ReplicaPlacer of(MetadataImage image) {
        return new ReplicaPlacer(image.brokers().values().stream()
                .filter(b -> b.state() == BrokerState.UNFENCED).toList());
    }

    int brokerCount() {
        return order.size();
    }

    /** The brokers in placement order. */
    List<Integer> order() {
        return order;
    }

    /**
     * @param firstPartition    the number of the first new partition
     * @param count             how many partitions to place
     * @param replicationFactor replicas per partition
     * @return one replica list per new partition, leader first
     * @throws InvalidReplicationFactorException when there are fewer usable brokers than replicas or the
     *         factor is below 1
     */
    List<List<Integer>> place(int firstPartition, int count, int replicationFactor) {
        if (replicationFactor < 1) {
            throw new InvalidReplicationFactorException("Replication factor must be at least 1, got "
                    + replicationFactor);
        }
        if (replicationFactor > order.size()) {
            throw new InvalidReplicationFactorException(tooFewBrokers(replicationFactor, order.size()));
        }
        List<List<Integer>> assignments = new ArrayList<>(count);
        for (int p = firstPartition; p < firstPartition + count; p++) {
            List<Integer> replicas = new ArrayList<>(replicationFactor);
            for (int r = 0; r < replicationFactor; r++) {
                replicas.add(order.get((p + r) % order.size()));
            }
            assignments.add(List.copyOf(replicas));
        }
        return assignments;
    }

    static String tooFewBrokers(int replicationFactor, int brokers) {
        return "Replication factor " + replicationFactor + " is larger than the " + brokers
                + " available (registered and unfenced) broker(s)";
    }

    private static List<Integer> placementOrder(List<BrokerImage> usable) {
        List<BrokerImage> byId = usable.stream().sorted(Comparator.comparingInt(BrokerImage::id)).toList();
        if (byId.stream().allMatch(b -> b.rack() == null)) {
            return byId.stream().map(BrokerImage::id).toList();
        }
        Map<String, List<Integer>> racks = new TreeMap<>(Comparator.nullsFirst(Comparator.<String>naturalOrder()));
        for (BrokerImage broker : byId) {
            racks.computeIfAbsent(broker.rack(), r -> new ArrayList<>()).add(broker.id());
        }
        List<Integer> order = new ArrayList<>(byId.size());
        for (int round = 0; order.size() < byId.size(); round++) {
            for (List<Integer> rack : racks.values()) {
                if (round < rack.size()) {
                    order.add(rack.get(round));
                }
            }
        }
        return List.copyOf(order);
    }
}
