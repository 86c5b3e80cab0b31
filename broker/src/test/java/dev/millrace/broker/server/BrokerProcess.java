package dev.millrace.broker.server;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.millrace.broker.cli.NodeProcess;

/**
 * A broker in its own JVM, started through the real command line ({@code millrace server}) with this
 * test's classpath ({@link NodeProcess}), so a test can kill it with SIGKILL. Output goes to a file beside
 * the data directory; the broker exits by itself if the test JVM dies. For several brokers as processes see
 * {@code dev.millrace.broker.cluster.ClusterProcesses}.
 */
final class BrokerProcess implements AutoCloseable {

    private static final List<String> JVM_OPTIONS = List.of("-Xmx512m", "-Dsofa.middleware.log.disable=true",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=info");

    private final NodeProcess process;
    private final int port;

    private BrokerProcess(NodeProcess process, int port) {
        this.process = process;
        this.port = port;
    }

    static BrokerProcess start(Path dataDir, int port, int controllerPort) throws IOException, InterruptedException {
        return start(dataDir, port, controllerPort, List.of());
    }

    /** Like {@link #start(Path, int, int)}, with {@code settings} ({@code name=value}) passed as {@code --set}. */
    static BrokerProcess start(Path dataDir, int port, int controllerPort, List<String> settings)
            throws IOException, InterruptedException {
        List<String> args = new ArrayList<>(List.of("--port", String.valueOf(port), "--data-dir", dataDir.toString(),
                "--set", "host=127.0.0.1", "--set", "controller.port=" + controllerPort,
                "--set", "group.initial.rebalance.delay.ms=0"));
        for (String setting : settings) {
            args.add("--set");
            args.add(setting);
        }
        Path output = dataDir.resolveSibling(dataDir.getFileName() + "-broker.out");
        NodeProcess process = NodeProcess.start(1, JVM_OPTIONS, args, output, List.of(port));
        BrokerProcess broker = new BrokerProcess(process, port);
        try {
            process.awaitListening(Duration.ofSeconds(60));
        } catch (RuntimeException | InterruptedException e) {
            process.close();
            throw e;
        }
        return broker;
    }

    /** SIGKILL: no shutdown hook, nothing flushed or checkpointed by the broker. */
    void kill() throws InterruptedException {
        process.kill();
    }

    /** SIGTERM: the broker shuts down cleanly (killed after 30 s). */
    int terminate() throws InterruptedException {
        return process.terminate(Duration.ofSeconds(30));
    }

    String bootstrap() {
        return "127.0.0.1:" + port;
    }

    @Override
    public void close() throws InterruptedException {
        process.close();
    }
}
