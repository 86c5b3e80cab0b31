package dev.millrace.broker.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;

import java.io.PrintWriter;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code millrace cluster}: a development cluster of N nodes on loopback, each a {@code millrace server}
 * in its own child process (same java binary and classpath as this one). Node i (1-based) gets
 * {@code node.id=i}, Kafka port {@code P+(i-1)*100}, voter port {@code P+1+(i-1)*100}, data directory
 * {@code DIR/node-i} and the shared {@code controller.quorum.voters}; its output is appended to
 * {@code DIR/node-i.log} (not inherited). Once every node listens, one line per node and the bootstrap
 * string are printed.
 *
 * <p>Stopping: SIGTERM or Ctrl-C of this process sends SIGTERM to every node, waits for them
 * ({@code --stop-timeout-seconds}) and then kills what is left. If this process is killed with SIGKILL,
 * the nodes notice through {@code --exit-with-parent} and stop by themselves. A node that does not come up
 * in time stops the whole command with an error naming the node and the tail of its log.
 *
 * <p>Runs on picocli's thread; the shutdown hook stops the nodes on its own thread, and the command waits
 * for every node to have exited.
 */
@Command(name = "cluster", mixinStandardHelpOptions = true,
        description = {"Start a development cluster on 127.0.0.1: N nodes, each its own process, node i on "
                + "Kafka port P+(i-1)*100 and voter port P+1+(i-1)*100, data in DIR/node-i, output in "
                + "DIR/node-i.log. Ctrl-C or SIGTERM stops every node.",
                "Work in progress (issue 22): until the multi-voter controller lands, each node runs as its own "
                        + "single-voter cluster."})
final class ClusterCommand implements Callable<Integer> {

    @Option(names = "--nodes", defaultValue = "3", description = "Number of nodes, 1..9 (default: ${DEFAULT-VALUE}).")
    int nodes;

    @Option(names = "--data-dir", required = true, description = "Directory for the nodes' data and logs.")
    Path dataDir;

    @Option(names = "--base-port", defaultValue = "9092",
            description = "Kafka port of node 1; node i uses P+(i-1)*100 and P+1+(i-1)*100 (default: ${DEFAULT-VALUE}).")
    int basePort;

    @Option(names = "--set", description = "A setting for every node, name=value; repeatable.")
    Map<String, String> settings = new LinkedHashMap<>();

    @Option(names = "--node-heap", defaultValue = "512m", description = "Each node's -Xmx (default: ${DEFAULT-VALUE}).")
    String nodeHeap;

    @Option(names = "--start-timeout-seconds", defaultValue = "120",
            description = "How long to wait for every node to listen (default: ${DEFAULT-VALUE}).")
    int startTimeoutSeconds;

    @Option(names = "--stop-timeout-seconds", defaultValue = "30",
            description = "How long a stopping node may take before it is killed (default: ${DEFAULT-VALUE}).")
    int stopTimeoutSeconds;

    @Spec
    CommandSpec spec;

    private final List<NodeProcess> started = new ArrayList<>();
    private volatile boolean stopping;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        ClusterLayout layout;
        try {
            layout = ClusterLayout.withBasePort(nodes, dataDir, basePort);
        } catch (IllegalArgumentException e) {
            err.println("millrace cluster: " + e.getMessage());
            return 2;
        }
        Files.createDirectories(dataDir);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stopAll(err), "millrace-cluster-shutdown"));
        List<String> jvmOptions = new ArrayList<>(List.of("-Xmx" + nodeHeap, "-Dsofa.middleware.log.disable=true"));
        jvmOptions.addAll(NodeProcess.systemPropertyOptions());
        try {
            for (ClusterLayout.Node node : layout.nodes()) {
                synchronized (started) {
                    if (stopping) {
                        return 1;
                    }
                    started.add(NodeProcess.start(node.nodeId(), jvmOptions, layout.serverArgs(node.nodeId(), settings),
                            node.logFile(), List.of(node.voterPort(), node.kafkaPort())));
                }
            }
            for (NodeProcess node : snapshot()) {
                node.awaitListening(Duration.ofSeconds(startTimeoutSeconds));
            }
        } catch (NodeProcess.NodeStartException e) {
            if (stopping) {
                return 1;
            }
            err.println("millrace cluster: " + e.getMessage());
            stopAll(err);
            return 1;
        }
        for (ClusterLayout.Node node : layout.nodes()) {
            NodeProcess process = snapshot().get(node.nodeId() - 1);
            out.println("node " + node.nodeId() + ": kafka " + node.bootstrap() + ", voter " + ClusterLayout.HOST
                    + ":" + node.voterPort() + ", data " + node.dataDir() + ", log " + node.logFile() + ", pid "
                    + process.pid());
            process.onExit().thenRun(() -> {
                if (!stopping) {
                    err.println("millrace cluster: node " + node.nodeId() + " exited with status "
                            + process.exitValue() + "; " + process.describeLog());
                }
            });
        }
        out.println("bootstrap.servers=" + layout.bootstrap());
        out.flush();
        CompletableFuture.allOf(snapshot().stream().map(NodeProcess::onExit).toArray(CompletableFuture[]::new)).join();
        return stopping ? 0 : 1;
    }

    private List<NodeProcess> snapshot() {
        synchronized (started) {
            return List.copyOf(started);
        }
    }

    /** SIGTERM to every node, then waits, then SIGKILL to those still running. Idempotent. */
    private void stopAll(PrintWriter err) {
        List<NodeProcess> nodesToStop;
        synchronized (started) {
            if (stopping) {
                return;
            }
            stopping = true;
            nodesToStop = List.copyOf(started);
        }
        nodesToStop.forEach(NodeProcess::signalTerminate);
        long deadline = System.nanoTime() + Duration.ofSeconds(stopTimeoutSeconds).toNanos();
        for (NodeProcess node : nodesToStop) {
            try {
                long leftMs = Math.max(0, (deadline - System.nanoTime()) / 1_000_000);
                if (!node.awaitExit(leftMs)) {
                    err.println("millrace cluster: node " + node.nodeId() + " did not stop within "
                            + stopTimeoutSeconds + " s; killing it");
                    node.kill();
                }
                err.println("millrace cluster: node " + node.nodeId() + " stopped (status " + node.exitValue()
                        + ")");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
