package dev.millrace.broker.share;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidGroupIdException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.delay.SystemTimer;

/**
 * Per-group delivery count limit and redelivery backoff: validation naming the setting, settings taken from the
 * committed metadata (in order, stale images ignored), and that share-partitions (new and existing) use the group's
 * values over the broker's.
 */
@Timeout(10)
class ShareGroupConfigsTest {

    private static final ShareGroupConfig BROKER = ShareGroupConfig.defaults().withDeliveryCountLimit(5)
            .withAutoOffsetResetEarliest(true)
            .withRedeliveryBackoff(0, 60_000);

    private final ShareStateStore store = ShareStateStore.NONE;
    /** The settings as the metadata log would hold them, and its index. */
    private final Map<String, Map<String, String>> committed = new HashMap<>();
    private long index;
    private final ManualClock clock = new ManualClock();
    private final SystemTimer timer = new SystemTimer(1, 20, clock, Runnable::run);

    @AfterEach
    void closeTimer() {
        timer.close();
    }

    @Test
    void shouldUseTheBrokerSettingsWhenTheGroupSetsNone() {
        ShareGroupConfigs configs = new ShareGroupConfigs(BROKER);

        assertThat(configs.effective("g")).isEqualTo(BROKER);
        assertThat(configs.describe("g")).containsEntry(ShareGroupConfigs.DELIVERY_COUNT_LIMIT, Optional.empty());
        assertThat(configs.defaultValue(ShareGroupConfigs.DELIVERY_COUNT_LIMIT)).isEqualTo("5");
        assertThat(configs.defaultValue(ShareGroupConfigs.REDELIVERY_BACKOFF_MAX_MS)).isEqualTo("60000");
    }

    @Test
    void shouldOverrideTheLimitAndBackoffPerGroupFromTheCommittedSettings() {
        ShareGroupConfigs configs = new ShareGroupConfigs(BROKER);

        alter(configs, "g", Map.of(ShareGroupConfigs.DELIVERY_COUNT_LIMIT, "3",
                ShareGroupConfigs.REDELIVERY_BACKOFF_MS, "100", ShareGroupConfigs.REDELIVERY_BACKOFF_MAX_MS, "400"),
                List.of());

        ShareGroupConfig effective = configs.effective("g");
        assertThat(effective.deliveryCountLimit()).isEqualTo(3);
        assertThat(effective.redeliveryDelayMs(1)).isEqualTo(100);
        assertThat(effective.redeliveryDelayMs(4)).isEqualTo(400);
        assertThat(effective.recordLockDurationMs()).isEqualTo(BROKER.recordLockDurationMs());
        assertThat(configs.effective("other")).isEqualTo(BROKER);
        ShareGroupConfigs restarted = new ShareGroupConfigs(BROKER);
        restarted.update(index, committed);
        assertThat(restarted.effective("g")).isEqualTo(effective);

        alter(configs, "g", Map.of(), List.of(ShareGroupConfigs.DELIVERY_COUNT_LIMIT));
        assertThat(configs.effective("g").deliveryCountLimit()).isEqualTo(5);
    }

    @Test
    void shouldRefuseInvalidValuesNamingTheSetting() {
        ShareGroupConfigs configs = new ShareGroupConfigs(BROKER);

        assertRefused(configs, Map.of(ShareGroupConfigs.DELIVERY_COUNT_LIMIT, "0"),
                "share.delivery.count.limit must be 1..32767, got 0");
        assertRefused(configs, Map.of(ShareGroupConfigs.DELIVERY_COUNT_LIMIT, "40000"),
                "share.delivery.count.limit must be 1..32767, got 40000");
        assertRefused(configs, Map.of(ShareGroupConfigs.DELIVERY_COUNT_LIMIT, "many"),
                "share.delivery.count.limit must be a whole number, got 'many'");
        assertRefused(configs, Map.of(ShareGroupConfigs.REDELIVERY_BACKOFF_MS, "-1"),
                "share.redelivery.backoff.ms must be 0..");
        assertRefused(configs, Map.of(ShareGroupConfigs.REDELIVERY_BACKOFF_MS, "70000"),
                "share.redelivery.backoff.ms (70000) must not exceed share.redelivery.backoff.max.ms (60000, the "
                        + "broker's)");
        assertRefused(configs, Map.of(ShareGroupConfigs.REDELIVERY_BACKOFF_MS, "500",
                ShareGroupConfigs.REDELIVERY_BACKOFF_MAX_MS, "100"), "must not exceed");
        assertThatThrownBy(() -> configs.change("g", Map.of(), Map.of("share.delivery.count.limt", "3"), List.of()))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("unknown group config 'share.delivery.count.limt'");
        assertThatThrownBy(() -> configs.change("", Map.of(), Map.of(), List.of()))
                .isInstanceOf(InvalidGroupIdException.class);
        assertThat(committed).isEmpty();
        assertThat(configs.effective("g")).isEqualTo(BROKER);
    }

