package dev.millrace.bench.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicExistsException;

/**
 * One broker under test, running in a JVM of its own on 127.0.0.1 with its data in the
 * comparison's work directory: Millrace from the build output, or a real Apache Kafka 4.4 KRaft
 * single node (combined broker and controller) from the peer classpath. Both get the same JVM
 * options ({@link BrokerComparison#BROKER_JVM}); stdout and stderr go to a log file. The JMS comparison
 * ({@code dev.millrace.bench.jms}) also starts Apache ActiveMQ Artemis this way.
 */
public final class BrokerNode implements AutoCloseable {

    static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(120);

    private final String name;
    private final Process process;
    private final int port;
    private final Path log;
    private final Cleanup cleanup;
    private final List<String> command;
    private final Path workDir;
    private Integer exitCode;

    private BrokerNode(String name, Process process, int port, Path log, Cleanup cleanup, List<String> command,
                       Path workDir) {
        this.workDir = workDir;
        this.name = name;
        this.process = process;
        this.port = port;
        this.log = log;
        this.cleanup = cleanup;
        this.command = command;
    }

    /**
     * Starts Millrace: {@code java <jvm> -Dsofa.middleware.log.disable=true -cp
     * broker/target/millrace-broker.jar:broker/target/lib/* dev.millrace.broker.cli.Millrace server ...}. The system
     * property {@code millrace.bench.broker.jvm} adds options after {@code <jvm>} (whitespace-separated), e.g. a
     * profiler agent: {@code -Dmillrace.bench.broker.jvm=-agentpath:/path/libasyncProfiler.so=start,...}.
     */
    static BrokerNode startMillrace(Path home, Path workDir, List<String> jvm, Cleanup cleanup)
            throws IOException, InterruptedException {
        return startMillrace(home, workDir, jvm, cleanup, List.of());
    }

    /** Like {@link #startMillrace(Path, Path, List, Cleanup)}, with {@code settings} ({@code name=value}) as {@code --set}. */
    public static BrokerNode startMillrace(Path home, Path workDir, List<String> jvm, Cleanup cleanup,
                                           List<String> settings) throws IOException, InterruptedException {
        int port = Cleanup.freePort();
        int controllerPort = Cleanup.freePort();
        List<String> all = new ArrayList<>(List.of("controller.host=127.0.0.1", "controller.port=" + controllerPort));
        all.addAll(settings);
        return startMillrace(home, workDir, "Millrace", port, jvm, cleanup, all);
    }

    /**
     * Starts one Millrace node named {@code name} on {@code port} with its data and log in {@code workDir}
     * ({@code host=127.0.0.1} and {@code group.initial.rebalance.delay.ms=0} come first, then {@code settings}).
     * A cluster node passes its {@code node.id} and {@code controller.quorum.voters} as settings.
     */
    static BrokerNode startMillrace(Path home, Path workDir, String name, int port, List<String> jvm,
                                    Cleanup cleanup, List<String> settings) throws IOException, InterruptedException {
        Path jar = home.resolve("broker/target/millrace-broker.jar");
        Path lib = home.resolve("broker/target/lib");
        if (!Files.isRegularFile(jar) || !Files.isDirectory(lib)) {
            throw new IllegalStateException(jar + " or " + lib + " not found; build first with: "
                    + "mvn -B -q package -DskipTests");
        }
        Path data = Files.createDirectories(workDir.resolve("millrace-data"));
        List<String> command = new ArrayList<>();
        command.add(BrokerComparison.javaBinary());
        command.addAll(jvm);
        String extra = System.getProperty("millrace.bench.broker.jvm", "");
        if (!extra.isBlank()) {
            command.addAll(List.of(extra.trim().split("\\s+")));
        }
        command.add("-Dsofa.middleware.log.disable=true");
        command.add("-cp");
        command.add(jar + ":" + lib + "/*");
        command.add("dev.millrace.broker.cli.Millrace");
        command.add("server");
        command.addAll(List.of("--port", Integer.toString(port), "--data-dir", data.toString(),
                "--set", "host=127.0.0.1",
                "--set", "group.initial.rebalance.delay.ms=0"));
        for (String setting : settings) {
            command.add("--set");
            command.add(setting);
        }
        return launch(name, command, port, workDir.resolve("millrace.log"), workDir, cleanup);
    }

    /**
     * Formats a KRaft log directory with {@code kafka.tools.StorageTool format} and starts
     * {@code kafka.Kafka server.properties}, both from the peer classpath.
     */
    static BrokerNode startKafka(String peerClasspath, Path workDir, List<String> jvm, int partitions,
                                 Cleanup cleanup) throws IOException, InterruptedException {
        int port = Cleanup.freePort();
        int controllerPort = Cleanup.freePort();
        return startKafka(peerClasspath, workDir, "Kafka", jvm, cleanup, 1, port, controllerPort,
                "1@127.0.0.1:" + controllerPort, Uuid.randomUuid().toString(), List.of(
                        "num.partitions=" + partitions,
                        "offsets.topic.replication.factor=1",
                        "transaction.state.log.replication.factor=1",
                        "transaction.state.log.min.isr=1",
                        "share.coordinator.state.topic.replication.factor=1",
                        "share.coordinator.state.topic.min.isr=1"));
    }

