package dev.millrace.broker.controller;

import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.errors.InvalidReplicationFactorException;

/**
 * Chooses the replicas of new partitions: round-robin over the broker ids, partition {@code p}
 * starting at broker {@code p mod n}, so leadership (the first replica) spreads evenly over the
 * brokers and a topic's partitions {@code p} and {@code p + n} share their replica list. Partitions
 * added later continue the rotation where the topic's existing partitions left off.
 *
 * <p>Immutable and thread-safe.
 */
final class ReplicaPlacer {

    private final List<Integer> brokerIds;

    ReplicaPlacer(List<Integer> brokerIds) {
        if (brokerIds.isEmpty()) {
            throw new IllegalArgumentException("brokerIds must not be empty");
        }
        this.brokerIds = List.copyOf(brokerIds);
    }

    int brokerCount() {
        return brokerIds.size();
    }

    /**
     * @param firstPartition    the number of the first new partition
     * @param count             how many partitions to place
     * @param replicationFactor replicas per partition
     * @return one replica list per new partition, leader first
     * @throws InvalidReplicationFactorException when there are fewer brokers than replicas or the factor is below 1
     */
    List<List<Integer>> place(int firstPartition, int count, int replicationFactor) {
        if (replicationFactor < 1) {
            throw new InvalidReplicationFactorException("Replication factor must be at least 1, got "
                    + replicationFactor);
        }
        if (replicationFactor > brokerIds.size()) {
            throw new InvalidReplicationFactorException("Replication factor " + replicationFactor
                    + " is larger than the " + brokerIds.size() + " available broker(s)");
        }
        List<List<Integer>> assignments = new ArrayList<>(count);
        for (int p = firstPartition; p < firstPartition + count; p++) {
            List<Integer> replicas = new ArrayList<>(replicationFactor);
            for (int r = 0; r < replicationFactor; r++) {
                replicas.add(brokerIds.get((p + r) % brokerIds.size()));
            }
            assignments.add(List.copyOf(replicas));
        }
        return assignments;
    }
}
