package dev.millrace.broker.cli;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One {@code millrace server} in a child JVM: the same java binary and classpath as this process, the
 * given JVM options and server arguments, plus {@code --exit-with-parent <this pid>} so that the child
 * stops when this process dies, even by SIGKILL. Standard output and error are appended to a log file,
 * whose tail goes into every error message about the node.
 *
 * <p>Used by {@code millrace cluster} and by test harnesses. Thread-safe: the methods only read the
 * {@link Process} handle, which is itself thread-safe.
 */
public final class NodeProcess implements AutoCloseable {

    private static final int LOG_TAIL_LINES = 30;

    private final int nodeId;
    private final Process process;
    private final Path logFile;
    private final List<Integer> ports;

    private NodeProcess(int nodeId, Process process, Path logFile, List<Integer> ports) {
        this.nodeId = nodeId;
        this.process = process;
        this.logFile = logFile;
        this.ports = List.copyOf(ports);
    }

    /**
     * Starts {@code millrace server serverArgs} for node {@code nodeId} and returns without waiting for it;
     * see {@link #awaitListening}.
     *
     * @param ports the ports on 127.0.0.1 the node listens on once started
     */
    public static NodeProcess start(int nodeId, List<String> jvmOptions, List<String> serverArgs, Path logFile,
            List<Integer> ports) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(javaBinary());
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), Millrace.class.getName(), "server"));
        command.addAll(serverArgs);
        command.addAll(List.of("--exit-with-parent", String.valueOf(ProcessHandle.current().pid())));
        Path parent = logFile.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile())).start();
        return new NodeProcess(nodeId, process, logFile, ports);
    }

    /** This JVM's java binary (the one that runs this code). */
    static String javaBinary() {
        return ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }

    /** This JVM's {@code -D} options, to give children the same system properties (logging, SOFA). */
    static List<String> systemPropertyOptions() {
        List<String> options = new ArrayList<>();
        for (String argument : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (argument.startsWith("-D")) {
                options.add(argument);
            }
        }
        return options;
    }

    /**
     * Waits until the node accepts connections on each of its ports on 127.0.0.1.
     *
     * @throws NodeStartException naming the node and the port, with the tail of its log, when the node exits
     *         first or does not listen within {@code timeout}
     */
    public void awaitListening(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (int port : ports) {
            while (!accepts(port)) {
                if (!process.isAlive()) {
                    throw new NodeStartException("node " + nodeId + " exited with status " + process.exitValue()
                            + " before listening on " + ClusterLayout.HOST + ":" + port + "; " + describeLog());
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new NodeStartException("node " + nodeId + " did not listen on " + ClusterLayout.HOST + ":"
                            + port + " within " + timeout.toSeconds() + " s; " + describeLog());
                }
                process.waitFor(100, TimeUnit.MILLISECONDS);
            }
        }
    }

    /** Whether something accepts connections on {@code 127.0.0.1:port}. */
    public static boolean accepts(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(ClusterLayout.HOST, port), 1000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** SIGTERM without waiting: the node stops cleanly (controlled shutdown). */
    public void signalTerminate() {
        process.destroy();
    }

    /**
     * SIGTERM, then waits up to {@code timeout} for the node to exit, then SIGKILL.
     *
     * @return the exit status
     */
    public int terminate(Duration timeout) throws InterruptedException {
        process.destroy();
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            process.waitFor();
        }
        return process.exitValue();
    }

    /** SIGKILL, and waits for the process to be gone: no shutdown hook, nothing flushed by the broker. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    /** Waits up to {@code timeoutMs} for the process to exit; true when it has. */
    public boolean awaitExit(long timeoutMs) throws InterruptedException {
        return process.waitFor(timeoutMs, TimeUnit.MILLISECONDS);
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    public int nodeId() {
        return nodeId;
    }

    public long pid() {
        return process.pid();
    }

    public Path logFile() {
        return logFile;
    }

    /** Completes when the process has exited. */
    public CompletableFuture<Process> onExit() {
        return process.onExit();
    }

    /** Exit status. @throws IllegalThreadStateException while the process runs */
    public int exitValue() {
        return process.exitValue();
    }

    /** "see FILE; its last lines:" and the last lines of the node's log, for error messages. */
    public String describeLog() {
        return "see " + logFile + "; its last lines:\n" + logTail(LOG_TAIL_LINES);
    }

    /** The last {@code maxLines} lines of the node's log (empty when it has none yet). */
    public String logTail(int maxLines) {
        try {
            if (!Files.exists(logFile)) {
                return "";
            }
            List<String> lines = new String(Files.readAllBytes(logFile), StandardCharsets.UTF_8).lines().toList();
            return String.join("\n", lines.subList(Math.max(0, lines.size() - maxLines), lines.size()));
        } catch (IOException e) {
            return "(cannot read " + logFile + ": " + e.getMessage() + ")";
        }
    }

    /** SIGKILL when still running. */
    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
    }

    /** A node did not start: names the node and what it did not do, with the tail of its log. */
    public static final class NodeStartException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NodeStartException(String message) {
            super(message);
        }
    }
}