    /**
     * Formats and starts one Kafka KRaft node (combined broker and controller) named {@code name}: node
     * {@code nodeId} listening on {@code port} and, as a controller, on {@code controllerPort}; {@code voters}
     * is the {@code controller.quorum.voters} list and {@code clusterId} the id every node of one cluster is
     * formatted with; {@code extraProperties} ({@code name=value}) are appended to its server.properties, each
     * replacing the default line of the same name (e.g. {@code listeners}).
     */
    static BrokerNode startKafka(String peerClasspath, Path workDir, String name, List<String> jvm, Cleanup cleanup,
                                 int nodeId, int port, int controllerPort, String voters, String clusterId,
                                 List<String> extraProperties) throws IOException, InterruptedException {
        Path data = Files.createDirectories(workDir.resolve("kafka-data"));
        Path properties = workDir.resolve("kafka-server.properties");
        List<String> lines = new ArrayList<>(List.of(
                "process.roles=broker,controller",
                "node.id=" + nodeId,
                "controller.quorum.voters=" + voters,
                "listeners=PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort,
                "advertised.listeners=PLAINTEXT://127.0.0.1:" + port,
                "controller.listener.names=CONTROLLER",
                "inter.broker.listener.name=PLAINTEXT",
                "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
                "log.dirs=" + data,
                "group.initial.rebalance.delay.ms=0"));
        for (String extra : extraProperties) {
            int equals = extra.indexOf('=');
            if (equals > 0) {
                String key = extra.substring(0, equals + 1);
                lines.removeIf(line -> line.startsWith(key));
            }
        }
        lines.addAll(extraProperties);
        lines.add("");
        Files.writeString(properties, String.join("\n", lines), StandardCharsets.UTF_8);

        List<String> format = new ArrayList<>(List.of(BrokerComparison.javaBinary(), "-Xmx256m",
                "-cp", peerClasspath, "kafka.tools.StorageTool", "format",
                "--cluster-id", clusterId, "--config", properties.toString()));
        Path formatLog = workDir.resolve("kafka-format.log");
        Process formatting = new ProcessBuilder(format).redirectErrorStream(true)
                .redirectOutput(formatLog.toFile()).start();
        cleanup.track(formatting);
        try {
            if (!formatting.waitFor(120, TimeUnit.SECONDS)) {
                Cleanup.stop(formatting, Duration.ofSeconds(5));
                throw new IllegalStateException("kafka.tools.StorageTool format did not finish within 120 s");
            }
            if (formatting.exitValue() != 0) {
                throw new IllegalStateException("kafka.tools.StorageTool format exited with "
                        + formatting.exitValue() + ": " + String.join("\n", Cleanup.tail(formatLog, 20)));
            }
        } finally {
            cleanup.untrack(formatting);
        }

        List<String> command = new ArrayList<>();
        command.add(BrokerComparison.javaBinary());
        command.addAll(jvm);
        command.add("-Dorg.slf4j.simpleLogger.showDateTime=true");
        command.add("-cp");
        command.add(peerClasspath);
        command.add("kafka.Kafka");
        command.add(properties.toString());
        return launch(name, command, port, workDir.resolve("kafka.log"), workDir, cleanup);
    }

    /**
     * Starts an Apache ActiveMQ Artemis broker: {@code java <jvm> -cp <this JVM's classpath> <mainClass> <port> <dir>},
     * where the main class (in bench/) embeds Artemis with a persistent journal under {@code dir}.
     */
    public static BrokerNode startArtemis(String mainClass, Path workDir, List<String> jvm, Cleanup cleanup)
            throws IOException, InterruptedException {
        int port = Cleanup.freePort();
        Path data = Files.createDirectories(workDir.resolve("artemis-data"));
        List<String> command = new ArrayList<>();
        command.add(BrokerComparison.javaBinary());
        command.addAll(jvm);
        command.add("-cp");
        command.add(ownClasspath());
        command.add(mainClass);
        command.add(Integer.toString(port));
        command.add(data.toString());
        return launch("Artemis", command, port, workDir.resolve("artemis.log"), workDir, cleanup);
    }

    /** This JVM's classpath with absolute entries, for JVMs started from another working directory. */
    public static String ownClasspath() {
        return java.util.Arrays.stream(System.getProperty("java.class.path").split(java.io.File.pathSeparator))
                .map(entry -> Path.of(entry).toAbsolutePath().toString())
                .collect(java.util.stream.Collectors.joining(java.io.File.pathSeparator));
    }

