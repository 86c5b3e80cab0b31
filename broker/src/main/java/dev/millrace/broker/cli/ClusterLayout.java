package dev.millrace.broker.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

/**
 * Where the nodes of a development cluster on loopback live: for node i (1-based), its Kafka port, its
 * metadata voter port, its data directory {@code DIR/node-i} and its log file {@code DIR/node-i.log}, and
 * the {@code millrace server} arguments that start it with {@code node.id=i} and the shared
 * {@code controller.quorum.voters}. Used by {@code millrace cluster} (ports from a base port) and by the
 * tests' process harness (free ports).
 *
 * <p>Immutable; thread-safe.
 */
public final class ClusterLayout {

    /** The address every node binds and advertises. */
    public static final String HOST = "127.0.0.1";

    /** Most nodes {@code millrace cluster} starts. */
    public static final int MAX_NODES = 9;

    /** Port distance between consecutive nodes of {@link #withBasePort}. */
    public static final int PORT_STEP = 100;

    /** One node: its id, ports and files. */
    public record Node(int nodeId, int kafkaPort, int voterPort, Path dataDir, Path logFile) {

        /** {@code 127.0.0.1:kafkaPort}. */
        public String bootstrap() {
            return HOST + ":" + kafkaPort;
        }
    }

    /** A node's two ports. */
    public record Ports(int kafka, int voter) {
    }

    private final List<Node> nodes;

    private ClusterLayout(List<Node> nodes) {
        this.nodes = List.copyOf(nodes);
    }

    /**
     * {@code count} nodes under {@code dir}: node i on Kafka port {@code basePort + (i-1)*100} and voter
     * port {@code basePort + 1 + (i-1)*100}.
     *
     * @throws IllegalArgumentException naming the option when count is not 1..9 or a port falls outside 1..65535
     */
    public static ClusterLayout withBasePort(int count, Path dir, int basePort) {
        if (count < 1 || count > MAX_NODES) {
            throw new IllegalArgumentException("--nodes: " + count + " is not 1.." + MAX_NODES
                    + " (a development cluster on one machine; 3 or 5 voters are usual)");
        }
        int lastVoterPort = basePort + 1 + (count - 1) * PORT_STEP;
        if (basePort < 1 || lastVoterPort > 65535) {
            throw new IllegalArgumentException("--base-port: " + basePort + " puts the ports of " + count
                    + " nodes outside 1..65535 (they span " + basePort + ".." + lastVoterPort + ")");
        }
        List<Ports> ports = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            ports.add(new Ports(basePort + i * PORT_STEP, basePort + 1 + i * PORT_STEP));
        }
        return of(dir, ports);
    }

    /** Node i (1-based) on {@code ports.get(i - 1)}, under {@code dir}. */
    public static ClusterLayout of(Path dir, List<Ports> ports) {
        List<Node> nodes = new ArrayList<>();
        for (int i = 1; i <= ports.size(); i++) {
            Ports p = ports.get(i - 1);
            nodes.add(new Node(i, p.kafka(), p.voter(), dir.resolve("node-" + i), dir.resolve("node-" + i + ".log")));
        }
        return new ClusterLayout(nodes);
    }

    public List<Node> nodes() {
        return nodes;
    }

    /** @throws IllegalArgumentException when there is no node {@code nodeId} */
    public Node node(int nodeId) {
        if (nodeId < 1 || nodeId > nodes.size()) {
            throw new IllegalArgumentException("no node " + nodeId + "; nodes are 1.." + nodes.size());
        }
        return nodes.get(nodeId - 1);
    }

    /** The shared {@code controller.quorum.voters}: {@code 1@127.0.0.1:9093,2@127.0.0.1:9193,...}. */
    public String voters() {
        StringJoiner out = new StringJoiner(",");
        nodes.forEach(n -> out.add(n.nodeId() + "@" + HOST + ":" + n.voterPort()));
        return out.toString();
    }

    /** Every node's Kafka address, for {@code bootstrap.servers}. */
    public String bootstrap() {
        StringJoiner out = new StringJoiner(",");
        nodes.forEach(n -> out.add(n.bootstrap()));
        return out.toString();
    }

    /**
     * The {@code millrace server} arguments of node {@code nodeId}: its port, data directory, host, node.id and
     * the voters, then {@code settings} as {@code --set} (later ones win, so these may override the host).
     */
    public List<String> serverArgs(int nodeId, Map<String, String> settings) {
        Node node = node(nodeId);
        List<String> args = new ArrayList<>(List.of("--port", String.valueOf(node.kafkaPort()),
                "--data-dir", node.dataDir().toString(), "--set", "host=" + HOST, "--set", "node.id=" + nodeId,
                "--set", "controller.quorum.voters=" + voters()));
        settings.forEach((name, value) -> {
            args.add("--set");
            args.add(name + "=" + value);
        });
        return args;
    }
}
