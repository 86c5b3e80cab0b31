package dev.millrace.broker.cluster;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.millrace.broker.cli.ClusterLayout;
import dev.millrace.broker.cli.NodeProcess;
import dev.millrace.broker.server.TestBrokers;

/**
 * A cluster of broker processes on 127.0.0.1 for crash tests: node i (1-based) is {@code millrace server}
 * in its own JVM ({@link NodeProcess}) with {@code node.id=i}, the shared {@code controller.quorum.voters},
 * data in {@code dir/node-i} and output appended to {@code dir/node-i.log} (kept across restarts, for
 * failure messages: {@link #describeLogs()}). Every Kafka and voter port is chosen free once, up front, and
 * kept for the cluster's life, so a restarted node comes back on the same ports and data directory, as the
 * voters list requires. Nodes stop by themselves if the test JVM dies ({@code --exit-with-parent}).
 *
 * <p>Defaults beside the caller's settings (which win): single-partition internal topics and no initial
 * rebalance delay, for fast starts. Randomness (which node to kill) is the caller's, seeded by it.
 *
 * <p>Thread-safe: methods are synchronized.
 */
public final class ClusterProcesses implements AutoCloseable {

    /** How long a node may take to listen on its ports. */
    public static final Duration START_TIMEOUT = Duration.ofSeconds(90);

