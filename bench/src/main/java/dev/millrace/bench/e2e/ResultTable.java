package dev.millrace.bench.e2e;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Renders the comparison's figures: per run, each metric for Millrace and Kafka with the ratio
 * Millrace/Kafka (throughput: above 1 is better; latency: below 1 is better), as plain text and
 * as Markdown, plus a one-row-per-run summary of the ratios. A side that did not run or failed
 * shows its status, and the reasons follow the table. Not thread-safe; fill, print, discard.
 */
final class ResultTable {

    static final String MILLRACE = "Millrace";
    static final String KAFKA = "Kafka";

    /** One run against both brokers, in the order they were loaded. */
    record Entry(Scenario scenario, List<String> order, String command, Map<String, PerfResult> results) {
    }

    private final List<Entry> entries = new ArrayList<>();

    void add(Scenario scenario, List<String> order, String command) {
        entries.add(new Entry(scenario, List.copyOf(order), command, new LinkedHashMap<>()));
    }

    void put(Scenario scenario, String broker, PerfResult result) {
        for (Entry entry : entries) {
            if (entry.scenario().equals(scenario)) {
                entry.results().put(broker, result);
                return;
            }
        }
        throw new IllegalArgumentException("no entry for " + scenario.title());
    }

    List<Entry> entries() {
        return entries;
    }

    boolean allOk() {
        return entries.stream().allMatch(e -> e.results().values().stream().allMatch(PerfResult::ok));
    }

    String plain() {
        StringBuilder out = new StringBuilder();
        for (Entry entry : entries) {
            out.append(entry.scenario().title()).append(" (").append(String.join(" then ", entry.order()))
                    .append(")\n");
            out.append(String.format(Locale.ROOT, "  %-28s %16s %16s %16s%n", "", MILLRACE, KAFKA,
                    MILLRACE + "/" + KAFKA));
            for (Metric metric : entry.scenario().metrics()) {
                out.append(String.format(Locale.ROOT, "  %-28s %16s %16s %16s%n", metric.label(),
                        cell(entry, MILLRACE, metric), cell(entry, KAFKA, metric), ratio(entry, metric)));
            }
            appendReasons(out, entry, "  ");
            out.append('\n');
        }
        return out.toString();
    }

    String markdown() {
        StringBuilder out = new StringBuilder();
        out.append("| run | Millrace records/s | Kafka records/s | records/s M/K | MB/s M/K | p50 M/K | p99 M/K "
                + "| max M/K |\n");
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Entry entry : entries) {
            boolean producer = entry.scenario().producer();
            out.append("| ").append(entry.scenario().kind().key())
                    .append(" | ").append(cell(entry, MILLRACE, Metric.RECORDS_PER_SEC))
                    .append(" | ").append(cell(entry, KAFKA, Metric.RECORDS_PER_SEC))
                    .append(" | ").append(ratio(entry, Metric.RECORDS_PER_SEC))
                    .append(" | ").append(ratio(entry, Metric.MB_PER_SEC))
                    .append(" | ").append(producer ? ratio(entry, Metric.P50_MS) : "-")
                    .append(" | ").append(producer ? ratio(entry, Metric.P99_MS) : "-")
                    .append(" | ").append(producer ? ratio(entry, Metric.MAX_MS) : "-")
                    .append(" |\n");
        }
        out.append('\n');
        for (Entry entry : entries) {
            out.append("#### ").append(entry.scenario().title()).append("\n\n");
            out.append("Order: ").append(String.join(" then ", entry.order())).append(". Command (")
                    .append("`<broker>` is each broker's `127.0.0.1:port`):\n\n");
            out.append("```\n").append(entry.command()).append("\n```\n\n");
            out.append("| | Millrace | Kafka | Millrace/Kafka |\n");
            out.append("|---|---:|---:|---:|\n");
            for (Metric metric : entry.scenario().metrics()) {
                out.append("| ").append(metric.label())
                        .append(" | ").append(cell(entry, MILLRACE, metric))
                        .append(" | ").append(cell(entry, KAFKA, metric))
                        .append(" | ").append(ratio(entry, metric))
                        .append(" |\n");
            }
            StringBuilder reasons = new StringBuilder();
            appendReasons(reasons, entry, "");
            if (reasons.length() > 0) {
                out.append('\n').append(reasons);
            }
            out.append('\n');
        }
        return out.toString();
    }

    private static void appendReasons(StringBuilder out, Entry entry, String indent) {
        for (Map.Entry<String, PerfResult> result : entry.results().entrySet()) {
            if (!result.getValue().ok()) {
                out.append(indent).append(result.getKey()).append(": ").append(result.getValue().status().text())
                        .append(": ").append(result.getValue().reason()).append('\n');
            }
        }
    }

    private static String cell(Entry entry, String broker, Metric metric) {
        PerfResult result = entry.results().get(broker);
        if (result == null) {
            return PerfResult.Status.SKIPPED.text();
        }
        if (!result.ok()) {
            return result.status().text();
        }
        Double value = result.get(metric);
        return value == null ? "-" : metric.format(value);
    }

    /** Millrace/Kafka, or "n/a" when either side has no figure or Kafka's is 0 (whole-ms percentiles). */
    private static String ratio(Entry entry, Metric metric) {
        PerfResult millrace = entry.results().get(MILLRACE);
        PerfResult kafka = entry.results().get(KAFKA);
        if (millrace == null || kafka == null || !millrace.ok() || !kafka.ok()) {
            return "n/a";
        }
        Double m = millrace.get(metric);
        Double k = kafka.get(metric);
        if (m == null || k == null || k == 0) {
            return "n/a";
        }
        return String.format(Locale.ROOT, "%.2f", m / k);
    }
}
