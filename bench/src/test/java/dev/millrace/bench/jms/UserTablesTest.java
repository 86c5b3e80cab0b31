package dev.millrace.bench.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Issue 21's table: figures, ratios, targets and verdicts; the child client's RESULT line; the command line. */
@Timeout(20)
class UserTablesTest {

    @Test
    void shouldJudgeEachTargetOnItsOwnTerms() {
        UserOutcome millrace = new UserOutcome();
        millrace.fresh.put("queue@1000", new PacedLatency.Figures(800, 12_000, 30_000, 20_000, 1_000));
        millrace.steady.put("queue@1000", new PacedLatency.Figures(500, 4_000, 9_000, 20_000, 1_000));
        millrace.fills.addAll(List.of(90_000.0, 120_000.0, 100_000.0));
        millrace.consume.put(AckMode.AUTO, 150_000.0);
        millrace.consume.put(AckMode.CLIENT, 80_000.0);
        millrace.footprint.put(50, new ClientFootprint.Figures(50, 10, 110, 0, 10 * 1024 * 1024, 900));
        millrace.queueRate = 90_000.0;
        millrace.topicRate = 100_000.0;
        UserOutcome artemis = new UserOutcome();
        artemis.fresh.put("queue@1000", new PacedLatency.Figures(1_000, 8_000, 20_000, 20_000, 1_000));
        artemis.fills.add(30_000.0);
        artemis.consume.put(AckMode.AUTO, 40_000.0);
        artemis.consume.put(AckMode.CLIENT, 40_000.0);
        artemis.footprint.put(50, new ClientFootprint.Figures(50, 10, 30, 0, 5 * 1024 * 1024, 600));

        String table = UserTables.markdown(UserTables.rows(millrace, artemis, settings(UserSettings.PARTS)), outcomes(millrace, artemis));

        assertThat(table).contains(
                "| fresh, queue, 1,000 msgs/s: p50 ms | 0.80 | 1.00 | 0.80 | <= Artemis | MET |",
                "| fresh, queue, 1,000 msgs/s: p99 ms | 12.00 | 8.00 | 1.50 | <= 10 ms | MISSED |",
                "| fresh, topic, 1,000 msgs/s: p50 ms | - | - | - | <= Artemis | - |",
                "| steady, queue, 1,000 msgs/s: p99 ms | 4.00 | - | - | <= 5 ms | MET |",
                "| steady, queue, 1,000 msgs/s: p50 ms | 0.50 | - | - | none |  |",
                "| async send, msgs/s (median of the fills) | 100,000 | 30,000 | 3.33 | >= 3x Artemis | MET |",
                "| consume pre-filled queue, AUTO_ACKNOWLEDGE, msgs/s | 150,000 | 40,000 | 3.75 | >= 3x Artemis | MET |",
                "| consume pre-filled queue, CLIENT_ACKNOWLEDGE, acknowledge every 100, msgs/s | 80,000 | 40,000 | "
                        + "2.00 | >= 3x Artemis | MISSED |",
                "| consume pre-filled queue, transacted, commit every 100, msgs/s | - | - | - | >= 3x Artemis | - |",
                "| footprint, 50 connections: threads added per connection | 2.00 | 0.40 | 5.00 | <= 0.5 | MISSED |",
                "| footprint, 50 connections: heap added after GC, MiB | 10.0 | 5.0 | 2.00 | none |  |",
                "| footprint, 50 connections: setup wall time, ms | 900 | 600 | 1.50 | <= Artemis | MISSED |",
                "| Millrace queue msgs/s vs plain topic subscriber msgs/s (peer column = topic) | 90,000 | 100,000 | 0.90 | "
                        + "ratio >= 0.8 | MET |");
    }

    @Test
    void shouldListFailuresUnderTheTable() {
        UserOutcome millrace = new UserOutcome();
        millrace.failures.put("fresh queue@1000", "java.lang.IllegalStateException: boom");

        String table = UserTables.markdown(UserTables.rows(millrace, new UserOutcome(), settings(List.of("fresh"))), outcomes(millrace, new UserOutcome()));

        assertThat(table).contains("Millrace fresh queue@1000 FAILED: java.lang.IllegalStateException: boom");
    }

    @Test
    void shouldReadTheChildsResultLine() {
        Map<String, Double> values = ChildClient.parse("RESULT p50Us=512.5 p99Us=4000.0 count=20000");

        assertThat(values).containsEntry("p50Us", 512.5).containsEntry("p99Us", 4000.0)
                .containsEntry("count", 20000.0);
        assertThatThrownBy(() -> ChildClient.parse("RESULT p50Us")).hasMessageContaining("'p50Us' is not key=value");
        assertThatThrownBy(() -> ChildClient.parse("progress line")).hasMessageContaining("not a RESULT line");
    }

    @Test
    void shouldLetFlagsOverrideTheQuickSettingsAndRejectUnknownParts() {
        JmsUserComparison.Parsed parsed = JmsUserComparison.parse(new String[] {
            "--quick", "--messages", "5000", "--parts", "throughput,footprint", "--connections", "10,20"});

        assertThat(parsed.settings().messages()).isEqualTo(5_000);
        assertThat(parsed.settings().latencySeconds()).isEqualTo(UserSettings.quick().latencySeconds());
        assertThat(parsed.settings().parts()).containsExactly("throughput", "footprint");
        assertThat(parsed.settings().connections()).containsExactly(10, 20);
        assertThatThrownBy(() -> JmsUserComparison.parse(new String[] {"--parts", "fresh,latency"}))
                .hasMessageContaining("unknown part 'latency'");
        assertThatThrownBy(() -> JmsUserComparison.parse(new String[] {"--messages", "0"}))
                .hasMessageContaining("messages must be positive");
        assertThatThrownBy(() -> JmsUserComparison.parse(new String[] {"--topic-subscriber", "shared"}))
                .hasMessageContaining("plain or durable, not shared");
    }

    private static UserSettings settings(List<String> parts) {
        return new UserSettings(parts, 1_000, 0, List.of(1_000), 5, 0, 1, List.of(50), "plain");
    }

    private static Map<String, UserOutcome> outcomes(UserOutcome millrace, UserOutcome artemis) {
        Map<String, UserOutcome> outcomes = new LinkedHashMap<>();
        outcomes.put("Millrace", millrace);
        outcomes.put("Artemis", artemis);
        return outcomes;
    }
}
