package dev.millrace.broker.coordinator;

import java.util.Optional;

import org.apache.kafka.common.Node;

/**
 * Where the coordinator of one partition of an internal topic runs: the broker that leads that partition, with its
 * advertised endpoint; empty while the partition has no live leader (clients then get COORDINATOR_NOT_AVAILABLE and
 * ask again). Thread-safe; reads the latest metadata.
 */
@FunctionalInterface
public interface CoordinatorLocator {

    Optional<Node> leaderOf(int partition);
}
