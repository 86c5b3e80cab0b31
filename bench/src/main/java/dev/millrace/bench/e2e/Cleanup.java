package dev.millrace.bench.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Stops every process the comparison started and deletes its work directory, exactly once, from
 * the main thread's {@code finally} or from a shutdown hook (Ctrl-C, SIGTERM), whichever comes
 * first. A process tracked after that is killed at once. Also holds the small process, port and
 * file helpers the comparison uses.
 */
public final class Cleanup implements Runnable {

    public static final Duration STOP_GRACE = Duration.ofSeconds(30);

    private final List<Process> processes = new ArrayList<>();
    private final Path workDir;
    private final boolean keep;
    private boolean done;

    public Cleanup(Path workDir, boolean keep) {
        this.workDir = workDir;
        this.keep = keep;
    }

    /** A comparison run in its work directory; returns the process exit code. */
    @FunctionalInterface
    interface Comparison {
        int run(Path workDir, Cleanup cleanup) throws Exception;
    }

    /**
     * Runs {@code comparison} in a new temporary directory named {@code prefix...}, which this removes afterwards
     * with every process the comparison tracked (kept if {@code keep}), also from a shutdown hook if the JVM is
     * stopped first; prints the total time and exits the JVM with the comparison's code (1 if it threw).
     */
    static void runAndExit(String prefix, boolean keep, Comparison comparison) {
        long start = System.nanoTime();
        int exit;
        Cleanup cleanup = null;
        try {
            Path workDir = Files.createTempDirectory(prefix);
            cleanup = new Cleanup(workDir, keep);
            Runtime.getRuntime().addShutdownHook(new Thread(cleanup, prefix + "cleanup"));
            exit = comparison.run(workDir, cleanup);
        } catch (Exception e) {
            System.out.println("The comparison could not run: " + e);
            e.printStackTrace(System.out);
            exit = 1;
        } finally {
            if (cleanup != null) {
                cleanup.run();
            }
        }
        System.out.println("Total time: " + BrokerComparison.elapsed(start));
        System.exit(exit);
    }

    /** Stops {@code process} with the others at cleanup; kills it at once if cleanup has already run. */
    public synchronized void track(Process process) {
        if (done) {
            process.destroyForcibly();
            throw new IllegalStateException("shutting down");
        }
        processes.add(process);
    }

    /** Forgets a process that its owner has stopped. */
    public synchronized void untrack(Process process) {
        processes.remove(process);
    }

    @Override
    public synchronized void run() {
        if (done) {
            return;
        }
        done = true;
        for (int i = processes.size() - 1; i >= 0; i--) {
            stop(processes.get(i), STOP_GRACE);
        }
        processes.clear();
        if (keep) {
            System.out.println("Kept the work directory (logs and data): " + workDir);
        } else {
            deleteTree(workDir);
        }
    }

    /**
     * Stops a process: SIGTERM, then SIGKILL if it has not exited after {@code grace}. Returns its
     * exit code, or -1 if it could not be stopped.
     */
    public static int stop(Process process, Duration grace) {
        try {
            if (process.isAlive()) {
                process.destroy();
                if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                    System.out.println("  pid " + process.pid() + " did not stop within " + grace.toSeconds()
                            + " s of SIGTERM; sending SIGKILL");
                    process.destroyForcibly();
                    if (!process.waitFor(10, TimeUnit.SECONDS)) {
                        return -1;
                    }
                }
            }
            return process.exitValue();
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    public static void deleteTree(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException | UncheckedIOException e) {
            System.err.println("Could not delete " + dir + ": " + e);
        }
    }

    /** A port that was free on 127.0.0.1 a moment ago. */
    public static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Waits until 127.0.0.1:port accepts a connection; fails if the process exits or time runs out. */
    static void awaitPort(Process process, int port, Duration timeout, String what) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException(what + " exited with code " + process.exitValue()
                        + " before accepting connections on port " + port);
            }
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
                return;
            } catch (IOException notYet) {
                Thread.sleep(200);
            }
        }
        throw new IllegalStateException(what + " did not accept connections on port " + port + " within "
                + timeout.toSeconds() + " s");
    }

    /** The file's lines, or none if it cannot be read. */
    static List<String> readLines(Path file) {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            try {
                return new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1).lines().toList();
            } catch (IOException again) {
                return List.of();
            }
        }
    }

    /** The last {@code count} lines of a file, for error reports. */
    public static List<String> tail(Path file, int count) {
        List<String> lines = readLines(file);
        return lines.subList(Math.max(0, lines.size() - count), lines.size());
    }

    /**
     * Lines of a log that say what went wrong: WARN/ERROR log lines and exception lines (not their
     * stack frames), without repeats, at most {@code max} of them, each cut to 400 characters.
     */
    static List<String> problems(List<String> lines, int max) {
        List<String> found = new ArrayList<>();
        for (String line : lines) {
            String trimmed = line.strip();
            boolean logged = trimmed.contains(" WARN ") || trimmed.contains(" ERROR ");
            boolean exception = !line.startsWith("\t") && !trimmed.startsWith("at ")
                    && (trimmed.matches("^([a-z]\\w*\\.)+\\w*(Exception|Error)(: .*)?$")
                    || trimmed.startsWith("Caused by:") || trimmed.startsWith("Exception in thread"));
            if (!logged && !exception) {
                continue;
            }
            String cut = trimmed.length() > 400 ? trimmed.substring(0, 400) + "..." : trimmed;
            if (!found.contains(cut)) {
                found.add(cut);
                if (found.size() == max) {
                    break;
                }
            }
        }
        return found;
    }
}
