package dev.millrace.bench.e2e;

import java.util.Locale;

/**
 * A figure that Kafka's perf tools print, with how to show it and which way is better. MB are
 * 2^20 bytes of record values, as the tools count them; latencies are the producer's send-to-ack
 * times in milliseconds (the tool prints percentiles as whole milliseconds). Where the tool was
 * given warmup records, the latencies are its steady-state ones and the "whole run" rows include
 * the warmup.
 */
enum Metric {
    RECORDS_PER_SEC("records/s", true, "%,.0f"),
    MB_PER_SEC("MB/s", true, "%,.2f"),
    AVG_MS("avg latency ms", false, "%,.2f"),
    P50_MS("p50 latency ms", false, "%,.0f"),
    P95_MS("p95 latency ms", false, "%,.0f"),
    P99_MS("p99 latency ms", false, "%,.0f"),
    P999_MS("p99.9 latency ms", false, "%,.0f"),
    MAX_MS("max latency ms", false, "%,.0f"),
    WHOLE_RUN_P99_MS("p99 latency ms, whole run", false, "%,.0f"),
    WHOLE_RUN_MAX_MS("max latency ms, whole run", false, "%,.0f"),
    FETCH_RECORDS_PER_SEC("records/s, fetching only", true, "%,.0f"),
    FETCH_MB_PER_SEC("MB/s, fetching only", true, "%,.2f"),
    GROUP_JOIN_MS("group join (rebalance) ms", false, "%,.0f"),
    /** CPU time the broker's process used during the run (user + system, all threads), from the OS. */
    BROKER_CPU_S("broker CPU s", false, "%,.1f"),
    /** Share-group records/s over consumer-group records/s on the same broker, same topic, same run. */
    SHARE_OF_GROUP("share/group records/s", true, "%,.2f");

    private final String label;
    private final boolean higherIsBetter;
    private final String format;

    Metric(String label, boolean higherIsBetter, String format) {
        this.label = label;
        this.higherIsBetter = higherIsBetter;
        this.format = format;
    }

    String label() {
        return label;
    }

    boolean higherIsBetter() {
        return higherIsBetter;
    }

    String format(double value) {
        return String.format(Locale.ROOT, format, value);
    }
}
