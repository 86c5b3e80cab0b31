package dev.millrace.bench.jms;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.BiPredicate;

/**
 * The Markdown table of {@link JmsUserComparison}: every figure with Millrace's value, the peer's (Artemis's, or for
 * the queue-topic row Millrace's own topic rate), the ratio, issue 21's target and whether it is met. A figure that
 * was not measured shows as "-", a target that cannot be judged without it as "-"; failures are listed under the
 * table.
 *
 * <p>Stateless.
 */
final class UserTables {

    /** A target on Millrace's figure {@code m} and the peer's {@code p} (either may be null: then not judged). */
    record Target(String text, BiPredicate<Double, Double> test, boolean needsPeer) {

        static final Target NONE = new Target("none", null, false);

        static Target atMostPeer() {
            return new Target("<= Artemis", (m, p) -> m <= p, true);
        }

        static Target atMost(double limit, String text) {
            return new Target(text, (m, p) -> m <= limit, false);
        }

        static Target peerTimes(double factor) {
            return new Target(String.format(Locale.ROOT, ">= %.0fx Artemis", factor), (m, p) -> m >= factor * p,
                    true);
        }

        static Target ratioAtLeast(double ratio) {
            return new Target(String.format(Locale.ROOT, "ratio >= %.1f", ratio), (m, p) -> m >= ratio * p, true);
        }

        String verdict(Double m, Double p) {
            if (test == null) {
                return "";
            }
            if (m == null || (needsPeer && (p == null || p == 0))) {
                return "-";
            }
            return test.test(m, p) ? "MET" : "MISSED";
        }
    }

    /** One line of the table; values as measured, formatted with {@code decimals}. */
    record Row(String figure, Double millrace, Double peer, int decimals, Target target) {
    }

    private UserTables() {
    }

    static List<Row> rows(UserOutcome m, UserOutcome a, UserSettings settings) {
        List<String> parts = settings.parts();
        List<Integer> rates = settings.rates();
        List<Integer> connections = settings.connections();
        List<Row> rows = new ArrayList<>();
        if (parts.contains("fresh")) {
            latencyRows(rows, "fresh", m.fresh, a.fresh, rates, Target.atMostPeer(),
                    Target.atMost(10, "<= 10 ms"));
        }
        if (parts.contains("steady")) {
            latencyRows(rows, "steady", m.steady, a.steady, rates, Target.NONE, Target.atMost(5, "<= 5 ms"));
        }
        if (parts.contains("throughput")) {
            rows.add(new Row("async send, msgs/s (median of the fills)", m.asyncSend(), a.asyncSend(), 0,
                    Target.peerTimes(3)));
            for (AckMode mode : AckMode.values()) {
                rows.add(new Row("consume pre-filled queue, " + mode.description() + ", msgs/s",
                        m.consume.get(mode), a.consume.get(mode), 0, Target.peerTimes(3)));
            }
        }
        if (parts.contains("footprint")) {
            for (int n : connections) {
                ClientFootprint.Figures mf = m.footprint.get(n);
                ClientFootprint.Figures af = a.footprint.get(n);
                rows.add(new Row("footprint, " + n + " connections: threads added per connection",
                        mf == null ? null : mf.threadsAddedPerConnection(),
                        af == null ? null : af.threadsAddedPerConnection(), 2, Target.atMost(0.5, "<= 0.5")));
                rows.add(new Row("footprint, " + n + " connections: heap added after GC, MiB",
                        mf == null ? null : mf.heapAddedMiB(), af == null ? null : af.heapAddedMiB(), 1,
                        Target.NONE));
                rows.add(new Row("footprint, " + n + " connections: setup wall time, ms",
                        mf == null ? null : mf.setupMs(), af == null ? null : af.setupMs(), 0, Target.atMostPeer()));
            }
        }
        if (parts.contains("queue-topic")) {
            rows.add(new Row("Millrace queue msgs/s vs " + settings.topicSubscriber()
                    + " topic subscriber msgs/s (peer column = topic)", m.queueRate,
                    m.topicRate, 0, Target.ratioAtLeast(0.8)));
        }
        return rows;
    }

    private static void latencyRows(List<Row> rows, String phase, Map<String, PacedLatency.Figures> m,
                                    Map<String, PacedLatency.Figures> a, List<Integer> rates, Target p50,
                                    Target p99) {
        for (DestinationKind kind : DestinationKind.values()) {
            for (int rate : rates) {
                String key = UserOutcome.key(kind, rate);
                PacedLatency.Figures mf = m.get(key);
                PacedLatency.Figures af = a.get(key);
                String prefix = String.format(Locale.ROOT, "%s, %s, %,d msgs/s: ", phase, kind.label(), rate);
                rows.add(new Row(prefix + "p50 ms", mf == null ? null : mf.p50Us() / 1e3,
                        af == null ? null : af.p50Us() / 1e3, 2, p50));
                rows.add(new Row(prefix + "p99 ms", mf == null ? null : mf.p99Us() / 1e3,
                        af == null ? null : af.p99Us() / 1e3, 2, p99));
                rows.add(new Row(prefix + "max ms", mf == null ? null : mf.maxUs() / 1e3,
                        af == null ? null : af.maxUs() / 1e3, 2, Target.NONE));
            }
        }
    }

    static String markdown(List<Row> rows, Map<String, UserOutcome> outcomes) {
        StringBuilder out = new StringBuilder();
        out.append("| figure | Millrace | Artemis (peer) | ratio M/peer | target | met? |\n");
        out.append("|---|---:|---:|---:|---|:---:|\n");
        for (Row row : rows) {
            out.append("| ").append(row.figure()).append(" | ").append(number(row.millrace(), row.decimals()))
                    .append(" | ").append(number(row.peer(), row.decimals())).append(" | ")
                    .append(ratio(row.millrace(), row.peer())).append(" | ").append(row.target().text())
                    .append(" | ").append(row.target().verdict(row.millrace(), row.peer())).append(" |\n");
        }
        for (Map.Entry<String, UserOutcome> e : outcomes.entrySet()) {
            for (Map.Entry<String, String> f : e.getValue().failures.entrySet()) {
                out.append("\n").append(e.getKey()).append(" ").append(f.getKey()).append(" FAILED: ")
                        .append(f.getValue()).append('\n');
            }
        }
        return out.toString();
    }

    private static String number(Double value, int decimals) {
        return value == null ? "-" : String.format(Locale.ROOT, "%,." + decimals + "f", value);
    }

    private static String ratio(Double m, Double p) {
        return m == null || p == null || p == 0 ? "-" : String.format(Locale.ROOT, "%.2f", m / p);
    }
}
