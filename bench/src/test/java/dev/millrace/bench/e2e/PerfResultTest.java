package dev.millrace.bench.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

/** Parsing of the Kafka 4.4 perf tools' summaries, on lines the tools printed here. */
class PerfResultTest {

    @Test
    void producerTakesTheFinalSummaryNotTheProgressLine() {
        PerfResult result = PerfResult.parseProducer(List.of(
                "65311 records sent, 13062.2 records/sec (12.76 MB/sec), 1437.8 ms avg latency, 2078.0 ms max latency.",
                "100000 records sent, 15112.588786 records/sec (14.76 MB/sec), 1430.29 ms avg latency, "
                        + "2078.00 ms max latency, 1423 ms 50th, 1999 ms 95th, 2065 ms 99th, 2076 ms 99.9th."),
                100_000);

        assertThat(result.ok()).isTrue();
        assertThat(result.get(Metric.RECORDS_PER_SEC)).isEqualTo(15112.588786);
        assertThat(result.get(Metric.MB_PER_SEC)).isEqualTo(14.76);
        assertThat(result.get(Metric.AVG_MS)).isEqualTo(1430.29);
        assertThat(result.get(Metric.MAX_MS)).isEqualTo(2078.0);
        assertThat(result.get(Metric.P50_MS)).isEqualTo(1423.0);
        assertThat(result.get(Metric.P95_MS)).isEqualTo(1999.0);
        assertThat(result.get(Metric.P99_MS)).isEqualTo(2065.0);
        assertThat(result.get(Metric.P999_MS)).isEqualTo(2076.0);
        assertThat(result.get(Metric.WHOLE_RUN_P99_MS)).isNull();
    }

    @Test
    void producerPrefersTheSteadyStateAndKeepsTheWholeRunsTail() {
        PerfResult result = PerfResult.parseProducer(List.of(
                "Warmup first 20000 records. Steady state results will print after the complete test summary.",
                "50000 records sent, 8259.002313 records/sec (8.07 MB/sec), 1768.33 ms avg latency, "
                        + "2444.00 ms max latency, 1856 ms 50th, 2414 ms 95th, 2437 ms 99th, 2442 ms 99.9th.",
                "30000 steady state records sent, 7360.157017 records/sec (7.19 MB/sec), 1724.62 ms avg latency, "
                        + "2299.00 ms max latency, 1784 ms 50th, 2253 ms 95th, 2287 ms 99th, 2296 ms 99.9th."),
                50_000);

        assertThat(result.ok()).isTrue();
        assertThat(result.get(Metric.RECORDS_PER_SEC)).isEqualTo(7360.157017);
        assertThat(result.get(Metric.P99_MS)).isEqualTo(2287.0);
        assertThat(result.get(Metric.MAX_MS)).isEqualTo(2299.0);
        assertThat(result.get(Metric.WHOLE_RUN_P99_MS)).isEqualTo(2437.0);
        assertThat(result.get(Metric.WHOLE_RUN_MAX_MS)).isEqualTo(2444.0);
    }

    @Test
    void producerShortOfRecordsFailsAndNoSummaryIsNull() {
        PerfResult result = PerfResult.parseProducer(List.of(
                "900 records sent, 90.0 records/sec (0.09 MB/sec), 1.00 ms avg latency, 2.00 ms max latency, "
                        + "1 ms 50th, 1 ms 95th, 2 ms 99th, 2 ms 99.9th."), 1_000);

        assertThat(result.status()).isEqualTo(PerfResult.Status.FAILED);
        assertThat(result.reason()).contains("900 of 1000");
        assertThat(PerfResult.parseProducer(List.of("org.apache.kafka.common.KafkaException: boom"), 1)).isNull();
    }

    @Test
    void consumerReadsTheLineUnderTheHeader() {
        List<String> stdout = List.of(
                "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, "
                        + "rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec",
                "2026-11-30 07:06:13:214, 2026-11-30 07:06:15:713, 97.6563, 39.0781, 100000, 40016.0064, 1217, "
                        + "1282, 76.1749, 78003.1201");

        PerfResult result = PerfResult.parseConsumer(stdout, 100_000);

        assertThat(result.ok()).isTrue();
        assertThat(result.get(Metric.RECORDS_PER_SEC)).isEqualTo(40016.0064);
        assertThat(result.get(Metric.MB_PER_SEC)).isEqualTo(39.0781);
        assertThat(result.get(Metric.FETCH_MB_PER_SEC)).isEqualTo(76.1749);
        assertThat(result.get(Metric.FETCH_RECORDS_PER_SEC)).isEqualTo(78003.1201);
        assertThat(result.get(Metric.GROUP_JOIN_MS)).isEqualTo(1217.0);
        assertThat(PerfResult.parseConsumer(stdout, 200_000).status()).isEqualTo(PerfResult.Status.FAILED);
        assertThat(PerfResult.parseConsumer(stdout.subList(0, 1), 1)).isNull();
    }

    @Test
    void problemsKeepLogWarningsAndExceptionsWithoutStackFrames() {
        List<String> problems = Cleanup.problems(List.of(
                "[main] INFO org.apache.kafka.clients.Metadata - fine",
                "org.apache.kafka.common.errors.UnsupportedVersionException: The node does not support FIND_COORDINATOR",
                "\tat org.apache.kafka.clients.Foo.bar(Foo.java:1)",
                "[main] WARN org.apache.kafka.clients.NetworkClient - retrying",
                "[main] WARN org.apache.kafka.clients.NetworkClient - retrying"), 5);

        assertThat(problems).containsExactly(
                "org.apache.kafka.common.errors.UnsupportedVersionException: The node does not support FIND_COORDINATOR",
                "[main] WARN org.apache.kafka.clients.NetworkClient - retrying");
    }
}
