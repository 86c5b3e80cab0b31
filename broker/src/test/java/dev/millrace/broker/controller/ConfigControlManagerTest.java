package dev.millrace.broker.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.broker.controller.Controller.GroupConfigChange;
import dev.millrace.broker.controller.Controller.TopicConfigChange;
import dev.millrace.broker.controller.MetadataRecord.GroupConfigRecord;
import dev.millrace.broker.controller.MetadataRecord.ConfigRecord;
import dev.millrace.broker.controller.MetadataRecord.TopicRecord;

class ConfigControlManagerTest {

    private final ConfigControlManager manager = new ConfigControlManager();
    private final MetadataImage image = imageWithTopic(Map.of("retention.ms", "1000", "segment.bytes", "1048576"));

    private static MetadataImage imageWithTopic(Map<String, String> configs) {
        MetadataImageBuilder builder = new MetadataImageBuilder(MetadataImage.EMPTY);
        builder.replay(new TopicRecord("t", Uuid.randomUuid()));
        configs.forEach((name, value) -> builder.replay(new ConfigRecord("t", name, value)));
        return builder.build(1);
    }

    private ControllerResult<Map<String, ApiError>> alter(Map<String, String> set, List<String> delete,
                                                          boolean replace) {
        return manager.handleAlterConfigs(image, Map.of("t", new TopicConfigChange(set, delete, replace)));
    }

    @Test
    @Timeout(10)
    void shouldEmitRecordsOnlyForSettingsThatChangeWhenAltering() {
        ControllerResult<Map<String, ApiError>> result = alter(
                Map.of("retention.ms", "1000", "cleanup.policy", "compact"), List.of("segment.bytes"), false);

        assertThat(result.response()).containsExactly(Map.entry("t", ApiError.NONE));
        assertThat(result.records()).containsExactly(new ConfigRecord("t", "cleanup.policy", "compact"),
                new ConfigRecord("t", "segment.bytes", null));
        assertThat(TopicControlManagerTest.replay(image, result).topic("t").orElseThrow().configs())
                .containsOnly(Map.entry("retention.ms", "1000"), Map.entry("cleanup.policy", "compact"));
    }

    @Test
    @Timeout(10)
    void shouldRecordOnlyChangedGroupSettingsAndRefuseWhatThePolicyRefuses() {
        GroupConfigPolicy policy = (groupId, current, set, delete) -> {
            if (set.containsKey("bad")) {
                throw new org.apache.kafka.common.errors.InvalidConfigurationException("Group " + groupId
                        + ": bad must not be set, got '" + set.get("bad") + "'");
            }
            Map<String, String> next = new HashMap<>(current);
            delete.forEach(next::remove);
            next.putAll(set);
            return next;
        };
        MetadataImageBuilder builder = new MetadataImageBuilder(image);
        builder.replay(new GroupConfigRecord("g", "a", "1"));
        builder.replay(new GroupConfigRecord("g", "b", "2"));
        MetadataImage withGroup = builder.build(2);

        ControllerResult<Map<String, ApiError>> result = manager.handleAlterGroupConfigs(withGroup, policy,
                new java.util.LinkedHashMap<>(Map.of("g", new GroupConfigChange(Map.of("a", "1", "c", "3"),
                        List.of("b")))));
        ControllerResult<Map<String, ApiError>> refused = manager.handleAlterGroupConfigs(withGroup, policy,
                Map.of("h", new GroupConfigChange(Map.of("bad", "x"), List.of()),
                        "", new GroupConfigChange(Map.of("a", "1"), List.of())));

        assertThat(result.response()).containsExactly(Map.entry("g", ApiError.NONE));
        assertThat(result.records()).containsExactly(new GroupConfigRecord("g", "b", null),
                new GroupConfigRecord("g", "c", "3"));
        assertThat(TopicControlManagerTest.replay(withGroup, result).groupConfigs("g"))
                .containsExactly(Map.entry("a", "1"), Map.entry("c", "3"));
        assertThat(refused.records()).isEmpty();
        assertThat(refused.response().get("h").error()).isEqualTo(Errors.INVALID_CONFIG);
        assertThat(refused.response().get("h").message()).isEqualTo("Group h: bad must not be set, got 'x'");
        assertThat(refused.response().get("").error()).isEqualTo(Errors.INVALID_GROUP_ID);
    }

    @Test
    @Timeout(10)
    void shouldReturnUnsetSettingsToDefaultWhenReplacing() {
        ControllerResult<Map<String, ApiError>> result = alter(Map.of("retention.ms", "5"), List.of(), true);

        assertThat(result.records()).containsExactlyInAnyOrder(new ConfigRecord("t", "retention.ms", "5"),
                new ConfigRecord("t", "segment.bytes", null));
    }

    @Test
    @Timeout(10)
    void shouldProduceNoRecordsWhenNothingChanges() {
        ControllerResult<Map<String, ApiError>> result = alter(Map.of("retention.ms", "1000"),
                List.of("cleanup.policy"), false);

        assertThat(result.response().get("t")).isEqualTo(ApiError.NONE);
        assertThat(result.records()).isEmpty();
    }

    @Test
    @Timeout(10)
    void shouldRejectBadChangesNamingTheSetting() {
        Map<String, String> nullValue = new HashMap<>();
        nullValue.put("retention.ms", null);
        Map<String, ControllerResult<Map<String, ApiError>>> cases = Map.of(
                "no.such", alter(Map.of("no.such", "1"), List.of(), false),
                "delete.unknown", alter(Map.of(), List.of("delete.unknown"), false),
                "retention.bytes", alter(Map.of("retention.bytes", "lots"), List.of(), false),
                "retention.ms", alter(nullValue, List.of(), false),
                "segment.ms", alter(Map.of("segment.ms", "5"), List.of("segment.ms"), false));

        cases.forEach((setting, result) -> {
            ApiError error = result.response().get("t");
            assertThat(error.error()).as(setting).isEqualTo(Errors.INVALID_CONFIG);
            assertThat(error.message()).as(setting).contains(setting);
            assertThat(result.records()).as(setting).isEmpty();
        });
    }

    @Test
    @Timeout(10)
    void shouldReportUnknownTopicWhenAltering() {
        ControllerResult<Map<String, ApiError>> result = manager.handleAlterConfigs(image,
                Map.of("nope", new TopicConfigChange(Map.of("retention.ms", "1"), List.of(), false)));

        assertThat(result.response().get("nope").error()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(result.records()).isEmpty();
    }
}
