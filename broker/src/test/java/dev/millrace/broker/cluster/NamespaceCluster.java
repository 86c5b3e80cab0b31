package dev.millrace.broker.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.StringJoiner;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.millrace.broker.cli.Millrace;

/**
 * A cluster of broker processes, each in a network namespace of its own, for tests of network partitions: node i
 * runs {@code millrace server} in namespace {@code mr<pid>n<i>} with the address {@code 10.213.<s>.<i>}, listening
 * there on 9092 (Kafka) and 9093 (its voter), data in {@code dir/node-i}, output in {@code dir/node-i.log}. The
 * namespaces hang off a bridge in the test's own namespace, which has {@code 10.213.<s>.254}, so the test's
 * clients reach every node directly:
 *
 * <pre>
 *   test JVM (10.213.s.254, bridge mr&lt;pid&gt;br)
 *      |-- veth --  mr&lt;pid&gt;n1: node 1 on 10.213.s.1:9092 / :9093
 *      |-- veth --  mr&lt;pid&gt;n2: node 2 on 10.213.s.2:9092 / :9093
 *      '-- veth --  mr&lt;pid&gt;n3: node 3 on 10.213.s.3:9092 / :9093
 * </pre>
 *
 * <p>{@link #isolate} cuts one node off from every other node, both ways, while the test still reaches it: a
 * blackhole route to each other node in its namespace and one to it in each of theirs (an established connection's
 * packets are dropped, a new one fails at once). Replica fetches, the metadata quorum's Raft traffic and broker
 * heartbeats all cross it, since every node talks to the others only through these addresses. {@link #heal} removes
 * the routes.
 *
 * <p>Needs root and iproute2 ({@link #unavailableBecause()}). The namespaces, veths and bridge carry this JVM's pid
 * in their names; {@link #close} deletes them, and a later start deletes those of a JVM that no longer runs (one
 * killed before it could). {@code s} is the pid modulo 250, so that two test JVMs do not share a subnet.
 *
 * <p>Thread-safe: methods are synchronized.
 */
final class NamespaceCluster implements AutoCloseable {

