package dev.millrace.bench.e2e;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One measured run of the comparison, done once against each broker: what the tool does, on which
 * topic, how many records, and the figures its table shows. The fixed-rate run leaves its first
 * tenth out of the latency figures ({@code --warmup-records}): at its start the tool's own JVM is
 * still compiling, and the backlog that builds then would otherwise be its p99.
 */
record Scenario(Kind kind, String title, String topic, long records, long warmup, long throughput, String acks) {

    /** The runs, in the order they are done; {@link #key} names them on the command line. */
    enum Kind {
        ACKS_1("acks1"),
        ACKS_ALL("acksall"),
        IDEMPOTENT("idempotent"),
        TRANSACTIONAL("transactional"),
        FIXED_RATE("fixed"),
        CONSUME("consume"),
        SHARE("share"),
        SHARE_4("share4");

        private final String key;

        Kind(String key) {
            this.key = key;
        }

        String key() {
            return key;
        }

        static Kind of(String key) {
            for (Kind kind : values()) {
                if (kind.key.equals(key)) {
                    return kind;
                }
            }
            throw new IllegalArgumentException("unknown run '" + key + "' (known: acks1, acksall, idempotent, transactional, fixed, consume, share, share4)");
        }
    }

    static final String ACKS_1_TOPIC = "e2e-acks1";

    /** The share consumers of the share4 run: more than the topic's one partition, as a queue's competing consumers. */
    static final int SHARE_4_CONSUMERS = 4;

    static Scenario of(Kind kind, long records, long fixedRecords, long fixedRate, int recordSize) {
        return switch (kind) {
            case ACKS_1 -> new Scenario(kind, String.format(Locale.ROOT,
                    "produce, acks=1, unthrottled: %,d records of %d B", records, recordSize),
                    ACKS_1_TOPIC, records, 0, -1, "1");
            case ACKS_ALL -> new Scenario(kind, String.format(Locale.ROOT,
                    "produce, acks=all, unthrottled: %,d records of %d B", records, recordSize),
                    "e2e-acksall", records, 0, -1, "all");
            case IDEMPOTENT -> new Scenario(kind, String.format(Locale.ROOT,
                    "produce, acks=all, enable.idempotence=true, unthrottled: %,d records of %d B", records,
                    recordSize), "e2e-idempotent", records, 0, -1, "all");
            case TRANSACTIONAL -> new Scenario(kind, String.format(Locale.ROOT,
                    "produce, transactional (--transactional-id, a commit every %d ms), acks=all: %,d records of %d B",
                    PerfTool.TRANSACTION_DURATION_MS, records, recordSize), "e2e-transactional", records, 0, -1, "all");
            case FIXED_RATE -> new Scenario(kind, String.format(Locale.ROOT,
                    "produce, acks=all, fixed rate %,d records/s: %,d records of %d B, latency after the first %,d",
                    fixedRate, fixedRecords, recordSize, fixedRecords / 10), "e2e-fixed", fixedRecords,
                    fixedRecords / 10, fixedRate, "all");
            case CONSUME -> new Scenario(kind, String.format(Locale.ROOT,
                    "consume (consumer group), from the acks=1 run's topic: %,d records of %d B", records,
                    recordSize), ACKS_1_TOPIC, records, 0, -1, "");
            case SHARE -> new Scenario(kind, String.format(Locale.ROOT,
                    "consume (share group, ShareConsumerPerformance, share.auto.offset.reset=earliest), from the "
                            + "acks=1 run's topic: %,d records of %d B", records, recordSize),
                    ACKS_1_TOPIC, records, 0, -1, "");
            case SHARE_4 -> new Scenario(kind, String.format(Locale.ROOT,
                    "consume (share group, %d share consumers in one ShareConsumerPerformance, "
                            + "share.auto.offset.reset=earliest), from the acks=1 run's one-partition topic: "
                            + "%,d records of %d B", SHARE_4_CONSUMERS, records, recordSize),
                    ACKS_1_TOPIC, records, 0, -1, "");
        };
    }

    boolean producer() {
        return kind != Kind.CONSUME && !share();
    }

    /** Whether the run consumes through a share group (share, share4). */
    boolean share() {
        return kind == Kind.SHARE || kind == Kind.SHARE_4;
    }

    /** The share consumers the run starts: 1, or {@value #SHARE_4_CONSUMERS} for share4; 0 for other runs. */
    int shareConsumers() {
        return kind == Kind.SHARE ? 1 : kind == Kind.SHARE_4 ? SHARE_4_CONSUMERS : 0;
    }

    /** Whether the run reads the acks=1 topic, which must be filled first when acks1 did not run. */
    boolean consumer() {
        return !producer();
    }

    List<Metric> metrics() {
        if (share()) {
            return List.of(Metric.RECORDS_PER_SEC, Metric.MB_PER_SEC, Metric.SHARE_OF_GROUP);
        }
        if (!producer()) {
            return List.of(Metric.RECORDS_PER_SEC, Metric.MB_PER_SEC, Metric.FETCH_RECORDS_PER_SEC,
                    Metric.FETCH_MB_PER_SEC, Metric.GROUP_JOIN_MS);
        }
        List<Metric> metrics = new ArrayList<>(List.of(Metric.RECORDS_PER_SEC, Metric.MB_PER_SEC, Metric.AVG_MS,
                Metric.P50_MS, Metric.P95_MS, Metric.P99_MS, Metric.P999_MS, Metric.MAX_MS));
        if (warmup > 0) {
            metrics.addAll(List.of(Metric.WHOLE_RUN_P99_MS, Metric.WHOLE_RUN_MAX_MS));
        }
        return metrics;
    }

    List<String> toolArgs(String bootstrap, int recordSize, String group) {
        return producer() ? PerfTool.producerArgs(bootstrap, topic, records, warmup, recordSize, throughput, acks,
                kind == Kind.IDEMPOTENT || kind == Kind.TRANSACTIONAL,
                kind == Kind.TRANSACTIONAL ? "bench-txn-" + group : null)
                : share() ? PerfTool.shareConsumerArgs(bootstrap, topic, records, group, shareConsumers())
                : PerfTool.consumerArgs(bootstrap, topic, records, group);
    }

    /** A generous bound on the tool's run: a minute plus 2 ms per record, or twice the paced time. */
    Duration timeout() {
        long seconds = 60 + records / 500;
        if (throughput > 0) {
            seconds = Math.max(seconds, 60 + 2 * records / throughput);
        }
        if (!producer()) {
            seconds += 2L * PerfTool.CONSUMER_IDLE_TIMEOUT_MS / 1000;
        }
        return Duration.ofSeconds(seconds);
    }
}
