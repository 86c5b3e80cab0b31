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
}
