package dev.millrace.broker.server;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

/**
 * Captures what the broker logs (slf4j-simple writes to {@code System.err}, looked up on every line) while it is
 * open, still passing it on to the real {@code System.err}. Thread-safe.
 */
final class LogCapture implements AutoCloseable {

    private final PrintStream original = System.err;
    private final ByteArrayOutputStream captured = new ByteArrayOutputStream();

    LogCapture() {
        OutputStream tee = new OutputStream() {
            @Override
            public void write(int b) {
                synchronized (captured) {
                    captured.write(b);
                }
                original.write(b);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                synchronized (captured) {
                    captured.write(b, off, len);
                }
                original.write(b, off, len);
            }
        };
        System.setErr(new PrintStream(tee, true, StandardCharsets.UTF_8));
    }

    List<String> lines() {
        synchronized (captured) {
            return captured.toString(StandardCharsets.UTF_8).lines().toList();
        }
    }

    /** The lines containing every one of {@code parts}. */
    List<String> linesWith(String... parts) {
        Predicate<String> all = line -> {
            for (String part : parts) {
                if (!line.contains(part)) {
                    return false;
                }
            }
            return true;
        };
        return lines().stream().filter(all).toList();
    }

    /** Waits until a line contains every one of {@code parts}; returns the matching lines (empty after the timeout). */
    List<String> awaitLinesWith(long timeoutMs, String... parts) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        List<String> found = linesWith(parts);
        while (found.isEmpty() && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            found = linesWith(parts);
        }
        return found;
    }

    @Override
    public void close() {
        System.setErr(original);
    }
}
