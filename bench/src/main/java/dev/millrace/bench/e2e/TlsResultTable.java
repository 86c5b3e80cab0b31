package dev.millrace.bench.e2e;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.millrace.bench.e2e.TlsComparison.Transport;

/**
 * Renders {@link TlsComparison}'s figures: per run, each metric for each broker over SASL_SSL and over PLAINTEXT,
 * each broker's cost (SASL_SSL / PLAINTEXT) and Millrace/Kafka over each transport, as text; and a Markdown summary
 * of records/s with the target (Millrace/Kafka over SASL_SSL: >= 1.5 for produce, >= 1 for consume).
 * Not thread-safe; fill, print, discard.
 */
final class TlsResultTable {

    /** Millrace/Kafka records/s over SASL_SSL that issue 26 asks for. */
    static double target(Scenario scenario) {
        return scenario.producer() ? 1.5 : 1.0;
    }

    private final Map<Scenario, Map<String, Map<Transport, PerfResult>>> results;
    private final Map<Scenario, List<String>> orders;

    TlsResultTable(Map<Scenario, Map<String, Map<Transport, PerfResult>>> results, Map<Scenario, List<String>> orders) {
        this.results = results;
        this.orders = orders;
    }

    boolean allOk() {
        return results.values().stream().flatMap(b -> b.values().stream()).flatMap(t -> t.values().stream())
                .allMatch(PerfResult::ok);
    }

    String plain() {
        StringBuilder out = new StringBuilder();
        String row = "  %-22s %12s %12s %9s %12s %12s %9s %9s %9s%n";
        for (Map.Entry<Scenario, Map<String, Map<Transport, PerfResult>>> entry : results.entrySet()) {
            Scenario scenario = entry.getKey();
            Map<String, Map<Transport, PerfResult>> byBroker = entry.getValue();
            out.append(scenario.title()).append("\n  order: ").append(String.join(", ", orders.get(scenario)))
                    .append('\n');
            out.append(String.format(Locale.ROOT, row, "", "M SASL_SSL", "M PLAIN", "M cost", "K SASL_SSL",
                    "K PLAIN", "K cost", "M/K TLS", "M/K PLAIN"));
            List<Metric> metrics = new ArrayList<>(scenario.metrics());
            metrics.add(Metric.BROKER_CPU_S);
            for (Metric metric : metrics) {
                out.append(String.format(Locale.ROOT, row, metric.label(),
                        cell(byBroker, ResultTable.MILLRACE, Transport.SASL_SSL, metric),
                        cell(byBroker, ResultTable.MILLRACE, Transport.PLAINTEXT, metric),
                        cost(byBroker, ResultTable.MILLRACE, metric),
                        cell(byBroker, ResultTable.KAFKA, Transport.SASL_SSL, metric),
                        cell(byBroker, ResultTable.KAFKA, Transport.PLAINTEXT, metric),
                        cost(byBroker, ResultTable.KAFKA, metric),
                        ratio(byBroker, Transport.SASL_SSL, metric),
                        ratio(byBroker, Transport.PLAINTEXT, metric)));
            }
            appendReasons(out, byBroker);
            out.append('\n');
        }
        return out.toString();
    }

