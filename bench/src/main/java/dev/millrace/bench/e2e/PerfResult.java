package dev.millrace.bench.e2e;

import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The outcome of one perf-tool run against one broker: the figures parsed from the tool's summary
 * line, or why there are none. Also holds the parsers of ProducerPerformance's and
 * ConsumerPerformance's summaries (Kafka 4.4 formats).
 */
record PerfResult(Status status, String reason, Map<Metric, Double> figures) {

    /** How a run ended. */
    enum Status {
        OK("ok"),
        FAILED("failed"),
        NOT_SUPPORTED("not yet supported"),
        SKIPPED("not run");

        private final String text;

        Status(String text) {
            this.text = text;
        }

        String text() {
            return text;
        }
    }

    /**
     * ProducerPerformance's summary of the whole run (progress lines stop after the max latency)
     * and, with --warmup-records, the same figures for the records after the warmup.
     */
    private static final Pattern PRODUCER_SUMMARY = Pattern.compile(
            "^(\\d+) (steady state )?records sent, ([\\d.]+) records/sec \\(([\\d.]+) MB/sec\\), "
                    + "([\\d.]+) ms avg latency, ([\\d.]+) ms max latency, (\\d+) ms 50th, (\\d+) ms 95th, "
                    + "(\\d+) ms 99th, (\\d+) ms 99\\.9th\\.\\s*$");

    private static final String CONSUMER_HEADER = "start.time, end.time, data.consumed.in.MB";

    PerfResult {
        EnumMap<Metric, Double> copy = new EnumMap<>(Metric.class);
        copy.putAll(figures);
        figures = Collections.unmodifiableMap(copy);
    }

    static PerfResult failed(Status status, String reason) {
        return new PerfResult(status, reason, Map.of());
    }

    boolean ok() {
        return status == Status.OK;
    }

    Double get(Metric metric) {
        return figures.get(metric);
    }

    /**
     * Parses ProducerPerformance's stdout: the steady-state summary if there is one (with the whole
     * run's p99 and max beside it), else the whole run's. Returns null when there is no summary
     * line; a result with status FAILED when fewer than {@code expected} records were acknowledged.
     */
    static PerfResult parseProducer(List<String> stdout, long expected) {
        Matcher whole = null;
        Matcher steady = null;
        for (String line : stdout) {
            Matcher m = PRODUCER_SUMMARY.matcher(line.trim());
            if (m.matches()) {
                if (m.group(2) == null) {
                    whole = m;
                } else {
                    steady = m;
                }
            }
        }
        if (whole == null) {
            return null;
        }
        Matcher main = steady != null ? steady : whole;
        Map<Metric, Double> figures = new LinkedHashMap<>();
        figures.put(Metric.RECORDS_PER_SEC, Double.parseDouble(main.group(3)));
        figures.put(Metric.MB_PER_SEC, Double.parseDouble(main.group(4)));
        figures.put(Metric.AVG_MS, Double.parseDouble(main.group(5)));
        figures.put(Metric.MAX_MS, Double.parseDouble(main.group(6)));
        figures.put(Metric.P50_MS, Double.parseDouble(main.group(7)));
        figures.put(Metric.P95_MS, Double.parseDouble(main.group(8)));
        figures.put(Metric.P99_MS, Double.parseDouble(main.group(9)));
        figures.put(Metric.P999_MS, Double.parseDouble(main.group(10)));
        if (steady != null) {
            figures.put(Metric.WHOLE_RUN_P99_MS, Double.parseDouble(whole.group(9)));
            figures.put(Metric.WHOLE_RUN_MAX_MS, Double.parseDouble(whole.group(6)));
        }
        long sent = Long.parseLong(whole.group(1));
        if (sent < expected) {
            return new PerfResult(Status.FAILED,
                    "only " + sent + " of " + expected + " records were acknowledged", figures);
        }
        return new PerfResult(Status.OK, "", figures);
    }

    /**
     * Parses ConsumerPerformance's stdout (its header line and the comma-separated line under it).
     * Returns null when there is no such pair; a result with status FAILED when fewer than
     * {@code expected} records were consumed.
     */
    static PerfResult parseConsumer(List<String> stdout, long expected) {
        for (int i = 0; i + 1 < stdout.size(); i++) {
            if (!stdout.get(i).startsWith(CONSUMER_HEADER)) {
                continue;
            }
            String[] names = stdout.get(i).split(",\\s*");
            String[] values = stdout.get(i + 1).split(",\\s*");
            if (names.length != values.length) {
                return null;
            }
            Map<String, String> row = new LinkedHashMap<>();
            for (int k = 0; k < names.length; k++) {
                row.put(names[k].trim(), values[k].trim());
            }
            try {
                Map<Metric, Double> figures = new LinkedHashMap<>();
                figures.put(Metric.RECORDS_PER_SEC, Double.parseDouble(row.get("nMsg.sec")));
                figures.put(Metric.MB_PER_SEC, Double.parseDouble(row.get("MB.sec")));
                if (row.containsKey("fetch.nMsg.sec")) {
                    // ConsumerPerformance; ShareConsumerPerformance prints neither these nor a join time
                    figures.put(Metric.FETCH_RECORDS_PER_SEC, Double.parseDouble(row.get("fetch.nMsg.sec")));
                    figures.put(Metric.FETCH_MB_PER_SEC, Double.parseDouble(row.get("fetch.MB.sec")));
                    figures.put(Metric.GROUP_JOIN_MS, Double.parseDouble(row.get("rebalance.time.ms")));
                }
                long consumed = Long.parseLong(row.get("data.consumed.in.nMsg"));
                if (consumed < expected) {
                    return new PerfResult(Status.FAILED,
                            "consumed only " + consumed + " of " + expected + " records", figures);
                }
                return new PerfResult(Status.OK, "", figures);
            } catch (NullPointerException | NumberFormatException e) {
                return null;
            }
        }
        return null;
    }
}
