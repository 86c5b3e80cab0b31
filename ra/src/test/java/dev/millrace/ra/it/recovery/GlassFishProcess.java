package dev.millrace.ra.it.recovery;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A GlassFish domain of a test's own, made with {@code asadmin create-domain} in the test's directory with a port
 * base apart from the Arquillian suite's {@code domain1}, its listeners moved to 127.0.0.1 (as {@code ra/pom.xml}
 * does for {@code domain1}), started with {@code asadmin start-domain} and killed with SIGKILL through the process id
 * the server writes to {@code config/pid} ({@code start-domain} leaves the server running on its own). Configured
 * and deployed to through {@link #asadmin}. {@link #close()} kills it if it still runs, and so does a shutdown hook if
 * the test JVM exits first.
 */
final class GlassFishProcess implements ServerProcess {

    private static final String DOMAIN = "recovery";

    private final Path asadmin;
    private final Path domainDir;
    private final int adminPort;
    private ProcessHandle server;

    private GlassFishProcess(Path asadmin, Path domainDir, int adminPort) {
        this.asadmin = asadmin;
        this.domainDir = domainDir;
        this.adminPort = adminPort;
    }

    /** Creates the domain (admin without a password) with ports from {@code portBase} (admin: +48, HTTP: +80). */
    static GlassFishProcess create(Path glassfishHome, Path domainDir, int portBase)
            throws IOException, InterruptedException {
        GlassFishProcess gf = new GlassFishProcess(glassfishHome.resolve("bin").resolve("asadmin"), domainDir,
                portBase + 48);
        Files.createDirectories(domainDir);
        gf.run(Duration.ofSeconds(120), "--user", "admin", "create-domain", "--domaindir", domainDir.toString(),
                "--portbase", String.valueOf(portBase), "--nopassword=true", "--checkports=true", DOMAIN);
        Path xml = domainDir.resolve(DOMAIN).resolve("config").resolve("domain.xml");
        String config = Files.readString(xml).replace("address=\"0.0.0.0\"", "address=\"127.0.0.1\"")
                .replaceAll("<network-listener (?![^>]*address=)", "<network-listener address=\"127.0.0.1\" ");
        Files.writeString(xml, config);
        return gf;
    }

    /** {@code asadmin --port <admin> --interactive=false <arguments>}; fails with its output unless it succeeds. */
    String asadmin(String... arguments) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("--user", "admin", "--port", String.valueOf(adminPort)));
        command.addAll(List.of(arguments));
        return run(Duration.ofSeconds(180), command.toArray(String[]::new));
    }

    @Override
    public void start() throws IOException, InterruptedException {
        run(Duration.ofSeconds(180), "start-domain", "--domaindir", domainDir.toString(), DOMAIN);
        long pid = Long.parseLong(Files.readString(domainDir.resolve(DOMAIN).resolve("config").resolve("pid"))
                .trim());
        Optional<ProcessHandle> handle = ProcessHandle.of(pid);
        server = handle.orElseThrow(() -> new IllegalStateException("GlassFish's pid " + pid + " is not running"));
        ProcessHandle started = server;
        Runtime.getRuntime().addShutdownHook(new Thread(started::destroyForcibly));
    }

    @Override
    public String awaitOk(URI url, Duration timeout) throws InterruptedException {
        ProcessHandle p = server;
        return HttpPolls.awaitOk(url, timeout, () -> p != null && p.isAlive(), this::logTail);
    }

    @Override
    public void kill() throws InterruptedException {
        if (server == null) {
            return;
        }
        server.destroyForcibly();
        try {
            server.onExit().get(30, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("GlassFish (" + server.pid() + ") outlived SIGKILL", e);
        }
        server = null;
    }

    @Override
    public String logTail() {
        try {
            List<String> lines = Files.readAllLines(domainDir.resolve(DOMAIN).resolve("logs").resolve("server.log"),
                    StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 80), lines.size()));
        } catch (IOException e) {
            return "(no server.log: " + e + ")";
        }
    }

    private String run(Duration timeout, String... arguments) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(asadmin.toString(), "--interactive=false"));
        command.addAll(List.of(arguments));
        Path out = Files.createTempFile(domainDir, "asadmin", ".out");
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        if (!p.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException(command + " still running after " + timeout + ":\n"
                    + Files.readString(out));
        }
        String output = Files.readString(out);
        if (p.exitValue() != 0) {
            throw new IllegalStateException(command + " failed (" + p.exitValue() + "):\n" + output);
        }
        return output;
    }
}
