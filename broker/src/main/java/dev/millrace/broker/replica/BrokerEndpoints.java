package dev.millrace.broker.replica;

import java.net.InetSocketAddress;
import java.util.Optional;

/**
 * Where other brokers listen for the Kafka protocol, from the cluster metadata: followers connect there to fetch
 * from the leader, and NOT_LEADER_OR_FOLLOWER answers name the leader's endpoint (KIP-951).
 *
 * <p>Implementations are thread-safe.
 */
@FunctionalInterface
public interface BrokerEndpoints {

    /** The Kafka listener of {@code brokerId}; empty when the metadata does not know the broker (or it is fenced). */
    Optional<InetSocketAddress> endpoint(int brokerId);

    /** No other broker is known (a broker that runs alone). */
    BrokerEndpoints NONE = brokerId -> Optional.empty();
}
