package dev.millrace.broker.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;

import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class LogConfigTest {

    @Test
    void shouldUseKafkasDefaults() {
        LogConfig config = LogConfig.defaults();
        assertThat(config.segmentBytes()).isEqualTo(1 << 30);
        assertThat(config.retentionMs()).isEqualTo(7L * 24 * 3600 * 1000);
        assertThat(config.retentionBytes()).isEqualTo(-1);
        assertThat(config.flushMessages()).isEqualTo(Long.MAX_VALUE);
        assertThat(config.delete()).isTrue();
        assertThat(config.compact()).isFalse();
        assertThat(config.timestampType()).isEqualTo(TimestampType.CREATE_TIME);
    }

    @Test
    void shouldParseStringsAndBothCleanupPolicies() {
        LogConfig config = new LogConfig(Map.of(LogConfig.SEGMENT_BYTES, "4096", LogConfig.CLEANUP_POLICY,
                "compact,delete", LogConfig.FLUSH_MESSAGES, "1"));
        assertThat(config.segmentBytes()).isEqualTo(4096);
        assertThat(config.compact()).isTrue();
        assertThat(config.delete()).isTrue();
        assertThat(config.flushMessages()).isEqualTo(1);
        assertThat(config.with(Map.of(LogConfig.CLEANUP_POLICY, "compact")).delete()).isFalse();
    }

    @Test
    void shouldNameTheSettingInEveryError() {
        assertThatThrownBy(() -> new LogConfig(Map.of(LogConfig.SEGMENT_BYTES, "10")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("segment.bytes").hasMessageContaining("10");
        assertThatThrownBy(() -> new LogConfig(Map.of(LogConfig.RETENTION_MS, "soon")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("retention.ms").hasMessageContaining("soon");
        assertThatThrownBy(() -> new LogConfig(Map.of(LogConfig.CLEANUP_POLICY, "archive")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("cleanup.policy")
                .hasMessageContaining("archive");
        assertThatThrownBy(() -> new LogConfig(Map.of(LogConfig.FLUSH_MESSAGES, "0")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("flush.messages");
        assertThatThrownBy(() -> new LogConfig(Map.of(LogConfig.MESSAGE_TIMESTAMP_TYPE, "WallClock")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("message.timestamp.type");
        assertThatThrownBy(() -> new LogConfig(Map.of("segment.byte", "100000")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("Unknown log setting 'segment.byte'");
    }
}
