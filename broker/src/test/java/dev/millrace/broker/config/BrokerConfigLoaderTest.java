package dev.millrace.broker.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.network.ConnectionLimits;

@Timeout(10)
class BrokerConfigLoaderTest {

    @TempDir
    Path tmp;

    @Test
    void shouldStartFromTheEmbeddedDefaults() {
        BrokerConfig config = BrokerConfigLoader.load(null, Map.of());
        assertThat(config.host()).isEqualTo("localhost");
        assertThat(config.port()).isEqualTo(9092);
        assertThat(config.dataDir().getPath()).isEqualTo("data");
        assertThat(config.controllerPort()).isEqualTo(9093);
        assertThat(config.autoCreateTopicsEnable()).isTrue();
    }

    @Test
    void shouldReadAFileAndLetOverridesWin() throws IOException {
        Path file = tmp.resolve("broker.properties");
        Files.writeString(file, "port=9500\nnum.partitions=4\nlog.cleanup.policy=compact,delete\n");
        BrokerConfig config = BrokerConfigLoader.load(file.toFile(), Map.of("port", "9600"));
        assertThat(config.port()).isEqualTo(9600);
        assertThat(config.numPartitions()).isEqualTo(4);
        assertThat(config.logDefaults()).containsEntry("cleanup.policy", "compact,delete");
    }

    @Test
    void shouldReportEveryProblemTogetherBySettingName() {
        assertThatThrownBy(() -> BrokerConfigLoader.fromMap(Map.of("port", "70000", "num.partitions", "many",
                "lsteners", "x", "log.cleanup.policy", "archive", "auto.create.topics.enable", "yes")))
                .isInstanceOf(ConfigurationException.class)
                .satisfies(e -> assertThat(((ConfigurationException) e).problems()).hasSize(5))
                .hasMessageContaining("port: must be less than or equal to 65535 (was 70000)")
                .hasMessageContaining("num.partitions: 'many' is not a whole number")
                .hasMessageContaining("unknown setting 'lsteners'")
                .hasMessageContaining("log.cleanup.policy:")
                .hasMessageContaining("auto.create.topics.enable: 'yes' is not true or false");
    }

    @Test
    void shouldNameAMissingConfigFile() {
        assertThatThrownBy(() -> BrokerConfigLoader.load(tmp.resolve("nope.properties").toFile(), Map.of()))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("nope.properties");
    }

    @Test
    void shouldReadTheConnectionLimitsWithKafkasDefaults() {
        assertThat(BrokerConfigLoader.load(null, Map.of()).connectionLimits())
                .isEqualTo(new ConnectionLimits(104_857_600, Integer.MAX_VALUE, Integer.MAX_VALUE, 600_000));
        BrokerConfig config = BrokerConfigLoader.fromMap(Map.of("socket.request.max.bytes", "65536",
                "max.connections", "100", "max.connections.per.ip", "10", "connections.max.idle.ms", "5000"));
        assertThat(config.connectionLimits()).isEqualTo(new ConnectionLimits(65_536, 100, 10, 5000));
    }

    @Test
    void shouldRefuseBadConnectionLimitsBySettingName() {
        assertThatThrownBy(() -> BrokerConfigLoader.fromMap(Map.of("socket.request.max.bytes", "-1",
                "max.connections", "0", "max.connections.per.ip", "lots", "connections.max.idle.ms", "0")))
                .isInstanceOf(ConfigurationException.class)
                .satisfies(e -> assertThat(((ConfigurationException) e).problems()).hasSize(4))
                .hasMessageContaining("socket.request.max.bytes: must be greater than or equal to 1024 (was -1)")
                .hasMessageContaining("max.connections: must be greater than or equal to 1 (was 0)")
                .hasMessageContaining("max.connections.per.ip: 'lots' is not a whole number")
                .hasMessageContaining("connections.max.idle.ms: must be greater than or equal to 1 (was 0)");
    }
}
