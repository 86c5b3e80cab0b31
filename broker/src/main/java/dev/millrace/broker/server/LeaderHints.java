package dev.millrace.broker.server;

import java.net.InetSocketAddress;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import org.apache.kafka.common.message.ProduceResponseData;

import dev.millrace.broker.replica.BrokerEndpoints;

/**
 * The new-leader hints of KIP-951 for one response: a partition answered NOT_LEADER_OR_FOLLOWER names the leader this
 * broker knows of, and the response lists that leader's endpoint so that the client moves there without a metadata
 * refresh. A leader whose endpoint is unknown is not named.
 *
 * <p>Not thread-safe: one per response, on its request thread.
 */
final class LeaderHints {

    record Leader(int leaderId, int leaderEpoch) {
    }

    private final BrokerEndpoints endpoints;
    private final Map<Integer, InetSocketAddress> nodes = new TreeMap<>();

    LeaderHints(BrokerEndpoints endpoints) {
        this.endpoints = endpoints;
    }

    /** The leader of {@code partition} as this broker knows it, if it is another broker with a known endpoint. */
    Optional<Leader> currentLeader(Partition partition) {
        int leaderId = partition.leaderId();
        if (leaderId < 0 || partition.isLeader()) {
            return Optional.empty();
        }
        Optional<InetSocketAddress> endpoint = endpoints.endpoint(leaderId);
        endpoint.ifPresent(address -> nodes.put(leaderId, address));
        return endpoint.map(address -> new Leader(leaderId, partition.leaderEpoch()));
    }

    /** Lists the named leaders' endpoints in a Produce response (versions 10 and up). */
    void addTo(ProduceResponseData response) {
        nodes.forEach((id, address) -> response.nodeEndpoints().add(new ProduceResponseData.NodeEndpoint()
                .setNodeId(id).setHost(address.getHostString()).setPort(address.getPort())));
    }
}
