package dev.millrace.bench.jms;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.millrace.bench.e2e.BrokerNode;
import dev.millrace.bench.e2e.Cleanup;
import jakarta.jms.ConnectionFactory;

/**
 * The parts of {@link JmsUserComparison} for one broker ({@code millrace} or {@code artemis}), each filling in its
 * figures in a {@link UserOutcome}; a part (or one run of it) that fails is recorded there and the next one runs.
 *
 * <ul>
 *   <li><b>fresh</b>: for each destination kind and rate, a new broker JVM (fresh data directory) and a new client
 *       JVM ({@link JmsClientMain}): {@link UserSettings#freshUnmeasured} messages at the rate, unmeasured, then
 *       {@link UserSettings#latencySeconds} measured ({@link PacedLatency}); both JVMs are stopped afterwards;</li>
 *   <li>on one long-lived broker JVM, after a warm-up in this JVM ({@link UserSettings#warmupMessages} sent
 *       asynchronously and received, then three unmeasured seconds of the listener path on a queue and on a topic):
 *       <ul>
 *         <li><b>steady</b>: latency for each destination kind and rate, the first
 *             {@link UserSettings#steadyUnmeasuredSeconds} left out;</li>
 *         <li><b>throughput</b>: for each {@link AckMode}, a queue filled with N messages by async sends (that fill's
 *             rate is an async-send figure) and then drained by one consumer in that mode;</li>
 *         <li><b>queue-topic</b> (Millrace only): N messages into a queue, drained in AUTO_ACKNOWLEDGE, and N into a
 *             topic with a subscriber made before the fill ({@link UserSettings#topicSubscriber}: plain, or a
 *             durable subscription), drained in AUTO_ACKNOWLEDGE;</li>
 *         <li><b>footprint</b>: for each connection count, a new client JVM ({@link ClientFootprint}).</li>
 *       </ul></li>
 * </ul>
 *
 * <p>Not thread-safe: run by the comparison's main thread.
 */
final class UserParts {

    /** One measurement; exceptions are recorded as the part's failure. */
    private interface Step {
        void run() throws Exception;
    }

    private final UserSettings settings;
    private final JmsBrokers.Options options;
    private final Path workDir;
    private final Cleanup cleanup;

    UserParts(UserSettings settings, JmsBrokers.Options options, Path workDir, Cleanup cleanup) {
        this.settings = settings;
        this.options = options;
        this.workDir = workDir;
        this.cleanup = cleanup;
    }

    /** Runs every selected part against {@code broker} ({@code millrace} or {@code artemis}). */
    void run(String broker, UserOutcome outcome) throws Exception {
        if (settings.runs("fresh")) {
            for (DestinationKind kind : DestinationKind.values()) {
                for (int rate : settings.rates()) {
                    attempt(outcome, "fresh " + UserOutcome.key(kind, rate), () -> fresh(broker, kind, rate, outcome));
                }
            }
        }
        boolean measures = settings.runs("steady") || settings.runs("throughput") || settings.runs("footprint")
                || (settings.runs("queue-topic") && broker.equals("millrace"));
        if (!measures) {
            return;
        }
        Path dir = Files.createDirectories(workDir.resolve(broker));
        BrokerNode node = JmsBrokers.startNode(broker, options, dir, cleanup);
        try {
            progress(node.name() + " (long-lived) accepts connections on " + node.bootstrap() + " (pid " + node.pid()
                    + ")");
            ConnectionFactory factory = JmsBrokers.factory(node.name(), node.bootstrap());
            if (settings.runs("steady") || settings.runs("throughput") || settings.runs("queue-topic")) {
                if (!attempt(outcome, "warm-up", () -> warmup(factory))) {
                    return;
                }
            }
            if (settings.runs("steady")) {
                for (DestinationKind kind : DestinationKind.values()) {
                    for (int rate : settings.rates()) {
                        attempt(outcome, "steady " + UserOutcome.key(kind, rate), () -> steady(factory, kind, rate,
                                outcome));
                    }
                }
            }
            if (settings.runs("throughput")) {
                for (AckMode mode : AckMode.values()) {
                    attempt(outcome, "throughput " + mode, () -> throughput(factory, mode, outcome));
                }
            }
            if (settings.runs("queue-topic") && broker.equals("millrace")) {
                attempt(outcome, "queue-topic", () -> queueTopic(factory, outcome));
            }
            if (settings.runs("footprint")) {
                for (int connections : settings.connections()) {
                    attempt(outcome, "footprint " + connections, () -> footprint(node, connections, outcome));
                }
            }
        } finally {
            node.stop();
        }
    }

    private void fresh(String broker, DestinationKind kind, int rate, UserOutcome outcome) throws Exception {
        Path dir = Files.createDirectories(workDir.resolve("fresh-" + broker + "-" + kind.label() + "-" + rate));
        BrokerNode node = JmsBrokers.startNode(broker, options, dir, cleanup);
        try {
            long measured = (long) rate * settings.latencySeconds();
            progress(node.name() + " fresh broker (pid " + node.pid() + ") and fresh client: " + kind.label()
                    + " at " + rate + " msgs/s");
            long timeoutMs = (settings.freshUnmeasured() + measured) * 1000 / rate + 180_000;
            Map<String, Double> r = ChildClient.run(List.of("latency", node.name(), node.bootstrap(), kind.label(),
                    "fresh-" + kind.label(), Integer.toString(rate), Long.toString(settings.freshUnmeasured()),
                    Long.toString(measured)), dir.resolve("client.log"), timeoutMs, cleanup);
            PacedLatency.Figures figures = new PacedLatency.Figures(r.get("p50Us"), r.get("p99Us"), r.get("maxUs"),
                    r.get("count").longValue(), r.get("achievedRate"));
            outcome.fresh.put(UserOutcome.key(kind, rate), figures);
            progress(describe(figures));
        } catch (Exception e) {
            node.printLogTail(20);
            throw e;
        } finally {
            node.stop();
        }
    }

