package dev.millrace.bench.jms;

import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import dev.millrace.bench.jms.JmsFeatureComparison.Outcome;
import dev.millrace.bench.jms.JmsFeatureHarness.Delays;
import dev.millrace.bench.jms.JmsFeatureHarness.Selective;
import dev.millrace.bench.jms.JmsFeatureHarness.Selectors;
import dev.millrace.bench.jms.JmsFeatureHarness.Transacted;

/**
 * The Markdown tables of {@link JmsFeatureComparison}: one per scenario, Millrace and Artemis side by side, with the
 * ratios and targets of issue 7. A missing figure (broker not run, scenario failed) shows as "-"; failures are listed
 * under the tables.
 *
 * <p>Stateless.
 */
final class JmsFeatureTables {

    private JmsFeatureTables() {
    }

    static String markdown(Map<String, Outcome> outcomes, JmsFeatureHarness.Settings settings,
                           Set<String> scenarios) {
        Outcome m = outcomes.getOrDefault("Millrace", new Outcome());
        Outcome a = outcomes.getOrDefault("Artemis", new Outcome());
        StringBuilder out = new StringBuilder();
        if (scenarios.contains("txn")) {
            transacted(out, m, a, settings);
        }
        if (scenarios.contains("selector")) {
            selectors(out, m, a, settings);
        }
        if (scenarios.contains("delay")) {
            delays(out, m, a, settings);
        }
        for (Map.Entry<String, Outcome> e : outcomes.entrySet()) {
            for (Map.Entry<String, String> f : e.getValue().failures.entrySet()) {
                out.append("\n").append(e.getKey()).append(" ").append(f.getKey()).append(" FAILED: ")
                        .append(f.getValue()).append('\n');
            }
        }
        return out.toString();
    }

    private static void transacted(StringBuilder out, Outcome m, Outcome a, JmsFeatureHarness.Settings settings) {
        out.append("Transacted send + commit, 1 KiB persistent, ").append(settings.transactedSeconds())
                .append(" s per batch size:\n\n");
        out.append("| commit every N | Millrace msgs/s | Artemis msgs/s | Millrace/Artemis | target (>= 1x) |\n");
        out.append("|---:|---:|---:|---:|:---:|\n");
        for (int batch : settings.batchSizes()) {
            Transacted mt = m.transacted.get(batch);
            Transacted at = a.transacted.get(batch);
            Double mv = mt == null ? null : mt.perSecond();
            Double av = at == null ? null : at.perSecond();
            out.append("| ").append(batch).append(" | ").append(number(mv)).append(" | ").append(number(av))
                    .append(" | ").append(ratio(mv, av)).append(" | ")
                    .append(mv == null || av == null ? "-" : mv >= av ? "PASS" : "MISS").append(" |\n");
        }
        out.append('\n');
    }

    private static void selectors(StringBuilder out, Outcome m, Outcome a, JmsFeatureHarness.Settings settings) {
        out.append("Selector `").append(JmsFeatureHarness.SELECTOR).append("` on a queue of ")
                .append(String.format(Locale.ROOT, "%,d", settings.selectorMessages())).append(" messages, 1 in ")
                .append(settings.matchEvery()).append(" matching:\n\n");
        out.append("| measurement | Millrace | Artemis |\n|---|---:|---:|\n");
        selectorRow(out, "unfiltered consumer (msgs/s)", m.selectors, a.selectors,
                s -> number(s.unfilteredPerSecond()));
        selectorRows(out, "selector alone", m.selectors, a.selectors, Selectors::alone);
        selectorRow(out, "selector alone: ratio in each round (the median round is above)", m.selectors,
                a.selectors, s -> JmsFeatureHarness.twoDecimals(s.aloneRatios(), " / "));
        selectorRow(out, "selector alone, first message to last: ratio in each round", m.selectors, a.selectors,
                s -> JmsFeatureHarness.twoDecimals(s.steadyRatios(), " / "));
        selectorRow(out, "selector alone, first message to last: median ratio (target >= 0.50)", m.selectors,
                a.selectors, s -> {
                    double median = s.medianSteadyRatio();
                    return Double.isNaN(median) ? "-" : String.format(Locale.ROOT, "%.2f %s", median,
                            median >= 0.5 ? "PASS" : "MISS");
                });
        selectorRows(out, "selector + complement consumer", m.selectors, a.selectors, Selectors::withComplement);
        out.append('\n');
    }

