package dev.millrace.bench.jms;

import java.util.List;
import java.util.Locale;

/**
 * What {@link JmsUserComparison} runs: the parts, and the sizes of each. {@link #full} and {@link #quick} give the
 * defaults; the command line overrides single values. Immutable.
 *
 * @param parts              of fresh, steady, throughput, queue-topic, footprint, in that order
 * @param messages           N, the messages each pre-filled destination holds (throughput and queue-topic parts)
 * @param warmupMessages     sent and received unmeasured before the steady and throughput parts
 * @param rates              messages/s of the latency runs
 * @param latencySeconds     measured seconds of each latency run
 * @param freshUnmeasured    messages a fresh client sends (at the run's rate) before measuring
 * @param steadyUnmeasuredSeconds seconds at the start of each steady run left out of the histogram
 * @param connections        connection counts of the footprint part
 * @param topicSubscriber    the queue-topic part's topic consumer: {@code plain} (a non-durable subscriber) or
 *                           {@code durable} (a durable subscription; Millrace commits its offsets synchronously per
 *                           message in AUTO_ACKNOWLEDGE, which bounds that rate)
 */
record UserSettings(List<String> parts, long messages, long warmupMessages, List<Integer> rates, int latencySeconds,
                    long freshUnmeasured, int steadyUnmeasuredSeconds, List<Integer> connections,
                    String topicSubscriber) {

    static final List<String> PARTS = List.of("fresh", "steady", "throughput", "queue-topic", "footprint");
    static final int MESSAGE_BYTES = 1024;
    static final int ASYNC_WINDOW = 10_000;
    static final long TIMEOUT_MS = 120_000;

    UserSettings {
        parts = List.copyOf(parts);
        for (String part : parts) {
            if (!PARTS.contains(part)) {
                throw new IllegalArgumentException("unknown part '" + part + "': expected some of " + PARTS);
            }
        }
        positive("messages", messages);
        positive("latency seconds", latencySeconds);
        if (warmupMessages < 0 || freshUnmeasured < 0 || steadyUnmeasuredSeconds < 0) {
            throw new IllegalArgumentException("warm-up and unmeasured counts must not be negative");
        }
        rates = List.copyOf(rates);
        rates.forEach(r -> positive("rate", r));
        connections = List.copyOf(connections);
        connections.forEach(c -> positive("connections", c));
        if (!topicSubscriber.equals("plain") && !topicSubscriber.equals("durable")) {
            throw new IllegalArgumentException("topic subscriber must be plain or durable, not " + topicSubscriber);
        }
    }

    static UserSettings full() {
        return new UserSettings(PARTS, 1_000_000, 500_000, List.of(1_000, 5_000), 20, 30_000, 2,
                List.of(50, 500), "plain");
    }

    static UserSettings quick() {
        return new UserSettings(PARTS, 20_000, 20_000, List.of(1_000, 5_000), 5, 5_000, 1, List.of(50), "plain");
    }

    boolean runs(String part) {
        return parts.contains(part);
    }

    private static void positive(String what, long value) {
        if (value <= 0) {
            throw new IllegalArgumentException(what + " must be positive, not " + value);
        }
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "parts %s, N %,d, warm-up %,d, rates %s msgs/s, %d s per latency run "
                        + "(fresh: after %,d unmeasured messages; steady: first %d s left out), connections %s, "
                        + "%s topic subscriber, 1 KiB persistent BytesMessages", parts, messages, warmupMessages, rates,
                latencySeconds, freshUnmeasured, steadyUnmeasuredSeconds, connections, topicSubscriber);
    }
}
