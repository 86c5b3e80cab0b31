package dev.millrace.broker.controller;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The settings of one controller node, validated on construction with messages that name the
 * setting. A node is identified in the quorum by its {@code host:port}, which must therefore stay
 * the same across restarts; {@code voters} maps every voter's node id to its {@code host:port}, with
 * the same map on every node (Kafka's {@code controller.quorum.voters}). Use IP addresses, not host
 * names: jraft compares peers as text.
 *
 * <p>A node whose id is a key of {@code voters} is a voter and listens on its entry's address. A node
 * whose id is not is a <em>learner</em> ({@link #isLearner()}): it replicates and applies the metadata
 * log on its own {@code host:port} (which must not be a voter's) but never votes or leads; see
 * {@link MetadataQuorum}.
 *
 * <p>Replicas are placed on the registered, unfenced brokers of the image (there is no static broker
 * list any more): a topic created before any broker registered fails with INVALID_REPLICATION_FACTOR.
 *
 * @param nodeId                       this node's id; a key of {@code voters} for a voter, any other id for
 *                                     a learner
 * @param dataDir                      holds the raft log, raft metadata and snapshots; created if missing
 * @param host                         the address the quorum port binds to and the quorum knows this node by
 * @param port                         the quorum port
 * @param voters                       node id to {@code host:port} of every voter, in the configured order;
 *                                     one entry for embedded mode
 * @param defaultNumPartitions         for topics created with -1 partitions
 * @param defaultReplicationFactor     for topics created with replication factor -1
 * @param electionTimeout              a follower that hears no leader for this long starts an election
 * @param snapshotInterval             how often to snapshot the image (only if it changed)
 * @param startTimeout                 how long {@link RaftController#start()} waits for a leader and catch-up
 * @param requestTimeout               how long a request waits for its records to be committed and applied
 * @param initialClusterId             the cluster id the active controller commits when the image has none
 *                                     (once, at the start of its leadership); null: this voter never sets it
 * @param brokerSessionTimeout         a broker with no heartbeat for this long is fenced
 * @param uncleanLeaderElection        whether a partition with no live ISR member may elect any live replica
 *                                     ({@code unclean.leader.election.enable}), losing what only the ISR had
 * @param leaderImbalanceCheckInterval how often the active controller runs preferred-leader election for
 *                                     every partition; zero turns it off
 * @param brokerUnreachableGrace       how long a broker that looks dead keeps its session: one whose connection to
 *                                     the active controller closed, or the broker of the voter that led the quorum
 *                                     before this one; it heartbeats within this if it is alive
 *                                     ({@link Controller#brokerUnreachable})
 * @param quorumTls                    mutual TLS between the quorum's nodes; null for PLAINTEXT
 */
public record ControllerConfig(int nodeId, Path dataDir, String host, int port, Map<Integer, String> voters,
                               int defaultNumPartitions, short defaultReplicationFactor,
                               Duration electionTimeout, Duration snapshotInterval, Duration startTimeout,
                               Duration requestTimeout, String initialClusterId, Duration brokerSessionTimeout,
                               boolean uncleanLeaderElection, Duration leaderImbalanceCheckInterval,
                               Duration brokerUnreachableGrace, QuorumTls quorumTls) {

    /** The setting's name in the broker's configuration, used in messages. */
    public static final String VOTERS_SETTING = "controller.quorum.voters";

    public static final Duration DEFAULT_BROKER_SESSION_TIMEOUT = Duration.ofSeconds(9);
    public static final Duration DEFAULT_LEADER_IMBALANCE_CHECK_INTERVAL = Duration.ofSeconds(300);
    public static final Duration DEFAULT_BROKER_UNREACHABLE_GRACE = Duration.ofSeconds(1);

    public ControllerConfig {
        Objects.requireNonNull(dataDir, "dataDir");
        Objects.requireNonNull(host, "host");
        voters = Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(voters, "voters")));
        check(nodeId >= 0, "nodeId must be at least 0, got " + nodeId);
        check(!host.isBlank() && !host.equals("0.0.0.0") && !host.equals("::"),
                "host must be a concrete address the other voters can reach, got '" + host + "'");
        check(port > 0 && port <= 65535, "port must be in 1..65535, got " + port);
        check(!voters.isEmpty(), "voters (" + VOTERS_SETTING + ") must list at least this voter");
        for (Map.Entry<Integer, String> voter : voters.entrySet()) {
            String address = voter.getValue();
            check(voter.getKey() != null && voter.getKey() >= 0,
                    "voters (" + VOTERS_SETTING + ") node ids must be at least 0, got " + voters);
            int colon = address == null ? -1 : address.lastIndexOf(':');
            check(colon > 0 && isPort(address.substring(colon + 1)),
                    "voters (" + VOTERS_SETTING + ") entries must be id@host:port, got '" + voter.getKey() + "@"
                            + address + "'");
        }
        check(new HashSet<>(voters.values()).size() == voters.size(),
                "voters (" + VOTERS_SETTING + ") must not repeat an address, got " + voters);
        if (voters.containsKey(nodeId)) {
            check(address(host, port).equals(voters.get(nodeId)),
                    "voters (" + VOTERS_SETTING + ") must map this node id " + nodeId + " to its own address "
                            + address(host, port) + ", got " + voters);
        } else {
            check(!voters.containsValue(address(host, port)),
                    "this node " + nodeId + " is not a voter, so its learner address " + address(host, port)
                            + " must differ from every voter's address in " + VOTERS_SETTING + ", got " + voters);
        }
        check(defaultNumPartitions >= 1, "defaultNumPartitions must be at least 1, got " + defaultNumPartitions);
        check(defaultReplicationFactor >= 1,
                "defaultReplicationFactor must be at least 1, got " + defaultReplicationFactor);
        checkMillis(electionTimeout, "electionTimeout", 1);
        checkMillis(snapshotInterval, "snapshotInterval", 1000);
        checkMillis(startTimeout, "startTimeout", 1);
        checkMillis(requestTimeout, "requestTimeout", 1);
        check(initialClusterId == null || !initialClusterId.isBlank(),
                "initialClusterId must not be blank (null leaves it to another voter)");
        checkMillis(brokerSessionTimeout, "brokerSessionTimeout", 1);
        Objects.requireNonNull(brokerUnreachableGrace, "brokerUnreachableGrace");
        checkMillis(leaderImbalanceCheckInterval, "leaderImbalanceCheckInterval", 0);
    }

    /**
     * Embedded mode: the only voter, in the broker's process, with node id {@code nodeId};
     * 1 partition and replication factor 1 by default, 1 s election timeout, hourly snapshots, 30 s to
     * start and per request, no initial cluster id, 9 s broker sessions, no unclean leader election and
     * a preferred-leader check every 300 s.
     */
    public static ControllerConfig singleVoter(int nodeId, Path dataDir, String host, int port) {
        Map<Integer, String> voters = new LinkedHashMap<>();
        voters.put(nodeId, address(host, port));
        return new ControllerConfig(nodeId, dataDir, host, port, voters, 1, (short) 1,
                Duration.ofSeconds(1), Duration.ofHours(1), Duration.ofSeconds(30), Duration.ofSeconds(30), null,
                DEFAULT_BROKER_SESSION_TIMEOUT, false, DEFAULT_LEADER_IMBALANCE_CHECK_INTERVAL,
                DEFAULT_BROKER_UNREACHABLE_GRACE, null);
    }

    public ControllerConfig withVoters(Map<Integer, String> newVoters) {
        return new ControllerConfig(nodeId, dataDir, host, port, newVoters, defaultNumPartitions,
                defaultReplicationFactor, electionTimeout, snapshotInterval, startTimeout, requestTimeout,
                initialClusterId, brokerSessionTimeout, uncleanLeaderElection, leaderImbalanceCheckInterval,
                brokerUnreachableGrace, quorumTls);
    }

    public ControllerConfig withTopicDefaults(int numPartitions, short replicationFactor) {
        return new ControllerConfig(nodeId, dataDir, host, port, voters, numPartitions, replicationFactor,
                electionTimeout, snapshotInterval, startTimeout, requestTimeout, initialClusterId,
                brokerSessionTimeout, uncleanLeaderElection, leaderImbalanceCheckInterval, brokerUnreachableGrace,
                quorumTls);
    }

    public ControllerConfig withElectionTimeout(Duration timeout) {
        return new ControllerConfig(nodeId, dataDir, host, port, voters, defaultNumPartitions,
                defaultReplicationFactor, timeout, snapshotInterval, startTimeout, requestTimeout, initialClusterId,
                brokerSessionTimeout, uncleanLeaderElection, leaderImbalanceCheckInterval, brokerUnreachableGrace,
                quorumTls);
    }

    public ControllerConfig withSnapshotInterval(Duration interval) {
        return new ControllerConfig(nodeId, dataDir, host, port, voters, defaultNumPartitions,
                defaultReplicationFactor, electionTimeout, interval, startTimeout, requestTimeout, initialClusterId,
                brokerSessionTimeout, uncleanLeaderElection, leaderImbalanceCheckInterval, brokerUnreachableGrace,
                quorumTls);
    }

    public ControllerConfig withStartTimeout(Duration timeout) {
        return new ControllerConfig(nodeId, dataDir, host, port, voters, defaultNumPartitions,
                defaultReplicationFactor, electionTimeout, snapshotInterval, timeout, requestTimeout, initialClusterId,
                brokerSessionTimeout, uncleanLeaderElection, leaderImbalanceCheckInterval, brokerUnreachableGrace,
                quorumTls);
    }

    public ControllerConfig withInitialClusterId(String clusterId) {
        return new ControllerConfig(nodeId, dataDir, host, port, voters, defaultNumPartitions,
                defaultReplicationFactor, electionTimeout, snapshotInterval, startTimeout, requestTimeout, clusterId,
                brokerSessionTimeout, uncleanLeaderElection, leaderImbalanceCheckInterval, brokerUnreachableGrace,
                quorumTls);
    }

    public ControllerConfig withBrokerSessionTimeout(Duration timeout) {
        return new ControllerConfig(nodeId, dataDir, host, port, voters, defaultNumPartitions,
                defaultReplicationFactor, electionTimeout, snapshotInterval, startTimeout, requestTimeout,
                initialClusterId, timeout, uncleanLeaderElection, leaderImbalanceCheckInterval, brokerUnreachableGrace,
                quorumTls);
    }

    public ControllerConfig withUncleanLeaderElection(boolean enabled) {
        return new ControllerConfig(nodeId, dataDir, host, port, voters, defaultNumPartitions,
                defaultReplicationFactor, electionTimeout, snapshotInterval, startTimeout, requestTimeout,
                initialClusterId, brokerSessionTimeout, enabled, leaderImbalanceCheckInterval, brokerUnreachableGrace,
                quorumTls);
    }

    public ControllerConfig withBrokerUnreachableGrace(Duration grace) {
        return new ControllerConfig(nodeId, dataDir, host, port, voters, defaultNumPartitions,
                defaultReplicationFactor, electionTimeout, snapshotInterval, startTimeout, requestTimeout,
                initialClusterId, brokerSessionTimeout, uncleanLeaderElection, leaderImbalanceCheckInterval, grace,
                quorumTls);
    }

    public ControllerConfig withLeaderImbalanceCheckInterval(Duration interval) {
        return new ControllerConfig(nodeId, dataDir, host, port, voters, defaultNumPartitions,
                defaultReplicationFactor, electionTimeout, snapshotInterval, startTimeout, requestTimeout,
                initialClusterId, brokerSessionTimeout, uncleanLeaderElection, interval, brokerUnreachableGrace,
                quorumTls);
    }

    public ControllerConfig withQuorumTls(QuorumTls tls) {
        return new ControllerConfig(nodeId, dataDir, host, port, voters, defaultNumPartitions,
                defaultReplicationFactor, electionTimeout, snapshotInterval, startTimeout, requestTimeout,
                initialClusterId, brokerSessionTimeout, uncleanLeaderElection, leaderImbalanceCheckInterval,
                brokerUnreachableGrace, tls);
    }

    /**
     * Whether this node is a learner of the quorum rather than a voter: its id is not among the voters.
     * A learner replicates the metadata log but never votes and never becomes the active controller.
     */
    public boolean isLearner() {
        return !voters.containsKey(nodeId);
    }

    /** This node's {@code host:port} in the quorum. */
    public String address() {
        return address(host, port);
    }

    /** The voters as Kafka writes {@code controller.quorum.voters}: {@code id@host:port,...}. */
    public String votersText() {
        StringBuilder text = new StringBuilder();
        voters.forEach((id, address) -> text.append(text.length() == 0 ? "" : ",").append(id).append('@')
                .append(address));
        return text.toString();
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
