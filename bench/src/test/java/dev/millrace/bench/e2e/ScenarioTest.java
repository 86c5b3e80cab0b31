package dev.millrace.bench.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

/** The share runs' tool arguments: one share consumer, or four in one group. */
class ScenarioTest {

    @Test
    void shareRunStartsOneConsumerWithTheToolsDefaults() {
        Scenario share = Scenario.of(Scenario.Kind.SHARE, 1_000, 100, 10, 1024);

        List<String> args = share.toolArgs("127.0.0.1:9092", 1024, "g");

        assertThat(share.share()).isTrue();
        assertThat(share.consumer()).isTrue();
        assertThat(args).startsWith(PerfTool.SHARE_CONSUMER).doesNotContain("--threads");
        assertThat(args).containsSequence("--group", "g").containsSequence("--num-records", "1000");
    }

    @Test
    void share4RunStartsFourConsumersInOneGroup() {
        Scenario share4 = Scenario.of(Scenario.Kind.of("share4"), 1_000, 100, 10, 1024);

        List<String> args = share4.toolArgs("127.0.0.1:9092", 1024, "g");

        assertThat(share4.share()).isTrue();
        assertThat(share4.producer()).isFalse();
        assertThat(share4.shareConsumers()).isEqualTo(4);
        assertThat(share4.metrics()).contains(Metric.SHARE_OF_GROUP);
        assertThat(args).startsWith(PerfTool.SHARE_CONSUMER).containsSequence("--threads", "4")
                .containsSequence("--group", "g");
    }

    @Test
    void consumerGroupRunIsNotAShareRun() {
        Scenario consume = Scenario.of(Scenario.Kind.CONSUME, 1_000, 100, 10, 1024);

        assertThat(consume.share()).isFalse();
        assertThat(consume.shareConsumers()).isZero();
        assertThat(consume.toolArgs("127.0.0.1:9092", 1024, "g")).startsWith(PerfTool.CONSUMER);
    }
}
