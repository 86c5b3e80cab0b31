package dev.millrace.bench.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.bench.e2e.TlsComparison.Transport;

/** The SASL_SSL comparison's arithmetic (cost per broker, Millrace/Kafka per transport, the target) and options. */
@Timeout(10)
class TlsResultTableTest {

    @Test
    void shouldReportCostRatiosAndMissedProduceTargetWhenMillraceIsUnder1point5xOverTls() {
        Scenario produce = Scenario.of(Scenario.Kind.ACKS_1, 1_000, 0, 1, 1024);
        Scenario consume = Scenario.of(Scenario.Kind.CONSUME, 1_000, 0, 1, 1024);
        Map<Scenario, Map<String, Map<Transport, PerfResult>>> results = new LinkedHashMap<>();
        results.put(produce, byBroker(80_000, 100_000, 60_000, 80_000));
        results.put(consume, byBroker(150_000, 300_000, 100_000, 250_000));
        Map<Scenario, List<String>> orders = Map.of(produce, List.of("x"), consume, List.of("y"));

        TlsResultTable table = new TlsResultTable(results, orders);
        String markdown = table.markdown("cmd");

        assertThat(table.allOk()).isTrue();
        // produce: Millrace cost 0.80, Kafka cost 0.75, Millrace/Kafka 1.33 over SASL_SSL, 1.25 over PLAINTEXT
        assertThat(markdown).contains("| acks1 | 80,000 | 100,000 | 0.80 | 60,000 | 80,000 | 0.75 | 1.33 | 1.25 |")
                .contains(">= 1.5x: **not met** |");
        // consume: Millrace/Kafka 1.50 over SASL_SSL meets >= 1x
        assertThat(markdown).contains("| consume | 150,000 | 300,000 | 0.50 | 100,000 | 250,000 | 0.40 | 1.50 | 1.20 |")
                .contains(">= 1.0x: met |");
        assertThat(table.plain()).contains("broker CPU s");
    }

    @Test
    void shouldShowFailedRunsWithoutRatios() {
        Scenario produce = Scenario.of(Scenario.Kind.ACKS_1, 1_000, 0, 1, 1024);
        Map<String, Map<Transport, PerfResult>> byBroker = byBroker(80_000, 100_000, 60_000, 80_000);
        byBroker.get(ResultTable.KAFKA).put(Transport.SASL_SSL,
                PerfResult.failed(PerfResult.Status.FAILED, "authentication failed"));

        TlsResultTable table = new TlsResultTable(Map.of(produce, byBroker), Map.of(produce, List.of("x")));

        assertThat(table.allOk()).isFalse();
        assertThat(table.markdown("cmd")).contains("| 0.80 | failed | 80,000 | n/a | n/a | 1.25 |")
                .endsWith("```\n").contains("| n/a |\n");
        assertThat(table.plain()).contains("Kafka SASL_SSL: failed: authentication failed");
    }

    @Test
    void shouldRefuseRunsTheComparisonDoesNotOffer() {
        assertThatThrownBy(() -> TlsComparison.Options.parse(new String[] {"--runs", "acks1,share"}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("share is not offered here");
        TlsComparison.Options options = TlsComparison.Options.parse(new String[] {"--kafka-first", "--runs", "consume"});
        assertThat(options.kafkaFirst()).isTrue();
        assertThat(options.runs()).containsExactly(Scenario.Kind.CONSUME);
        assertThat(options.records()).isEqualTo(1_000_000);
    }

    private static Map<String, Map<Transport, PerfResult>> byBroker(double millraceTls, double millracePlain,
                                                                     double kafkaTls, double kafkaPlain) {
        Map<String, Map<Transport, PerfResult>> byBroker = new LinkedHashMap<>();
        byBroker.put(ResultTable.MILLRACE, transports(millraceTls, millracePlain));
        byBroker.put(ResultTable.KAFKA, transports(kafkaTls, kafkaPlain));
        return byBroker;
    }

    private static Map<Transport, PerfResult> transports(double tls, double plain) {
        Map<Transport, PerfResult> map = new EnumMap<>(Transport.class);
        map.put(Transport.SASL_SSL, ok(tls));
        map.put(Transport.PLAINTEXT, ok(plain));
        return map;
    }

    private static PerfResult ok(double recordsPerSec) {
        return new PerfResult(PerfResult.Status.OK, "", Map.of(Metric.RECORDS_PER_SEC, recordsPerSec,
                Metric.MB_PER_SEC, recordsPerSec / 1024, Metric.P99_MS, 10.0, Metric.BROKER_CPU_S, 5.0));
    }
}