    @Test
    void shouldApplyOnlyCommittedSettingsAndIgnoreAnOlderImage() {
        ShareGroupConfigs configs = new ShareGroupConfigs(BROKER);
        List<String> changed = new ArrayList<>();
        configs.onChange(changed::add);

        Map<String, String> next = configs.change("g", Map.of(), Map.of(ShareGroupConfigs.DELIVERY_COUNT_LIMIT, " 2 "),
                List.of());
        assertThat(next).containsExactly(Map.entry(ShareGroupConfigs.DELIVERY_COUNT_LIMIT, "2"));
        assertThat(configs.effective("g")).isEqualTo(BROKER);

        configs.update(7, Map.of("g", next, "h", Map.of(ShareGroupConfigs.AUTO_OFFSET_RESET, "latest")));
        configs.update(6, Map.of());
        assertThat(configs.autoOffsetResetEarliest("h")).isFalse();
        configs.update(8, Map.of("g", next));

        assertThat(configs.effective("g").deliveryCountLimit()).isEqualTo(2);
        assertThat(configs.autoOffsetResetEarliest("h")).isTrue();
        assertThat(changed).containsExactly("g", "h", "h");
    }

    @Test
    void shouldArchiveAtTheGroupLimitInPartitionsCreatedBeforeAndAfterTheChange() {
        ShareGroupConfigs configs = new ShareGroupConfigs(BROKER);
        InMemoryShareLog log = new InMemoryShareLog();
        log.append(1);
        List<DeadLetter> deadLetters = new ArrayList<>();
        SharePartitionListener listener = new SharePartitionListener() {
            @Override
            public void onRecordsAvailable(SharePartitionKey key) {
            }

            @Override
            public void onArchived(DeadLetter deadLetter) {
                deadLetters.add(deadLetter);
            }
        };
        TopicPartition tp = new TopicPartition("queue", 0);
        ShareTopics topics = new SingleLogTopics(tp, log);
        SharePartitionManager manager = new SharePartitionManager(BROKER, topics, timer, clock, listener, store);
        manager.setGroupConfigs(configs);
        SharePartition existing = manager.getOrCreate("g", Uuid.randomUuid(), tp).orElseThrow();

        alter(configs, "g", Map.of(ShareGroupConfigs.DELIVERY_COUNT_LIMIT, "2"), List.of());
        SharePartition created = manager.getOrCreate("g2", Uuid.randomUuid(), tp).orElseThrow();
        alter(configs, "g2", Map.of(ShareGroupConfigs.DELIVERY_COUNT_LIMIT, "1"), List.of());

        assertThat(deliveriesUntilArchived(existing, 0)).isEqualTo(2);
        assertThat(deliveriesUntilArchived(created, 0)).isEqualTo(1);
        assertThat(deadLetters).extracting(DeadLetter::deliveryCount).containsExactly(2, 1);
        assertThat(deadLetters).extracting(DeadLetter::reason).containsOnly(DeadLetter.REASON_DELIVERY_LIMIT);
    }

    private static int deliveriesUntilArchived(SharePartition partition, long offset) {
        int deliveries = 0;
        while (true) {
            AcquireResult acquired = partition.acquire("m", 1, 1 << 20);
            if (acquired.acquired().isEmpty()) {
                return deliveries;
            }
            deliveries++;
            assertThat(deliveries).as("deliveries").isLessThanOrEqualTo(10);
            partition.acknowledge("m", List.of(new AcknowledgementBatch(offset, offset,
                    new byte[] {AcknowledgeType.RELEASE.id()})));
        }
    }

    /** What the controller does: checks the change against the committed settings, commits, every broker applies. */
    private void alter(ShareGroupConfigs configs, String groupId, Map<String, String> set, List<String> delete) {
        Map<String, String> next = configs.change(groupId, committed.getOrDefault(groupId, Map.of()), set, delete);
        if (next.isEmpty()) {
            committed.remove(groupId);
        } else {
            committed.put(groupId, next);
        }
        configs.update(++index, Map.copyOf(committed));
    }

    private static void assertRefused(ShareGroupConfigs configs, Map<String, String> set, String message) {
        assertThatThrownBy(() -> configs.change("g", Map.of(), set, List.of()))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("Group g: ").hasMessageContaining(message);
    }
}
