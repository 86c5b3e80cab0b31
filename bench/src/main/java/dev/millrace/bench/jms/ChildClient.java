package dev.millrace.bench.jms;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.millrace.bench.e2e.BrokerComparison;
import dev.millrace.bench.e2e.BrokerNode;
import dev.millrace.bench.e2e.Cleanup;

/**
 * Runs {@link JmsClientMain} in a JVM of its own ({@link #CLIENT_JVM}, this JVM's classpath), waits for it, echoes
 * its output and returns the figures of its {@code RESULT} line. A client that does not finish in time is stopped and
 * reported as a failure.
 *
 * <p>Not thread-safe: one child at a time.
 */
final class ChildClient {

    /** The client JVM: heap fixed and touched up front (DESIGN.md: first touch of memory is slow here). */
    static final List<String> CLIENT_JVM = List.of("-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch");

    private ChildClient() {
    }

    /** Runs {@code JmsClientMain args...}, logging to {@code log}; returns the RESULT line's key=value pairs. */
    static Map<String, Double> run(List<String> args, Path log, long timeoutMs, Cleanup cleanup)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(BrokerComparison.javaBinary());
        command.addAll(CLIENT_JVM);
        String options = System.getProperty("millrace.factory.options", "");
        if (!options.isBlank()) { // the fresh and footprint clients build their factory as this JVM does
            command.add("-Dmillrace.factory.options=" + options);
        }
        command.add("-cp");
        command.add(BrokerNode.ownClasspath());
        command.add(JmsClientMain.class.getName());
        command.addAll(args);
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        cleanup.track(process);
        try {
            if (!process.waitFor(timeoutMs, TimeUnit.MILLISECONDS)) {
                Cleanup.stop(process, Cleanup.STOP_GRACE);
                throw new IllegalStateException("client " + args + " did not finish within " + timeoutMs + " ms; "
                        + "last lines: " + Cleanup.tail(log, 10));
            }
        } finally {
            cleanup.untrack(process);
        }
        List<String> lines = Cleanup.tail(log, 200);
        Map<String, Double> result = null;
        for (String line : lines) {
            System.out.println("    | " + line);
            if (line.startsWith(JmsClientMain.RESULT + " ")) {
                result = parse(line);
            }
        }
        if (process.exitValue() != 0 || result == null) {
            throw new IllegalStateException("client " + args + " exited with " + process.exitValue()
                    + (result == null ? " without a RESULT line" : ""));
        }
        return result;
    }

    /** The key=value pairs of a line {@code RESULT k=v k=v ...}, values as numbers. */
    static Map<String, Double> parse(String line) {
        Map<String, Double> values = new LinkedHashMap<>();
        String[] parts = line.trim().split("\\s+");
        if (parts.length == 0 || !parts[0].equals(JmsClientMain.RESULT)) {
            throw new IllegalArgumentException("not a RESULT line: " + line);
        }
        for (int i = 1; i < parts.length; i++) {
            int eq = parts[i].indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("'" + parts[i] + "' is not key=value in: " + line);
            }
            try {
                values.put(parts[i].substring(0, eq), Double.parseDouble(parts[i].substring(eq + 1)));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("'" + parts[i] + "' has no number in: " + line, e);
            }
        }
        return values;
    }
}
