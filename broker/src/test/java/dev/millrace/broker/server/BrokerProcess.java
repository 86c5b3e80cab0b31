package dev.millrace.broker.server;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A broker in its own JVM, started through the real command line ({@code millrace server}) with this
 * test's classpath, so a test can kill it with SIGKILL. Output goes to a file in the data directory.
 */
final class BrokerProcess implements AutoCloseable {

    private final Process process;
    private final int port;

    private BrokerProcess(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    static BrokerProcess start(Path dataDir, int port, int controllerPort) throws IOException, InterruptedException {
        return start(dataDir, port, controllerPort, List.of());
    }

    /** Like {@link #start(Path, int, int)}, with {@code settings} ({@code name=value}) passed as {@code --set}. */
    static BrokerProcess start(Path dataDir, int port, int controllerPort, List<String> settings)
            throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-Xmx512m", "-Dsofa.middleware.log.disable=true",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
                "-cp", System.getProperty("java.class.path"), "dev.millrace.broker.cli.Millrace", "server",
                "--port", String.valueOf(port), "--data-dir", dataDir.toString(),
                "--set", "host=127.0.0.1", "--set", "controller.port=" + controllerPort,
                "--set", "group.initial.rebalance.delay.ms=0"));
        for (String setting : settings) {
            command.add("--set");
            command.add(setting);
        }
        File output = dataDir.resolveSibling(dataDir.getFileName() + "-broker.out").toFile();
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(output)).start();
        BrokerProcess broker = new BrokerProcess(process, port);
        broker.awaitListening(output);
        return broker;
    }

    private void awaitListening(File output) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("Broker exited with " + process.exitValue() + "; see " + output);
            }
            try (java.net.Socket ignored = new java.net.Socket("127.0.0.1", port)) {
                return;
            } catch (IOException notYet) {
                process.waitFor(100, TimeUnit.MILLISECONDS);
            }
        }
        throw new IllegalStateException("Broker did not listen on " + port + " within 60 s; see " + output);
    }

    /** SIGKILL: no shutdown hook, nothing flushed or checkpointed by the broker. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /** SIGTERM: the broker shuts down cleanly. */
    int terminate() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
        return process.exitValue();
    }

    String bootstrap() {
        return "127.0.0.1:" + port;
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
    }
}
