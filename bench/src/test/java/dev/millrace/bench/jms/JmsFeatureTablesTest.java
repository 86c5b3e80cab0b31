package dev.millrace.bench.jms;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.bench.jms.JmsFeatureComparison.Outcome;
import dev.millrace.bench.jms.JmsFeatureHarness.Selective;
import dev.millrace.bench.jms.JmsFeatureHarness.Selectors;
import dev.millrace.bench.jms.JmsFeatureHarness.Transacted;

@Timeout(20)
class JmsFeatureTablesTest {

    private static final JmsFeatureHarness.Settings SETTINGS = new JmsFeatureHarness.Settings("t", 1024, 0,
            List.of(1, 10), 8, 1_000, 10, 1_000, 100, 1_000, 5_000, 100, 1_000, 3, 3);

    @Test
    void shouldGiveRatiosAndTargetsWhenBothBrokersRan() {
        Outcome millrace = new Outcome();
        millrace.transacted.put(1, new Transacted(1, 300, 2_400, 2_500));
        millrace.transacted.put(10, new Transacted(10, 1_000, 8_000, 8_100));
        millrace.selectors = new Selectors(10_000, new Selective(100, 60, 0.01, false, 1_000, 0),
                new Selective(100, 100, 1.0, false, 1_000, 900), List.of(0.41, 0.60, 0.75), List.of(0.70, 0.45, 0.52));
        Outcome artemis = new Outcome();
        artemis.transacted.put(1, new Transacted(1, 200, 1_600, 1_700));
        artemis.transacted.put(10, new Transacted(10, 2_000, 16_000, 16_100));

        String tables = JmsFeatureTables.markdown(outcomes(millrace, artemis), SETTINGS, Set.of("txn", "selector"));

        assertThat(tables).contains("| 1 | 300 | 200 | 1.50 | PASS |", "| 10 | 1,000 | 2,000 | 0.50 | MISS |",
                "| selector alone: matches/s / unfiltered msgs/s, from consumer creation (>= 0.50?) | 0.60 PASS | - |",
                "| selector alone, first message to last: ratio in each round | 0.70 / 0.45 / 0.52 | - |",
                "| selector alone, first message to last: median ratio (target >= 0.50) | 0.52 PASS | - |",
                "| selector + complement consumer: records scanned/s | 1,000 | - |",
                "| selector alone: ratio in each round (the median round is above) | 0.41 / 0.60 / 0.75 | - |");
        assertThat(tables).doesNotContain("Delivery delay");
    }

    @Test
    void shouldMarkAStalledSelectiveConsumerAsMissWhenItsRateLooksHigh() {
        Outcome millrace = new Outcome();
        millrace.selectors = new Selectors(100, new Selective(100, 90, 0.1, true, 0, 0),
                new Selective(100, 100, 1.0, false, 1_000, 900));
        millrace.failures.put("delay", "java.lang.IllegalStateException: received 1 of 100 delayed messages");

        String tables = JmsFeatureTables.markdown(outcomes(millrace, null), SETTINGS, Set.of("selector", "delay"));

        assertThat(tables).contains("| selector alone: matches delivered | 90 of 100 (STALLED) | - |",
                "| selector alone: records scanned/s | - | - |", "9.00 MISS",
                "| received of sent | - | - |",
                "Millrace delay FAILED: java.lang.IllegalStateException: received 1 of 100 delayed messages");
    }

    @Test
    void shouldMeasureFromTheFirstMessageToTheLastWithoutTheTimeBeforeTheFirst() {
        // 100 messages in 0.11 s from creation, the first after 0.01 s: the other 99 came in 0.10 s
        assertThat(new Selective(100, 100, 0.11, false, 1_000, 0, 0.01).steadyPerSecond()).isCloseTo(990.0,
                org.assertj.core.data.Offset.offset(1e-6));
        assertThat(new Selective(100, 1, 0.11, false, 1_000, 0, 0.01).steadyPerSecond()).isNaN();
        assertThat(new Selective(100, 100, 0.11, false, 1_000, 0).steadyPerSecond()).isNaN();
        assertThat(new Selectors(1, new Selective(1, 1, 1, false, 1, 0), new Selective(1, 1, 1, false, 1, 0),
                List.of(0.3), List.of(0.62, 0.40)).medianSteadyRatio()).isEqualTo(0.40);
    }

    @Test
    void shouldMarkASteadyMedianBelowHalfAsMiss() {
        Outcome millrace = new Outcome();
        millrace.selectors = new Selectors(10_000, new Selective(100, 60, 0.01, false, 1_000, 0),
                new Selective(100, 100, 1.0, false, 1_000, 900), List.of(0.60, 0.60, 0.60), List.of(0.49, 0.20, 0.90));

        String tables = JmsFeatureTables.markdown(outcomes(millrace, null), SETTINGS, Set.of("selector"));

        assertThat(tables).contains(
                "| selector alone, first message to last: median ratio (target >= 0.50) | 0.49 MISS | - |");
    }

    private static Map<String, Outcome> outcomes(Outcome millrace, Outcome artemis) {
        Map<String, Outcome> outcomes = new LinkedHashMap<>();
        outcomes.put("Millrace", millrace);
        if (artemis != null) {
            outcomes.put("Artemis", artemis);
        }
        return outcomes;
    }
}