    /** One row per run: records/s, the costs, the ratios and the target; then the SASL_SSL command. */
    String markdown(String command) {
        StringBuilder out = new StringBuilder();
        out.append("| run | Millrace SASL_SSL | Millrace PLAINTEXT | Millrace cost | Kafka SASL_SSL | Kafka PLAINTEXT "
                + "| Kafka cost | M/K SASL_SSL | M/K PLAINTEXT | p99 ms M SASL_SSL / K SASL_SSL "
                + "| broker CPU s M SASL_SSL / PLAINTEXT, K SASL_SSL / PLAINTEXT | target: met? |\n");
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for (Map.Entry<Scenario, Map<String, Map<Transport, PerfResult>>> entry : results.entrySet()) {
            Scenario scenario = entry.getKey();
            Map<String, Map<Transport, PerfResult>> b = entry.getValue();
            Metric rate = Metric.RECORDS_PER_SEC;
            Double tlsRatio = ratioValue(b, Transport.SASL_SSL, rate);
            String verdict = tlsRatio == null ? "n/a" : String.format(Locale.ROOT, ">= %.1fx: %s", target(scenario),
                    tlsRatio >= target(scenario) ? "met" : "**not met**");
            out.append("| ").append(scenario.kind().key())
                    .append(" | ").append(cell(b, ResultTable.MILLRACE, Transport.SASL_SSL, rate))
                    .append(" | ").append(cell(b, ResultTable.MILLRACE, Transport.PLAINTEXT, rate))
                    .append(" | ").append(cost(b, ResultTable.MILLRACE, rate))
                    .append(" | ").append(cell(b, ResultTable.KAFKA, Transport.SASL_SSL, rate))
                    .append(" | ").append(cell(b, ResultTable.KAFKA, Transport.PLAINTEXT, rate))
                    .append(" | ").append(cost(b, ResultTable.KAFKA, rate))
                    .append(" | ").append(ratio(b, Transport.SASL_SSL, rate))
                    .append(" | ").append(ratio(b, Transport.PLAINTEXT, rate))
                    .append(" | ").append(scenario.producer()
                            ? cell(b, ResultTable.MILLRACE, Transport.SASL_SSL, Metric.P99_MS) + " / "
                            + cell(b, ResultTable.KAFKA, Transport.SASL_SSL, Metric.P99_MS) : "-")
                    .append(" | ").append(cell(b, ResultTable.MILLRACE, Transport.SASL_SSL, Metric.BROKER_CPU_S))
                    .append(" / ").append(cell(b, ResultTable.MILLRACE, Transport.PLAINTEXT, Metric.BROKER_CPU_S))
                    .append(", ").append(cell(b, ResultTable.KAFKA, Transport.SASL_SSL, Metric.BROKER_CPU_S))
                    .append(" / ").append(cell(b, ResultTable.KAFKA, Transport.PLAINTEXT, Metric.BROKER_CPU_S))
                    .append(" | ").append(verdict).append(" |\n");
        }
        out.append("\nSASL_SSL command of the first run (PLAINTEXT: without --command-config):\n\n```\n")
                .append(command).append("\n```\n");
        return out.toString();
    }

    private static void appendReasons(StringBuilder out, Map<String, Map<Transport, PerfResult>> byBroker) {
        for (Map.Entry<String, Map<Transport, PerfResult>> broker : byBroker.entrySet()) {
            for (Map.Entry<Transport, PerfResult> result : broker.getValue().entrySet()) {
                if (!result.getValue().ok()) {
                    out.append("  ").append(broker.getKey()).append(' ').append(result.getKey().label()).append(": ")
                            .append(result.getValue().status().text()).append(": ").append(result.getValue().reason())
                            .append('\n');
                }
            }
        }
    }

    private static Double value(Map<String, Map<Transport, PerfResult>> byBroker, String broker, Transport transport,
                                Metric metric) {
        PerfResult result = byBroker.getOrDefault(broker, Map.of()).get(transport);
        return result == null || !result.ok() ? null : result.get(metric);
    }

    private static String cell(Map<String, Map<Transport, PerfResult>> byBroker, String broker, Transport transport,
                               Metric metric) {
        PerfResult result = byBroker.getOrDefault(broker, Map.of()).get(transport);
        if (result == null) {
            return PerfResult.Status.SKIPPED.text();
        }
        if (!result.ok()) {
            return result.status().text();
        }
        Double v = result.get(metric);
        return v == null ? "-" : metric.format(v);
    }

    /** SASL_SSL over PLAINTEXT of one broker. */
    private static String cost(Map<String, Map<Transport, PerfResult>> byBroker, String broker, Metric metric) {
        return format(divide(value(byBroker, broker, Transport.SASL_SSL, metric),
                value(byBroker, broker, Transport.PLAINTEXT, metric)));
    }

    private static String ratio(Map<String, Map<Transport, PerfResult>> byBroker, Transport transport, Metric metric) {
        return format(ratioValue(byBroker, transport, metric));
    }

    private static Double ratioValue(Map<String, Map<Transport, PerfResult>> byBroker, Transport transport,
                                     Metric metric) {
        return divide(value(byBroker, ResultTable.MILLRACE, transport, metric),
                value(byBroker, ResultTable.KAFKA, transport, metric));
    }

    private static Double divide(Double a, Double b) {
        return a == null || b == null || b == 0 ? null : a / b;
    }

    private static String format(Double value) {
        return value == null ? "n/a" : String.format(Locale.ROOT, "%.2f", value);
    }
}