    private void warmup(ConnectionFactory factory) throws Exception {
        progress("warm-up: " + settings.warmupMessages() + " async sends and receives, then the listener path");
        ConsumeThroughput throughput = throughput(factory);
        if (settings.warmupMessages() > 0) {
            throughput.fill(DestinationKind.QUEUE, "u-warmup", settings.warmupMessages());
            throughput.consumeQueue("u-warmup", settings.warmupMessages(), AckMode.AUTO);
        }
        int rate = settings.rates().stream().max(Integer::compare).orElseThrow();
        for (DestinationKind kind : DestinationKind.values()) {
            latency(factory).run(kind, "u-warmup-listener-" + kind.label(), rate, 0, rate * 3L);
        }
    }

    private void steady(ConnectionFactory factory, DestinationKind kind, int rate, UserOutcome outcome)
            throws Exception {
        progress("steady: " + kind.label() + " at " + rate + " msgs/s for " + settings.latencySeconds() + " s");
        PacedLatency.Figures figures = latency(factory).run(kind, "u-steady-" + kind.label() + "-" + rate, rate,
                (long) rate * settings.steadyUnmeasuredSeconds(), (long) rate * settings.latencySeconds());
        outcome.steady.put(UserOutcome.key(kind, rate), figures);
        progress(describe(figures));
    }

    private void throughput(ConnectionFactory factory, AckMode mode, UserOutcome outcome) throws Exception {
        String queue = "u-consume-" + mode.name().toLowerCase(Locale.ROOT);
        ConsumeThroughput throughput = throughput(factory);
        double fill = throughput.fill(DestinationKind.QUEUE, queue, settings.messages());
        outcome.fills.add(fill);
        progress(String.format(Locale.ROOT, "async send of %,d: %,.0f msgs/s; consume, %s", settings.messages(), fill,
                mode.description()));
        double consume = throughput.consumeQueue(queue, settings.messages(), mode);
        outcome.consume.put(mode, consume);
        progress(String.format(Locale.ROOT, "  %,.0f msgs/s", consume));
    }

    private void queueTopic(ConnectionFactory factory, UserOutcome outcome) throws Exception {
        ConsumeThroughput throughput = throughput(factory);
        progress("queue-topic: fill and drain a queue of " + settings.messages());
        throughput.fill(DestinationKind.QUEUE, "u-qt-queue", settings.messages());
        outcome.queueRate = throughput.consumeQueue("u-qt-queue", settings.messages(), AckMode.AUTO);
        progress(String.format(Locale.ROOT, "  queue %,.0f msgs/s; fill and drain a topic, %s subscriber",
                outcome.queueRate, settings.topicSubscriber()));
        if (settings.topicSubscriber().equals("durable")) {
            throughput.subscribeDurable("u-qt-topic");
            throughput.fill(DestinationKind.TOPIC, "u-qt-topic", settings.messages());
            outcome.topicRate = throughput.consumeDurable("u-qt-topic", settings.messages());
        } else {
            outcome.topicRate = throughput.fillAndConsumePlain("u-qt-topic", settings.messages());
        }
        progress(String.format(Locale.ROOT, "  topic %,.0f msgs/s", outcome.topicRate));
    }

    private void footprint(BrokerNode node, int connections, UserOutcome outcome) throws Exception {
        progress("footprint: " + connections + " connections in a new client JVM");
        Map<String, Double> r = ChildClient.run(List.of("footprint", node.name(), node.bootstrap(),
                        Integer.toString(connections), "u-footprint-" + connections),
                workDir.resolve(node.name() + "-footprint-" + connections + ".log"), 600_000, cleanup);
        ClientFootprint.Figures figures = new ClientFootprint.Figures(r.get("connections").intValue(),
                r.get("threadsBefore").intValue(), r.get("threadsAfter").intValue(),
                r.get("heapBeforeBytes").longValue(), r.get("heapAfterBytes").longValue(), r.get("setupMs"));
        outcome.footprint.put(connections, figures);
        progress(String.format(Locale.ROOT, "  threads %d -> %d (%.2f per connection), heap %.1f MiB added, "
                        + "setup %.0f ms", figures.threadsBefore(), figures.threadsAfter(),
                figures.threadsAddedPerConnection(), figures.heapAddedMiB(), figures.setupMs()));
    }

    private static ConsumeThroughput throughput(ConnectionFactory factory) {
        return new ConsumeThroughput(factory, UserSettings.MESSAGE_BYTES, UserSettings.ASYNC_WINDOW,
                UserSettings.TIMEOUT_MS);
    }

    private static PacedLatency latency(ConnectionFactory factory) {
        return new PacedLatency(factory, UserSettings.MESSAGE_BYTES, UserSettings.TIMEOUT_MS);
    }

    private static String describe(PacedLatency.Figures f) {
        return String.format(Locale.ROOT, "  p50 %.2f ms, p99 %.2f ms, max %.2f ms (%,d measured, %,.0f msgs/s sent)",
                f.p50Us() / 1e3, f.p99Us() / 1e3, f.maxUs() / 1e3, f.count(), f.achievedRate());
    }

    private static boolean attempt(UserOutcome outcome, String part, Step step) {
        try {
            step.run();
            return true;
        } catch (Exception e) {
            outcome.failures.put(part, e.toString());
            System.out.println("  " + part + " failed: " + e);
            e.printStackTrace(System.out);
            return false;
        }
    }

    static void progress(String message) {
        System.out.println("[" + java.time.LocalTime.now().withNano(0) + "] " + message);
    }
}