    static final int KAFKA_PORT = 9092;
    static final int VOTER_PORT = 9093;
    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);
    private static final Pattern OWNED = Pattern.compile("mr(\\d+)(?:n\\d+|br)");

    private final long pid = ProcessHandle.current().pid();
    private final String prefix = "mr" + pid;
    private final String subnet = "10.213." + (pid % 250) + ".";
    private final int count;
    private final Path dir;
    private final Map<String, String> settings;
    private final List<String> jvmOptions;
    private final Map<Integer, Process> nodes = new TreeMap<>();
    private boolean networkUp;

    private NamespaceCluster(int count, Path dir, Map<String, String> settings, List<String> jvmOptions) {
        this.count = count;
        this.dir = dir;
        this.settings = settings;
        this.jvmOptions = jvmOptions;
    }

    /** Why this machine cannot run it (not root, no {@code ip netns}), or empty if it can. */
    static Optional<String> unavailableBecause() {
        if (!System.getProperty("os.name").startsWith("Linux")) {
            return Optional.of("network namespaces need Linux");
        }
        try {
            String probe = "mr" + ProcessHandle.current().pid() + "probe";
            run("ip", "netns", "add", probe);
            run("ip", "netns", "del", probe);
            return Optional.empty();
        } catch (IOException e) {
            return Optional.of("cannot create a network namespace (needs root and iproute2): " + e.getMessage());
        }
    }

    /** Builds the network, starts {@code count} nodes with {@code settings} and waits until each listens. */
    static NamespaceCluster start(int count, Path dir, Map<String, String> settings, List<String> jvmOptions)
            throws IOException, InterruptedException {
        NamespaceCluster cluster = new NamespaceCluster(count, dir, settings, jvmOptions);
        try {
            cluster.removeStale();
            cluster.buildNetwork();
            for (int id = 1; id <= count; id++) {
                cluster.launch(id);
            }
            for (int id = 1; id <= count; id++) {
                cluster.awaitListening(id);
            }
            return cluster;
        } catch (IOException | RuntimeException | InterruptedException e) {
            cluster.close();
            throw e;
        }
    }

    String address(int nodeId) {
        return subnet + nodeId;
    }

    /** Node {@code nodeId}'s Kafka address. */
    String bootstrap(int nodeId) {
        return address(nodeId) + ":" + KAFKA_PORT;
    }

    /** Every node's Kafka address but {@code except}'s, comma-separated. */
    String bootstrapExcept(int except) {
        StringJoiner out = new StringJoiner(",");
        for (int id = 1; id <= count; id++) {
            if (id != except) {
                out.add(bootstrap(id));
            }
        }
        return out.toString();
    }

    String bootstrap() {
        return bootstrapExcept(0);
    }

    List<Integer> nodeIds() {
        return List.copyOf(nodes.keySet());
    }

    Path dataDir(int nodeId) {
        return dir.resolve("node-" + nodeId);
    }

    /** Cuts node {@code nodeId} off from every other node (both ways); the test still reaches it. */
    synchronized void isolate(int nodeId) throws IOException {
        for (int other = 1; other <= count; other++) {
            if (other != nodeId) {
                run("ip", "-n", namespace(nodeId), "route", "add", "blackhole", address(other) + "/32");
                run("ip", "-n", namespace(other), "route", "add", "blackhole", address(nodeId) + "/32");
            }
        }
    }

    /** Undoes {@link #isolate}. */
    synchronized void heal(int nodeId) throws IOException {
        for (int other = 1; other <= count; other++) {
            if (other != nodeId) {
                run("ip", "-n", namespace(nodeId), "route", "del", "blackhole", address(other) + "/32");
                run("ip", "-n", namespace(other), "route", "del", "blackhole", address(nodeId) + "/32");
            }
        }
    }

    /** SIGTERM (controlled shutdown), waiting up to 30 s, then SIGKILL. @return the exit status */
    synchronized int stop(int nodeId) throws InterruptedException {
        Process process = nodes.get(nodeId);
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
        return process.exitValue();
    }

    /** The tail of every node's log, for failure messages. */
    synchronized String describeLogs() {
        StringBuilder out = new StringBuilder();
        for (int id : nodes.keySet()) {
            out.append("\n--- node ").append(id).append(":\n");
            try {
                List<String> lines = Files.readAllLines(logFile(id), StandardCharsets.UTF_8);
                lines.subList(Math.max(0, lines.size() - 30), lines.size()).forEach(l -> out.append(l).append('\n'));
            } catch (IOException e) {
                out.append("(unreadable: ").append(e.getMessage()).append(")\n");
            }
        }
        return out.toString();
    }

    private String namespace(int nodeId) {
        return prefix + "n" + nodeId;
    }

    private String bridge() {
        return prefix + "br";
    }

    private Path logFile(int nodeId) {
        return dir.resolve("node-" + nodeId + ".log");
    }

    private void buildNetwork() throws IOException {
        networkUp = true;
        run("ip", "link", "add", bridge(), "type", "bridge");
        run("ip", "addr", "add", subnet + "254/24", "dev", bridge());
        run("ip", "link", "set", bridge(), "up");
        for (int id = 1; id <= count; id++) {
            String ns = namespace(id);
            String hostEnd = prefix + "h" + id;
            run("ip", "netns", "add", ns);
            run("ip", "link", "add", hostEnd, "type", "veth", "peer", "name", "eth0", "netns", ns);
            run("ip", "link", "set", hostEnd, "master", bridge());
            run("ip", "link", "set", hostEnd, "up");
            run("ip", "-n", ns, "addr", "add", address(id) + "/24", "dev", "eth0");
            run("ip", "-n", ns, "link", "set", "eth0", "up");
            run("ip", "-n", ns, "link", "set", "lo", "up");
        }
    }

    private void launch(int nodeId) throws IOException {
        StringJoiner voters = new StringJoiner(",");
        for (int id = 1; id <= count; id++) {
            voters.add(id + "@" + address(id) + ":" + VOTER_PORT);
        }
        List<String> command = new ArrayList<>(List.of("ip", "netns", "exec", namespace(nodeId),
                ProcessHandle.current().info().command().orElse(Path.of(System.getProperty("java.home"), "bin",
                        "java").toString())));
        command.addAll(List.of("-Xmx512m", "-Dsofa.middleware.log.disable=true",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=info"));
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), Millrace.class.getName(), "server",
                "--port", String.valueOf(KAFKA_PORT), "--data-dir", dataDir(nodeId).toString(),
                "--set", "host=" + address(nodeId), "--set", "node.id=" + nodeId,
                "--set", "controller.quorum.voters=" + voters));
        settings.forEach((name, value) -> command.addAll(List.of("--set", name + "=" + value)));
        command.addAll(List.of("--exit-with-parent", String.valueOf(pid)));
        Files.createDirectories(dir);
        nodes.put(nodeId, new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile(nodeId).toFile())).start());
    }

    private void awaitListening(int nodeId) throws InterruptedException {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        Process process = nodes.get(nodeId);
        for (int port : List.of(VOTER_PORT, KAFKA_PORT)) {
            while (!accepts(address(nodeId), port)) {
                if (!process.isAlive() || System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("node " + nodeId + " did not listen on " + address(nodeId) + ":"
                            + port + (process.isAlive() ? " within " + START_TIMEOUT.toSeconds() + " s"
                            : ": it exited with status " + process.exitValue()) + describeLogs());
                }
                process.waitFor(100, TimeUnit.MILLISECONDS);
            }
        }
    }

    private static boolean accepts(String host, int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), 1000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Deletes the namespaces and bridges of test JVMs that no longer run. */
    private void removeStale() throws IOException {
        for (String line : run("ip", "netns", "list").split("\n")) {
            deleteIfStale(line.split(" ")[0], "netns", "del");
        }
        for (String line : run("ip", "-o", "link", "show", "type", "bridge").split("\n")) {
            String[] fields = line.split(":\\s*");
            if (fields.length > 1) {
                deleteIfStale(fields[1], "link", "del");
            }
        }
    }

    private static void deleteIfStale(String name, String object, String verb) throws IOException {
        Matcher matcher = OWNED.matcher(name);
        if (matcher.matches() && ProcessHandle.of(Long.parseLong(matcher.group(1))).isEmpty()) {
            run("ip", object, verb, name);
        }
    }

    /** Kills every node (SIGKILL) and deletes the namespaces and the bridge (also when interrupted). */
    @Override
    public synchronized void close() {
        boolean interrupted = false;
        for (Process process : nodes.values()) {
            process.destroyForcibly();
            try {
                process.waitFor();
            } catch (InterruptedException e) {
                interrupted = true; // still remove the network below
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (networkUp) {
            for (int id = 1; id <= count; id++) {
                runQuietly("ip", "netns", "del", namespace(id));
            }
            runQuietly("ip", "link", "del", bridge());
        }
    }

    private static void runQuietly(String... command) {
        try {
            run(command);
        } catch (IOException e) {
            System.err.println("NamespaceCluster: " + e.getMessage());
        }
    }

    /** Runs {@code command} and returns its output; throws with the output when it fails. */
    private static String run(String... command) throws IOException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output;
        try (InputStream in = process.getInputStream()) {
            output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IOException(String.join(" ", command) + " did not finish within 30 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(String.join(" ", command) + " was interrupted", e);
        }
        if (process.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed with status " + process.exitValue() + ": "
                    + output.trim());
        }
        return output;
    }
}