    /** How long a SIGTERMed node may take to exit before it is killed. */
    public static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);

    private static final Map<String, String> DEFAULTS = Map.of("offsets.topic.num.partitions", "1",
            "transaction.state.log.num.partitions", "1", "delay.topic.num.partitions", "1",
            "group.initial.rebalance.delay.ms", "0");

    /**
     * Every node's JVM options; {@code -Dmillrace.cluster.nodeJvmOptions="..."} (space-separated) adds more, for
     * example {@code -Dorg.slf4j.simpleLogger.log.com.alipay.sofa.jraft=info} to see the metadata quorum's Raft log.
     */
    private static final List<String> JVM_OPTIONS = jvmOptions();

    /** How many of {@link #JVM_OPTIONS} come before those of the system property. */
    private static final int BASE_JVM_OPTIONS = 3;

    private static List<String> jvmOptions() {
        List<String> options = new java.util.ArrayList<>(List.of("-Xmx512m", "-Dsofa.middleware.log.disable=true",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=info"));
        String more = System.getProperty("millrace.cluster.nodeJvmOptions", "").trim();
        if (!more.isEmpty()) {
            options.addAll(List.of(more.split("\\s+")));
        }
        return List.copyOf(options);
    }

    /**
     * JVM options for nodes that only have to start fast and survive a short test: C1 only. On this 2-core machine
     * a node's C2 compiler threads compete with the other nodes and the test for the CPU while it starts; without
     * them a restart with data takes ~4 s instead of 5-9 s (measured in {@link ClusterCrashIntegrationTest}). Not
     * for benchmarks or long runs, whose nodes should run compiled as in production.
     */
    public static final List<String> FAST_START = List.of("-XX:TieredStopAtLevel=1");

    private final ClusterLayout layout;
    private final Map<String, String> settings;
    private final List<String> jvmOptions;
    private final Map<Integer, NodeProcess> nodes = new TreeMap<>();

    private ClusterProcesses(ClusterLayout layout, Map<String, String> settings, List<String> jvmOptions) {
        this.layout = layout;
        this.settings = settings;
        this.jvmOptions = jvmOptions;
    }

    /** Starts {@code count} nodes under {@code dir} and waits until each listens on both its ports. */
    public static ClusterProcesses start(int count, Path dir, Map<String, String> settings)
            throws IOException, InterruptedException {
        return start(count, dir, settings, List.of());
    }

    /**
     * As {@link #start(int, Path, Map)}, with {@code extraJvmOptions} for every node (before those of
     * {@code -Dmillrace.cluster.nodeJvmOptions}, which win where HotSpot takes the last of an option).
     */
    public static ClusterProcesses start(int count, Path dir, Map<String, String> settings,
                                         List<String> extraJvmOptions) throws IOException, InterruptedException {
        Map<String, String> all = new LinkedHashMap<>(DEFAULTS);
        all.putAll(settings);
        List<String> options = new ArrayList<>(JVM_OPTIONS.subList(0, BASE_JVM_OPTIONS));
        options.addAll(extraJvmOptions);
        options.addAll(JVM_OPTIONS.subList(BASE_JVM_OPTIONS, JVM_OPTIONS.size()));
        ClusterProcesses cluster = new ClusterProcesses(ClusterLayout.of(dir, freePorts(count)), all,
                List.copyOf(options));
        try {
            synchronized (cluster) {
                for (int id : cluster.nodeIds()) {
                    cluster.launch(id);
                }
                for (NodeProcess node : cluster.nodes.values()) {
                    node.awaitListening(START_TIMEOUT);
                }
            }
            return cluster;
        } catch (IOException | RuntimeException | InterruptedException e) {
            cluster.close();
            throw e;
        }
    }

    /**
     * Distinct free ports for {@code count} nodes, below the kernel's ephemeral range and never handed out twice in
     * this JVM ({@link TestBrokers#freePort}): a port from {@code new ServerSocket(0)} is in the ephemeral range,
     * where another test's outgoing connection can take it before the node binds it.
     */
    private static List<ClusterLayout.Ports> freePorts(int count) throws IOException {
        List<ClusterLayout.Ports> ports = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            ports.add(new ClusterLayout.Ports(TestBrokers.freePort(), TestBrokers.freePort()));
        }
        return ports;
    }

    private void launch(int nodeId) throws IOException {
        ClusterLayout.Node node = layout.node(nodeId);
        nodes.put(nodeId, NodeProcess.start(nodeId, jvmOptions, layout.serverArgs(nodeId, settings), node.logFile(),
                List.of(node.voterPort(), node.kafkaPort())));
    }

    /** SIGKILL: no shutdown hook runs, nothing is flushed by the broker. Waits until the process is gone. */
    public synchronized void kill(int nodeId) throws InterruptedException {
        process(nodeId).kill();
    }

    /** SIGTERM (a clean, controlled shutdown); waits, then kills after {@link #STOP_TIMEOUT}. @return exit status */
    public synchronized int stop(int nodeId) throws InterruptedException {
        return process(nodeId).terminate(STOP_TIMEOUT);
    }

    /**
     * Starts node {@code nodeId} again on its ports and data directory (stopping it with SIGTERM first if it
     * still runs) and waits until it listens.
     */
    public synchronized void restart(int nodeId) throws IOException, InterruptedException {
        NodeProcess old = process(nodeId);
        if (old.isAlive()) {
            old.terminate(STOP_TIMEOUT);
        }
        launch(nodeId);
        nodes.get(nodeId).awaitListening(START_TIMEOUT);
    }

    public synchronized boolean isRunning(int nodeId) {
        return process(nodeId).isAlive();
    }

    /** Every node's Kafka address, comma-separated, for {@code bootstrap.servers}. */
    public String bootstrap() {
        return layout.bootstrap();
    }

    /** Node {@code nodeId}'s Kafka address. */
    public String bootstrap(int nodeId) {
        return layout.node(nodeId).bootstrap();
    }

    public List<Integer> nodeIds() {
        return layout.nodes().stream().map(ClusterLayout.Node::nodeId).toList();
    }

    /** The nodes' ports, directories and log files. */
    public ClusterLayout layout() {
        return layout;
    }

    public synchronized long pid(int nodeId) {
        return process(nodeId).pid();
    }

    /** The tail of every node's log, for assertion and failure messages. */
    public synchronized String describeLogs() {
        StringBuilder out = new StringBuilder();
        nodes.forEach((id, node) -> out.append("\n--- node ").append(id).append(": ").append(node.describeLog()));
        return out.toString();
    }

    private NodeProcess process(int nodeId) {
        NodeProcess node = nodes.get(nodeId);
        if (node == null) {
            throw new IllegalArgumentException("no node " + nodeId + "; nodes are " + nodeIds());
        }
        return node;
    }

    /** Kills every node that still runs (SIGKILL). */
    @Override
    public synchronized void close() throws InterruptedException {
        for (NodeProcess node : nodes.values()) {
            node.close();
        }
    }
}
