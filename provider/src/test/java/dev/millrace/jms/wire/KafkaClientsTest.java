package dev.millrace.jms.wire;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.jms.ConnectionSettings;
import dev.millrace.jms.MillraceConnectionFactory;
import dev.millrace.jms.TestSettings;

/** The Kafka client configs the provider chooses on purpose (the reasons are in {@link KafkaClients}). */
@Timeout(10)
class KafkaClientsTest {

    private final ConnectionSettings settings = TestSettings.of(new MillraceConnectionFactory("127.0.0.1:1"));

    @Test
    void noClientAsksTheBrokerForTelemetrySubscriptions() {
        assertThat(KafkaClients.common(settings, "client"))
                .containsEntry(CommonClientConfigs.ENABLE_METRICS_PUSH_CONFIG, false)
                .containsEntry(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:1");
    }

    @Test
    void producersRetryASendThroughTheFailoverWindowBeforeItFails() {
        MillraceConnectionFactory f = new MillraceConnectionFactory("127.0.0.1:1");
        f.setRequestTimeoutMs(10_000);
        f.setFailoverTimeoutMs(30_000);
        f.setLingerMs(5);
        Map<String, Object> c = new java.util.HashMap<>();
        KafkaClients.applyTimeouts(c, TestSettings.of(f));
        assertThat(c).containsEntry(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 40_000)
                .containsEntry(ProducerConfig.MAX_BLOCK_MS_CONFIG, 40_000)
                .containsEntry(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        f.setFailoverTimeoutMs(0);
        c.clear();
        KafkaClients.applyTimeouts(c, TestSettings.of(f));
        assertThat(c).containsEntry(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 10_000)
                .containsEntry(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000 - 5 - 1);
    }
}
