package dev.millrace.ra.it.recovery;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A WildFly ({@code standalone-full}) that a test starts as its own process and can kill with SIGKILL, unlike
 * Arquillian's managed container, whose server the test cannot kill and restart. It runs from the unpacked
 * distribution at {@code jbossHome} with its own server base directory (made once from a copy of {@code standalone/configuration},
 * which keeps the configuration, the deployment scanner's directory, the transaction log and the data across
 * restarts) and a port offset, so it never meets the Arquillian-managed servers' ports. Applications are deployed
 * by copying archives into {@code deployments/} (the scanner redeploys them on every start, as a real installation
 * does). {@link #close()} kills whatever is still running, and so does a shutdown hook if the test JVM exits first.
 */
final class WildFlyProcess implements ServerProcess {

    private final Path jbossHome;
    private final Path baseDir;
    private final List<String> arguments;
    private final Path console;
    private Process process;

    private WildFlyProcess(Path jbossHome, Path baseDir, List<String> arguments) {
        this.jbossHome = jbossHome;
        this.baseDir = baseDir;
        this.arguments = arguments;
        this.console = baseDir.resolve("log").resolve("console.log");
    }

    /**
     * Copies {@code jbossHome/standalone} to {@code baseDir} and hands {@code editConfig} the text of its
     * {@code standalone-full.xml} to change. {@code arguments} go on the server's command line
     * ({@code -Dname=value} system properties).
     */
    static WildFlyProcess prepare(Path jbossHome, Path baseDir, java.util.function.UnaryOperator<String> editConfig,
                                  List<String> arguments) throws IOException {
        copyTree(jbossHome.resolve("standalone").resolve("configuration"), baseDir.resolve("configuration"));
        Files.createDirectories(baseDir.resolve("deployments"));
        Path config = baseDir.resolve("configuration").resolve("standalone-full.xml");
        Files.writeString(config, editConfig.apply(Files.readString(config)));
        return new WildFlyProcess(jbossHome, baseDir, arguments);
    }

    Path deployments() {
        return baseDir.resolve("deployments");
    }

    /** Starts the server as a child process (its script, which runs the JVM); returns at once. */
    @Override
    public void start() throws IOException {
        List<String> command = new ArrayList<>(List.of(jbossHome.resolve("bin").resolve("standalone.sh").toString(),
                "-c", "standalone-full.xml", "-Djboss.server.base.dir=" + baseDir));
        command.addAll(arguments);
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(console.toFile()));
        Files.createDirectories(console.getParent());
        builder.environment().put("JBOSS_HOME", jbossHome.toString());
        builder.environment().put("JAVA_OPTS", "-Xms256m -Xmx512m -Djava.net.preferIPv4Stack=true");
        builder.environment().remove("LAUNCH_JBOSS_IN_BACKGROUND");
        process = builder.start();
        Process started = process;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            started.descendants().forEach(ProcessHandle::destroyForcibly);
            started.destroyForcibly();
        }));
    }

    @Override
    public String awaitOk(URI url, Duration timeout) throws InterruptedException {
        Process p = process;
        return HttpPolls.awaitOk(url, timeout, () -> p != null && p.isAlive(), this::logTail);
    }

    /** SIGKILL to the server's JVM and the script that started it, then waits for them to be gone. */
    @Override
    public void kill() throws InterruptedException {
        if (process == null) {
            return;
        }
        List<ProcessHandle> all = new ArrayList<>(process.descendants().toList());
        all.add(process.toHandle());
        for (ProcessHandle p : all) {
            p.destroyForcibly();
        }
        for (ProcessHandle p : all) {
            try {
                p.onExit().get(30, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                throw new IllegalStateException("process " + p.pid() + " outlived SIGKILL", e);
            }
        }
        process = null;
    }

    /** The last lines the server printed on its console. */
    @Override
    public String logTail() {
        try {
            List<String> lines = Files.readAllLines(console, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
        } catch (IOException e) {
            return "(no console: " + e + ")";
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> paths = Files.walk(from)) {
            paths.forEach(p -> {
                Path target = to.resolve(from.relativize(p).toString());
                try {
                    if (Files.isDirectory(p)) {
                        Files.createDirectories(target);
                    } else {
                        Files.copy(p, target, StandardCopyOption.REPLACE_EXISTING);
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
    }
}
