package dev.millrace.broker.share;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.delay.SystemTimer;

/**
 * Per-group delivery count limit and redelivery backoff: validation naming the setting, persistence, and that
 * share-partitions (new and existing) use the group's values over the broker's.
 */
@Timeout(10)
class ShareGroupConfigsTest {

    private static final ShareGroupConfig BROKER = ShareGroupConfig.defaults().withDeliveryCountLimit(5)
            .withAutoOffsetResetEarliest(true)
            .withRedeliveryBackoff(0, 60_000);

    private final Map<String, Map<String, String>> saved = new HashMap<>();
    private final ShareStateStore store = new ShareStateStore() {
        @Override
        public Optional<SharePartitionSnapshot> load(SharePartitionKey key) {
            return Optional.empty();
        }

        @Override
        public void save(SharePartition partition) {
        }

        @Override
        public Map<String, Map<String, String>> groupConfigs() {
            return saved;
        }

        @Override
        public void saveGroupConfig(String groupId, Map<String, String> configs) {
            saved.put(groupId, Map.copyOf(configs));
        }
    };
    private final ManualClock clock = new ManualClock();
    private final SystemTimer timer = new SystemTimer(1, 20, clock, Runnable::run);

    @AfterEach
    void closeTimer() {
        timer.close();
    }

    @Test
    void shouldUseTheBrokerSettingsWhenTheGroupSetsNone() {
        ShareGroupConfigs configs = new ShareGroupConfigs(BROKER, store);

        assertThat(configs.effective("g")).isEqualTo(BROKER);
        assertThat(configs.describe("g")).containsEntry(ShareGroupConfigs.DELIVERY_COUNT_LIMIT, Optional.empty());
        assertThat(configs.defaultValue(ShareGroupConfigs.DELIVERY_COUNT_LIMIT)).isEqualTo("5");
        assertThat(configs.defaultValue(ShareGroupConfigs.REDELIVERY_BACKOFF_MAX_MS)).isEqualTo("60000");
    }

    @Test
    void shouldOverrideTheLimitAndBackoffPerGroupAndKeepThemAcrossARestart() {
        ShareGroupConfigs configs = new ShareGroupConfigs(BROKER, store);

        ApiError result = configs.alter("g", Map.of(ShareGroupConfigs.DELIVERY_COUNT_LIMIT, "3",
                ShareGroupConfigs.REDELIVERY_BACKOFF_MS, "100", ShareGroupConfigs.REDELIVERY_BACKOFF_MAX_MS, "400"),
                List.of(), false);

        assertThat(result.error()).isEqualTo(Errors.NONE);
        ShareGroupConfig effective = configs.effective("g");
        assertThat(effective.deliveryCountLimit()).isEqualTo(3);
        assertThat(effective.redeliveryDelayMs(1)).isEqualTo(100);
        assertThat(effective.redeliveryDelayMs(4)).isEqualTo(400);
        assertThat(effective.recordLockDurationMs()).isEqualTo(BROKER.recordLockDurationMs());
        assertThat(configs.effective("other")).isEqualTo(BROKER);
        assertThat(new ShareGroupConfigs(BROKER, store).effective("g")).isEqualTo(effective);

        configs.alter("g", Map.of(), List.of(ShareGroupConfigs.DELIVERY_COUNT_LIMIT), false);
        assertThat(configs.effective("g").deliveryCountLimit()).isEqualTo(5);
    }

    @Test
    void shouldRefuseInvalidValuesNamingTheSetting() {
        ShareGroupConfigs configs = new ShareGroupConfigs(BROKER, store);

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
        assertThat(saved).isEmpty();
        assertThat(configs.effective("g")).isEqualTo(BROKER);
    }

    @Test
    void shouldValidateOnlyWithoutApplying() {
        ShareGroupConfigs configs = new ShareGroupConfigs(BROKER, store);

        ApiError result = configs.alter("g", Map.of(ShareGroupConfigs.DELIVERY_COUNT_LIMIT, "2"), List.of(), true);

        assertThat(result.error()).isEqualTo(Errors.NONE);
        assertThat(configs.effective("g")).isEqualTo(BROKER);
    }

    @Test
    void shouldArchiveAtTheGroupLimitInPartitionsCreatedBeforeAndAfterTheChange() {
        ShareGroupConfigs configs = new ShareGroupConfigs(BROKER, store);
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

        configs.alter("g", Map.of(ShareGroupConfigs.DELIVERY_COUNT_LIMIT, "2"), List.of(), false);
        SharePartition created = manager.getOrCreate("g2", Uuid.randomUuid(), tp).orElseThrow();
        configs.alter("g2", Map.of(ShareGroupConfigs.DELIVERY_COUNT_LIMIT, "1"), List.of(), false);

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

    private static void assertRefused(ShareGroupConfigs configs, Map<String, String> set, String message) {
        ApiError result = configs.alter("g", set, List.of(), false);
        assertThat(result.error()).isEqualTo(Errors.INVALID_CONFIG);
        assertThat(result.message()).contains("Group g: ").contains(message);
    }

    @Test
    void shouldCreateASharePartitionWithTheSettingsSavedThroughAnotherBroker() {
        ShareGroupConfigs configs = new ShareGroupConfigs(BROKER, store); // nothing saved when the broker started
        // another broker altered the group since: its settings are at the group's share-state coordinator only
        saved.put("g", Map.of(ShareGroupConfigs.ISOLATION_LEVEL, "read_committed"));
        TopicPartition tp = new TopicPartition("queue", 0);
        SharePartitionManager manager = new SharePartitionManager(BROKER, new SingleLogTopics(tp,
                new InMemoryShareLog()), timer, clock, new SharePartitionListener() {
                    @Override
                    public void onRecordsAvailable(SharePartitionKey key) {
                    }

                    @Override
                    public void onArchived(DeadLetter deadLetter) {
                    }
                }, store);
        manager.setGroupConfigs(configs);
        assertThat(configs.readCommitted("g")).isFalse();

        manager.getOrCreate("g", Uuid.randomUuid(), tp).orElseThrow();

        assertThat(configs.readCommitted("g")).as("the new share-partition reads committed records only").isTrue();
    }
}
