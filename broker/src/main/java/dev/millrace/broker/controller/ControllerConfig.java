package dev.millrace.broker.controller;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;

/**
 * The settings of one controller voter, validated on construction with messages that name the
 * setting. A voter is identified in the quorum by its {@code host:port}, which must therefore stay
 * the same across restarts; {@code voters} lists every voter's {@code host:port}, this one's included,
 * with the same list on every voter. Use IP addresses, not host names: jraft compares peers as text.
 *
 * @param nodeId                   this node's id, used in logs and thread names
 * @param dataDir                  holds the raft log, raft metadata and snapshots; created if missing
 * @param host                     the address the quorum port binds to and the voters know this node by
 * @param port                     the quorum port
 * @param voters                   every voter as {@code host:port}; one entry for embedded mode
 * @param defaultNumPartitions     for topics created with -1 partitions
 * @param defaultReplicationFactor for topics created with replication factor -1
 * @param brokerIds                the brokers replicas are placed on
 * @param electionTimeout          a follower that hears no leader for this long starts an election
 * @param snapshotInterval         how often to snapshot the image (only if it changed)
 * @param startTimeout             how long {@link RaftController#start()} waits for a leader and catch-up
 * @param requestTimeout           how long a request waits for its records to be committed and applied
 */
public record ControllerConfig(int nodeId, Path dataDir, String host, int port, List<String> voters,
                               int defaultNumPartitions, short defaultReplicationFactor, List<Integer> brokerIds,
                               Duration electionTimeout, Duration snapshotInterval, Duration startTimeout,
                               Duration requestTimeout) {

    public ControllerConfig {
        Objects.requireNonNull(dataDir, "dataDir");
        Objects.requireNonNull(host, "host");
        voters = List.copyOf(Objects.requireNonNull(voters, "voters"));
        brokerIds = List.copyOf(Objects.requireNonNull(brokerIds, "brokerIds"));
        check(nodeId >= 0, "nodeId must be at least 0, got " + nodeId);
        check(!host.isBlank() && !host.equals("0.0.0.0") && !host.equals("::"),
                "host must be a concrete address the other voters can reach, got '" + host + "'");
        check(port > 0 && port <= 65535, "port must be in 1..65535, got " + port);
        check(!voters.isEmpty(), "voters must list at least this voter");
        for (String voter : voters) {
            int colon = voter.lastIndexOf(':');
            check(colon > 0 && isPort(voter.substring(colon + 1)),
                    "voters entries must be host:port, got '" + voter + "'");
        }
        check(new HashSet<>(voters).size() == voters.size(), "voters must not repeat an entry, got " + voters);
        check(voters.contains(address(host, port)),
                "voters must contain this voter's own address " + address(host, port) + ", got " + voters);
        check(defaultNumPartitions >= 1, "defaultNumPartitions must be at least 1, got " + defaultNumPartitions);
        check(defaultReplicationFactor >= 1,
                "defaultReplicationFactor must be at least 1, got " + defaultReplicationFactor);
        check(!brokerIds.isEmpty(), "brokerIds must list at least one broker");
        check(new HashSet<>(brokerIds).size() == brokerIds.size(), "brokerIds must not repeat an id, got " + brokerIds);
        check(brokerIds.stream().allMatch(id -> id >= 0), "brokerIds must be at least 0, got " + brokerIds);
        checkMillis(electionTimeout, "electionTimeout", 1);
        checkMillis(snapshotInterval, "snapshotInterval", 1000);
        checkMillis(startTimeout, "startTimeout", 1);
        checkMillis(requestTimeout, "requestTimeout", 1);
    }

    /**
     * Embedded mode: the only voter, in the broker's process, placing replicas on broker {@code nodeId};
     * 1 partition and replication factor 1 by default, 1 s election timeout, hourly snapshots, 30 s to
     * start and per request.
     */
    public static ControllerConfig singleVoter(int nodeId, Path dataDir, String host, int port) {
        return new ControllerConfig(nodeId, dataDir, host, port, List.of(address(host, port)), 1, (short) 1,
                List.of(nodeId), Duration.ofSeconds(1), Duration.ofHours(1), Duration.ofSeconds(30),
                Duration.ofSeconds(30));
    }

    public ControllerConfig withVoters(List<String> newVoters) {
        return new ControllerConfig(nodeId, dataDir, host, port, newVoters, defaultNumPartitions,
                defaultReplicationFactor, brokerIds, electionTimeout, snapshotInterval, startTimeout, requestTimeout);
    }

    public ControllerConfig withBrokerIds(List<Integer> newBrokerIds) {
        return new ControllerConfig(nodeId, dataDir, host, port, voters, defaultNumPartitions,
                defaultReplicationFactor, newBrokerIds, electionTimeout, snapshotInterval, startTimeout,
                requestTimeout);
    }

    public ControllerConfig withTopicDefaults(int numPartitions, short replicationFactor) {
        return new ControllerConfig(nodeId, dataDir, host, port, voters, numPartitions, replicationFactor,
                brokerIds, electionTimeout, snapshotInterval, startTimeout, requestTimeout);
    }

    public ControllerConfig withElectionTimeout(Duration timeout) {
        return new ControllerConfig(nodeId, dataDir, host, port, voters, defaultNumPartitions,
                defaultReplicationFactor, brokerIds, timeout, snapshotInterval, startTimeout, requestTimeout);
    }

    public ControllerConfig withSnapshotInterval(Duration interval) {
        return new ControllerConfig(nodeId, dataDir, host, port, voters, defaultNumPartitions,
                defaultReplicationFactor, brokerIds, electionTimeout, interval, startTimeout, requestTimeout);
    }

    public ControllerConfig withStartTimeout(Duration timeout) {
        return new ControllerConfig(nodeId, dataDir, host, port, voters, defaultNumPartitions,
                defaultReplicationFactor, brokerIds, electionTimeout, snapshotInterval, timeout, requestTimeout);
    }

    /** This voter's {@code host:port}. */
    public String address() {
        return address(host, port);
    }

    private static String address(String host, int port) {
        return host + ":" + port;
    }

    private static boolean isPort(String text) {
        try {
            int port = Integer.parseInt(text);
            return port > 0 && port <= 65535;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    private static void checkMillis(Duration value, String name, long minMs) {
        Objects.requireNonNull(value, name);
        check(value.toMillis() >= minMs && value.toMillis() <= Integer.MAX_VALUE,
                name + " must be between " + minMs + " ms and " + Integer.MAX_VALUE + " ms, got " + value);
    }

    private static void check(boolean condition, String message) {
        if (!condition) {
            throw new IllegalArgumentException("Invalid controller config: " + message);
        }
    }
}
