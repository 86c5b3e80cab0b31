package dev.millrace.bench.jms;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What {@link JmsUserComparison} measured on one broker, filled in as the parts run; a figure a part did not produce
 * stays absent, and the part's failure is kept in {@link #failures}.
 *
 * <p>Not thread-safe: written and read by the comparison's main thread.
 */
final class UserOutcome {

    /** Fresh latency runs by {@link #key}. */
    final Map<String, PacedLatency.Figures> fresh = new LinkedHashMap<>();
    /** Steady-state latency runs by {@link #key}. */
    final Map<String, PacedLatency.Figures> steady = new LinkedHashMap<>();
    /** Async-send rates of the throughput part's fills (msgs/s), in fill order. */
    final List<Double> fills = new ArrayList<>();
    /** Consume rates (msgs/s) from a pre-filled queue, by acknowledgement mode. */
    final Map<AckMode, Double> consume = new EnumMap<>(AckMode.class);
    /** Client footprints by number of connections. */
    final Map<Integer, ClientFootprint.Figures> footprint = new TreeMap<>();
    /** Queue and durable-topic consume rates of the queue-topic part (msgs/s), or null. */
    Double queueRate;
    Double topicRate;
    /** Failed parts: name to what went wrong. */
    final Map<String, String> failures = new LinkedHashMap<>();

    static String key(DestinationKind kind, int rate) {
        return kind.label() + "@" + rate;
    }

    /** The median of the fills' rates, or null without fills. */
    Double asyncSend() {
        if (fills.isEmpty()) {
            return null;
        }
        List<Double> sorted = new ArrayList<>(fills);
        sorted.sort(null);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }
}
