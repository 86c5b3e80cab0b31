package dev.millrace.broker.controller;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.alipay.sofa.jraft.Node;
import com.alipay.sofa.jraft.core.NodeImpl;
import com.alipay.sofa.jraft.util.Describer;

/**
 * Reports a voter that SOFAJRaft made leader but that has not become the active controller: jraft calls
 * {@code onLeaderStart} only once the new term's configuration entry is committed, and until then no controller
 * fences dead brokers or moves their partitions. That normally takes well under a second; a chaos run once saw it take
 * 13.8 s with both live voters connected (bench/RESULTS.md), for no reason the logs showed. When the wait passes
 * {@code thresholdMs}, this logs one WARN for that wait with the stacks of the jraft and SOFABolt threads and the
 * node's own description (ballot box, replicators, log manager), so that the next occurrence can be explained. It
 * changes nothing in the quorum.
 *
 * <p>Threading: {@link #check} runs on the watchdog's own daemon thread (or a test's); {@link #close} from any thread.
 */
final class LeaderStartWatchdog implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(LeaderStartWatchdog.class);
    private static final long CHECK_INTERVAL_MS = 1_000;
    private static final int MAX_FRAMES = 25;

    private final Supplier<Node> node;
    private final LongSupplier activeTerm;
    private final LongSupplier clockMs;
    private final long thresholdMs;
    private final String logPrefix;
    private ScheduledExecutorService executor;

    /** When this node was first seen leading without being active, or -1 when it is not waiting. */
    private long waitingSinceMs = -1;
    private boolean reported;

    /**
     * @param node        the quorum node, or null while there is none
     * @param activeTerm  the term this voter is active controller in, or -1
     * @param clockMs     a monotonic clock in milliseconds
     * @param thresholdMs how long a leader may wait for its start before it is reported
     */
    LeaderStartWatchdog(Supplier<Node> node, LongSupplier activeTerm, LongSupplier clockMs, long thresholdMs,
                        String logPrefix) {
        this.node = node;
        this.activeTerm = activeTerm;
        this.clockMs = clockMs;
        this.thresholdMs = thresholdMs;
        this.logPrefix = logPrefix;
    }

    /** Checks once a second from now on, on a daemon thread. */
    synchronized void start() {
        if (executor != null) {
            return;
        }
        executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, "millrace-quorum-watchdog");
            thread.setDaemon(true);
            return thread;
        });
        executor.scheduleWithFixedDelay(() -> {
            try {
                check();
            } catch (RuntimeException e) {
                LOG.debug("{}Leader-start check failed", logPrefix, e);
            }
        }, CHECK_INTERVAL_MS, CHECK_INTERVAL_MS, TimeUnit.MILLISECONDS);
    }

    /**
     * One check. A wait starts when the node is first seen leading while no term is active and ends when it is
     * active or no longer leads; it is reported at most once.
     *
     * @return the report logged by this check, or null
     */
    String check() {
        Node current = node.get();
        if (!(current instanceof NodeImpl impl) || !impl.isLeader(false) || activeTerm.getAsLong() >= 0) {
            waitingSinceMs = -1;
            reported = false;
            return null;
        }
        long nowMs = clockMs.getAsLong();
        if (waitingSinceMs < 0) {
            waitingSinceMs = nowMs;
            return null;
        }
        long waitedMs = nowMs - waitingSinceMs;
        if (waitedMs < thresholdMs || reported) {
            return null;
        }
        reported = true;
        String report = report(impl, waitedMs);
        LOG.warn("{}", report);
        return report;
    }

    private String report(NodeImpl impl, long waitedMs) {
        StringBuilder out = new StringBuilder(logPrefix).append("Leader of the quorum")
                .append(" for at least ").append(waitedMs).append(" ms but not yet the active controller: the term's ")
                .append("configuration entry is not committed. Quorum threads:\n");
        for (Map.Entry<Thread, StackTraceElement[]> entry : Thread.getAllStackTraces().entrySet()) {
            String name = entry.getKey().getName();
            if (!name.startsWith("JRaft") && !name.startsWith("Bolt") && !name.startsWith("Append-Entries")) {
                continue;
            }
            out.append("  \"").append(name).append("\" ").append(entry.getKey().getState()).append('\n');
            StackTraceElement[] frames = entry.getValue();
            for (int i = 0; i < Math.min(frames.length, MAX_FRAMES); i++) {
                out.append("      at ").append(frames[i]).append('\n');
            }
        }
        StringWriter description = new StringWriter();
        try (PrintWriter writer = new PrintWriter(description)) {
            impl.describe(new Describer.DefaultPrinter(writer));
        }
        return out.append("Node:\n").append(description).toString();
    }

    @Override
    public synchronized void close() {
        if (executor != null) {
            executor.shutdownNow();
            executor = null;
        }
    }
}