    private static void delays(StringBuilder out, Outcome m, Outcome a, JmsFeatureHarness.Settings settings) {
        out.append("Delivery delay, ").append(String.format(Locale.ROOT, "%,d", settings.delayedMessages()))
                .append(" messages, delays ").append(settings.minDelayMs()).append("-").append(settings.maxDelayMs())
                .append(" ms; lateness = receipt - JMSDeliveryTime:\n\n");
        out.append("| measurement | Millrace | Artemis |\n|---|---:|---:|\n");
        delayRow(out, "received of sent", m.delays, a.delays, d -> d.received() + " of " + d.sent());
        delayRow(out, "early (target 0)", m.delays, a.delays,
                d -> d.early() + (d.early() == 0 ? " PASS" : " MISS (min " + d.minLatenessMs() + " ms)"));
        delayRow(out, "lateness p50 (ms)", m.delays, a.delays, d -> String.valueOf(d.p50Ms()));
        delayRow(out, "lateness p99 (ms)", m.delays, a.delays, d -> String.valueOf(d.p99Ms()));
        delayRow(out, "lateness p99.9 (ms)", m.delays, a.delays, d -> String.valueOf(d.p999Ms()));
        delayRow(out, "lateness max (ms)", m.delays, a.delays, d -> String.valueOf(d.maxMs()));
        delayRow(out, "JMSDeliveryTime before the intended due time", m.delays, a.delays,
                d -> String.valueOf(d.deliveryTimeBeforeIntended()));
        delayRow(out, "send time of all (s)", m.delays, a.delays,
                d -> String.format(Locale.ROOT, "%.2f", d.sendSeconds()));
        out.append('\n');
    }

    private static void selectorRows(StringBuilder out, String what, Selectors m, Selectors a,
                                     Function<Selectors, Selective> run) {
        selectorRow(out, what + ": matches delivered", m, a, s -> {
            Selective r = run.apply(s);
            return String.format(Locale.ROOT, "%,d of %,d%s", r.delivered(), r.expected(),
                    r.stalled() ? " (STALLED)" : "");
        });
        selectorRow(out, what + ": matches/s", m, a, s -> number(run.apply(s).deliveredPerSecond()));
        selectorRow(out, what + ": records scanned/s", m, a, s -> {
            Selective r = run.apply(s);
            return r.stalled() ? "-" : number(r.scannedPerSecond());
        });
        selectorRow(out, what + ": matches/s / unfiltered msgs/s, from consumer creation (>= 0.50?)", m, a, s -> {
            Selective r = run.apply(s);
            double share = r.deliveredPerSecond() / s.unfilteredPerSecond();
            return String.format(Locale.ROOT, "%.2f %s", share, share >= 0.5 && !r.stalled() ? "PASS" : "MISS");
        });
        selectorRow(out, what + ": records scanned/s / unfiltered msgs/s", m, a, s -> {
            Selective r = run.apply(s);
            return r.stalled() ? "-" : String.format(Locale.ROOT, "%.2f", r.scannedPerSecond()
                    / s.unfilteredPerSecond());
        });
    }

    private static void selectorRow(StringBuilder out, String what, Selectors m, Selectors a,
                                    Function<Selectors, String> cell) {
        out.append("| ").append(what).append(" | ").append(m == null ? "-" : cell.apply(m)).append(" | ")
                .append(a == null ? "-" : cell.apply(a)).append(" |\n");
    }

    private static void delayRow(StringBuilder out, String what, Delays m, Delays a, Function<Delays, String> cell) {
        out.append("| ").append(what).append(" | ").append(m == null ? "-" : cell.apply(m)).append(" | ")
                .append(a == null ? "-" : cell.apply(a)).append(" |\n");
    }

    private static String number(Double value) {
        return value == null ? "-" : JmsFeatureComparison.format(value);
    }

    private static String ratio(Double millrace, Double artemis) {
        return millrace == null || artemis == null || artemis == 0 ? "-"
                : String.format(Locale.ROOT, "%.2f", millrace / artemis);
    }
}