    private static BrokerNode launch(String name, List<String> command, int port, Path log, Path workDir,
                                     Cleanup cleanup) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        cleanup.track(process);
        BrokerNode node = new BrokerNode(name, process, port, log, cleanup, command, workDir);
        try {
            Cleanup.awaitPort(process, port, STARTUP_TIMEOUT, name);
        } catch (RuntimeException | InterruptedException e) {
            node.printLogTail(30);
            node.close();
            throw e;
        }
        return node;
    }

    public String name() {
        return name;
    }

    /** Waits until this node also accepts connections on {@code otherPort} (a second listener). */
    void awaitPort(int otherPort) throws InterruptedException {
        Cleanup.awaitPort(process, otherPort, STARTUP_TIMEOUT, name);
    }

    public String bootstrap() {
        return "127.0.0.1:" + port;
    }

    public long pid() {
        return process.pid();
    }

    /** CPU time (user + system, all threads) the broker's process has used so far, or null where the OS does not say. */
    public Duration cpuTime() {
        return process.info().totalCpuDuration().orElse(null);
    }

    public boolean alive() {
        return process.isAlive();
    }

    public Path log() {
        return log;
    }

    public List<String> command() {
        return command;
    }

    /**
     * Creates a topic with the Admin client (replication factor 1), retrying for up to a minute
     * while the broker settles, and waits until every partition has a leader.
     */
    public void createTopic(String topic, int partitions) throws InterruptedException {
        createTopic(topic, partitions, (short) 1, Map.of());
    }

    /**
     * Creates a topic with {@code replicationFactor} replicas and the topic {@code configs}, retrying for up to a
     * minute, and waits until every partition has a leader and a full ISR (as many replicas as the factor).
     */
    public void createTopic(String topic, int partitions, short replicationFactor, Map<String, String> configs)
            throws InterruptedException {
        Properties config = new Properties();
        config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 20_000);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        try (Admin admin = Admin.create(config)) {
            Exception last = null;
            boolean created = false;
            while (!created && System.nanoTime() < deadline) {
                checkAlive();
                try {
                    admin.createTopics(List.of(new NewTopic(topic, partitions, replicationFactor).configs(configs))).all()
                            .get(25, TimeUnit.SECONDS);
                    created = true;
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof TopicExistsException) {
                        created = true;
                    } else {
                        last = e;
                        Thread.sleep(500);
                    }
                } catch (TimeoutException e) {
                    last = e;
                }
            }
            if (!created) {
                throw new IllegalStateException(name + ": could not create topic " + topic, last);
            }
            while (System.nanoTime() < deadline) {
                checkAlive();
                try {
                    TopicDescription description = admin.describeTopics(List.of(topic)).allTopicNames()
                            .get(10, TimeUnit.SECONDS).get(topic);
                    if (description.partitions().size() == partitions && description.partitions().stream()
                            .allMatch(p -> p.leader() != null && !p.leader().isEmpty()
                                    && p.isr().size() >= replicationFactor)) {
                        return;
                    }
                } catch (ExecutionException | TimeoutException e) {
                    last = e;
                }
                Thread.sleep(200);
            }
            throw new IllegalStateException(name + ": topic " + topic + " has no leader for every partition", last);
        }
    }

    /**
     * Sets the share group's {@code share.auto.offset.reset} to earliest with the Admin client
     * (IncrementalAlterConfigs on a GROUP resource), the same call on either broker, so that a share
     * consumer reads the topic from its start; ShareConsumerPerformance does not do it itself.
     */
    void setShareGroupEarliest(String group) {
        Properties config = new Properties();
        config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 20_000);
        try (Admin admin = Admin.create(config)) {
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group),
                    List.of(new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"),
                            AlterConfigOp.OpType.SET)))).all().get(30, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException(name + ": could not set share.auto.offset.reset of " + group, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(name + ": interrupted", e);
        }
    }

    private void checkAlive() {
        if (!process.isAlive()) {
            throw new IllegalStateException(name + " exited with code " + process.exitValue());
        }
    }

    public void printLogTail(int lines) {
        System.out.println("  last lines of " + name + "'s log (" + log + "):");
        for (String line : Cleanup.tail(log, lines)) {
            System.out.println("    | " + line);
        }
    }

    /**
     * Kills the broker at once (SIGKILL) and returns after the signal was sent, without waiting for the
     * process to be reaped; {@link #stop()} afterwards reaps it.
     */
    public void kill() {
        process.destroyForcibly();
    }

    /**
     * Starts the same command again (same port, data and log file, appended to) after this node has been
     * stopped or killed, and waits until it accepts connections.
     */
    public BrokerNode relaunch() throws IOException, InterruptedException {
        stop();
        return launch(name, command, port, log, workDir, cleanup);
    }

    /** Stops the broker (SIGTERM, SIGKILL after {@link Cleanup#STOP_GRACE}); returns its exit code. */
    public int stop() {
        if (exitCode == null) {
            exitCode = Cleanup.stop(process, Cleanup.STOP_GRACE);
            cleanup.untrack(process);
        }
        return exitCode;
    }

    @Override
    public void close() {
        stop();
    }
}
