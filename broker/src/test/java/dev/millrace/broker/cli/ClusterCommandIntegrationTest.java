package dev.millrace.broker.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.testing.TestPorts;

/**
 * {@code millrace cluster} run as a process, as a user runs it: its nodes come up as child processes on
 * the announced ports, and go away with it, whether it is stopped with SIGTERM or killed with SIGKILL.
 */
@Timeout(180)
class ClusterCommandIntegrationTest {

    private static final int NODES = 2;
    private static final Pattern NODE_LINE = Pattern.compile("node (\\d+): kafka 127\\.0\\.0\\.1:(\\d+), voter "
            + "127\\.0\\.0\\.1:(\\d+), .* pid (\\d+)");

    @TempDir
    Path tmp;

    private Process parent;
    private final List<Long> childPids = new ArrayList<>();
    private final List<Integer> ports = new ArrayList<>();

    @AfterEach
    void killLeftovers() {
        if (parent != null) {
            parent.destroyForcibly();
        }
        for (long pid : childPids) {
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    @Test
    void shouldStopEveryNodeWhenTheParentGetsSigterm() throws Exception {
        String bootstrap = startCluster();
        assertThat(bootstrap).isEqualTo("bootstrap.servers=127.0.0.1:" + ports.get(0) + ",127.0.0.1:" + ports.get(2));
        assertThat(ports).allSatisfy(port -> assertThat(NodeProcess.accepts(port)).as("port %d", port).isTrue());

        parent.destroy();
        assertThat(parent.waitFor(90, TimeUnit.SECONDS)).isTrue();

        for (long pid : childPids) {
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).as("node pid %d", pid)
                    .isIn(Optional.empty(), Optional.of(false));
        }
        assertThat(ports).allSatisfy(port -> assertThat(NodeProcess.accepts(port)).as("port %d", port).isFalse());
        assertThat(Files.readString(tmp.resolve("parent.err"))).contains("node 1 stopped", "node 2 stopped");
        assertThat(Files.readString(tmp.resolve("c").resolve("node-2.log")))
                .as("a clean stop, logged at the level the parent's -D option gives its nodes")
                .contains("Broker 2 stopped");
    }

    @Test
    void shouldStopEveryNodeWhenTheParentIsKilled() throws Exception {
        startCluster();

        parent.destroyForcibly();
        assertThat(parent.waitFor(30, TimeUnit.SECONDS)).isTrue();

        for (long pid : childPids) {
            Optional<ProcessHandle> child = ProcessHandle.of(pid);
            if (child.isPresent()) {
                child.get().onExit().get(90, TimeUnit.SECONDS);
            }
        }
        assertThat(ports).allSatisfy(port -> assertThat(NodeProcess.accepts(port)).as("port %d", port).isFalse());
        for (int id = 1; id <= NODES; id++) {
            assertThat(Files.readString(tmp.resolve("c").resolve("node-" + id + ".log")))
                    .contains("parent process " + parent.pid() + " exited; stopping");
        }
    }

    @Test
    void shouldNameTheNodeThatDidNotComeUpWithTheTailOfItsLog() throws Exception {
        parent = clusterProcess(freeBasePort(), "--set", "min.insync.replicas=0");
        assertThat(parent.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(parent.exitValue()).isEqualTo(1);
        assertThat(Files.readString(tmp.resolve("parent.err")))
                .contains("millrace cluster: node 1 exited with status 2 before listening on 127.0.0.1:")
                .contains("node-1.log; its last lines:")
                .contains("min.insync.replicas: must be greater than or equal to 1 (was 0)");
    }

    /** Starts the parent and reads its output up to the bootstrap line; records the nodes' pids and ports. */
    private String startCluster() throws IOException {
        int basePort = freeBasePort();
        parent = clusterProcess(basePort);
        BufferedReader out = new BufferedReader(new InputStreamReader(parent.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = out.readLine()) != null) {
            Matcher node = NODE_LINE.matcher(line);
            if (node.find()) {
                assertThat(Integer.parseInt(node.group(2))).isEqualTo(basePort + (Integer.parseInt(node.group(1)) - 1) * 100);
                ports.add(Integer.parseInt(node.group(2)));
                ports.add(Integer.parseInt(node.group(3)));
                childPids.add(Long.parseLong(node.group(4)));
            } else if (line.startsWith("bootstrap.servers=")) {
                assertThat(childPids).hasSize(NODES);
                return line;
            }
        }
        throw new AssertionError("millrace cluster ended without a bootstrap line: "
                + Files.readString(tmp.resolve("parent.err")));
    }

    private Process clusterProcess(int basePort, String... extraArgs) throws IOException {
        List<String> command = new ArrayList<>(List.of(NodeProcess.javaBinary(), "-Xmx128m",
                "-Dsofa.middleware.log.disable=true", "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
                "-cp", System.getProperty("java.class.path"),
                Millrace.class.getName(), "cluster", "--nodes", String.valueOf(NODES),
                "--data-dir", tmp.resolve("c").toString(), "--base-port", String.valueOf(basePort),
                "--node-heap", "256m", "--stop-timeout-seconds", "60"));
        command.addAll(List.of(extraArgs));
        return new ProcessBuilder(command).redirectError(tmp.resolve("parent.err").toFile()).start();
    }

    /** A base port P with P, P+1, P+100, P+101 (and so on per node) reserved for this test ({@link TestPorts}). */
    private static int freeBasePort() {
        return TestPorts.reserveBlock(NODES, 100, 2);
    }
}
