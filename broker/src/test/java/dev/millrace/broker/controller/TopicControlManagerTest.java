package dev.millrace.broker.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.broker.controller.Controller.NewTopic;
import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.controller.MetadataRecord.PartitionRecord;
import dev.millrace.broker.controller.MetadataRecord.TopicRecord;

class TopicControlManagerTest {

    private final AtomicLong nextId = new AtomicLong(1);
    private final TopicControlManager threeBrokers = manager(List.of(1, 2, 3), 2, (short) 2);
    private final TopicControlManager oneBroker = manager(List.of(1), 1, (short) 1);

    private static final MetadataImage THREE_BROKERS = ImageFixtures.withUnfencedBrokers(1, 2, 3);
    private static final MetadataImage ONE_BROKER = ImageFixtures.withUnfencedBrokers(1);

    private TopicControlManager manager(List<Integer> brokers, int partitions, short replicationFactor) {
        return new TopicControlManager(new ConfigControlManager(), partitions, replicationFactor,
                () -> new Uuid(0, nextId.getAndIncrement()));
    }

    static MetadataImage replay(MetadataImage image, ControllerResult<?> result) {
        MetadataImageBuilder builder = new MetadataImageBuilder(image);
        result.records().forEach(builder::replay);
        return builder.build(image.appliedIndex() + 1);
    }

    private static NewTopic topic(String name, int partitions, int replicationFactor) {
        return new NewTopic(name, partitions, (short) replicationFactor, Map.of());
    }

    private static ApiError create(TopicControlManager manager, MetadataImage image, NewTopic topic) {
        return manager.handleCreateTopics(image, List.of(topic)).response().get(topic.name());
    }

    @Test
    @Timeout(10)
    void shouldPlaceReplicasRoundRobinWithFirstReplicaLeadingWhenCreating() {
        ControllerResult<Map<String, ApiError>> result = threeBrokers.handleCreateTopics(THREE_BROKERS,
                List.of(new NewTopic("t", 4, (short) 2, Map.of("retention.ms", "1000"))));

        assertThat(result.response()).containsExactly(Map.entry("t", ApiError.NONE));
        assertThat(result.records()).first().isEqualTo(new TopicRecord("t", new Uuid(0, 1)));
        MetadataImage image = replay(ONE_BROKER, result);
        Map<Integer, PartitionImage> partitions = image.topic("t").orElseThrow().partitions();
        assertThat(partitions.values()).extracting(PartitionImage::replicas)
                .containsExactly(List.of(1, 2), List.of(2, 3), List.of(3, 1), List.of(1, 2));
        assertThat(partitions.values()).allSatisfy(p -> {
            assertThat(p.leader()).isEqualTo(p.replicas().get(0));
            assertThat(p.isr()).isEqualTo(p.replicas());
            assertThat(p.leaderEpoch()).isZero();
            assertThat(p.partitionEpoch()).isZero();
        });
        assertThat(image.topic("t").orElseThrow().configs()).containsExactly(Map.entry("retention.ms", "1000"));
    }

    @Test
    @Timeout(10)
    void shouldUseBrokerDefaultsWhenPartitionsOrReplicationFactorAreMinusOne() {
        MetadataImage image = replay(THREE_BROKERS,
                threeBrokers.handleCreateTopics(THREE_BROKERS, List.of(topic("t", -1, -1))));

        assertThat(image.topic("t").orElseThrow().partitions().values())
                .extracting(PartitionImage::replicas).containsExactly(List.of(1, 2), List.of(2, 3));
    }

    private static NewTopic assigned(String name, Map<Integer, List<Integer>> assignments, String minInsync) {
        return new NewTopic(name, -1, (short) -1, minInsync == null ? Map.of()
                : Map.of("min.insync.replicas", minInsync), assignments);
    }

    @Test
    @Timeout(10)
    void shouldPlaceReplicasAsAssignedWithTheFirstLeadingAndTheirCountAsReplicationFactor() {
        ControllerResult<Map<String, ApiError>> result = threeBrokers.handleCreateTopics(THREE_BROKERS, List.of(
                assigned("t", Map.of(0, List.of(3, 1, 2), 1, List.of(2, 3, 1)), "3")));

        assertThat(result.response()).containsExactly(Map.entry("t", ApiError.NONE));
        Map<Integer, PartitionImage> partitions = replay(THREE_BROKERS, result).topic("t").orElseThrow().partitions();
        assertThat(partitions.values()).extracting(PartitionImage::replicas)
                .containsExactly(List.of(3, 1, 2), List.of(2, 3, 1));
        assertThat(partitions.values()).extracting(PartitionImage::leader).containsExactly(3, 2);
        assertThat(partitions.values()).allSatisfy(p -> assertThat(p.isr()).isEqualTo(p.replicas()));
    }

    @Test
    @Timeout(10)
    void shouldLeaveFencedAssignedBrokersOutOfTheIsrAndLeadership() {
        MetadataImage oneFenced = ImageFixtures.replay(THREE_BROKERS,
                List.of(new MetadataRecord.BrokerStateRecord(1, 101, BrokerState.FENCED)));
        MetadataImage image = replay(oneFenced, threeBrokers.handleCreateTopics(oneFenced,
                List.of(assigned("t", Map.of(0, List.of(1, 2, 3)), null))));

        PartitionImage partition = image.topic("t").orElseThrow().partitions().get(0);
        assertThat(partition.replicas()).containsExactly(1, 2, 3);
        assertThat(partition.isr()).containsExactly(2, 3);
        assertThat(partition.leader()).isEqualTo(2);
        ApiError allFenced = create(threeBrokers, oneFenced, assigned("u", Map.of(0, List.of(1)), null));
        assertThat(allFenced.error()).isEqualTo(Errors.INVALID_REPLICATION_FACTOR);
        assertThat(allFenced.message()).contains("[1]", "partition 0", "fenced");
    }

    @Test
    @Timeout(10)
    void shouldRejectInvalidAssignmentsNamingWhatIsWrong() {
        ApiError both = create(threeBrokers, THREE_BROKERS, new NewTopic("t", 2, (short) -1, Map.of(),
                Map.of(0, List.of(1))));
        assertThat(both.error()).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(both.message()).contains("not both", "2 partitions");

        ApiError unknown = create(threeBrokers, THREE_BROKERS, assigned("t", Map.of(0, List.of(1, 7)), null));
        assertThat(unknown.error()).isEqualTo(Errors.INVALID_REPLICA_ASSIGNMENT);
        assertThat(unknown.message()).contains("broker 7", "partition 0", "not registered");

        ApiError repeated = create(threeBrokers, THREE_BROKERS, assigned("t", Map.of(0, List.of(2, 2)), null));
        assertThat(repeated.error()).isEqualTo(Errors.INVALID_REPLICA_ASSIGNMENT);
        assertThat(repeated.message()).contains("[2, 2]", "distinct");

        ApiError gap = create(threeBrokers, THREE_BROKERS, assigned("t", Map.of(0, List.of(1), 2, List.of(2)), null));
        assertThat(gap.error()).isEqualTo(Errors.INVALID_REPLICA_ASSIGNMENT);
        assertThat(gap.message()).contains("numbered 0 to 1", "[0, 2]");

        ApiError uneven = create(threeBrokers, THREE_BROKERS,
                assigned("t", Map.of(0, List.of(1, 2), 1, List.of(3)), null));
        assertThat(uneven.error()).isEqualTo(Errors.INVALID_REPLICA_ASSIGNMENT);
        assertThat(uneven.message()).contains("same number of replicas", "partition 1 has 1");

        ApiError minInsync = create(threeBrokers, THREE_BROKERS, assigned("t", Map.of(0, List.of(1, 2)), "3"));
        assertThat(minInsync.error()).isEqualTo(Errors.INVALID_CONFIG);
        assertThat(minInsync.message()).contains("min.insync.replicas 3", "replication factor 2");
        assertThat(threeBrokers.handleCreateTopics(THREE_BROKERS, List.of(assigned("t", Map.of(0, List.of(1, 7)),
                null))).records()).as("nothing created").isEmpty();
    }

    @Test
    @Timeout(10)
    void shouldRejectInvalidTopicNames() {
        for (String name : List.of("", ".", "..", "a/b", "spaces are bad", "x".repeat(250))) {
            ApiError error = create(oneBroker, ONE_BROKER, topic(name, 1, 1));
            assertThat(error.error()).as("name '%s'", name).isEqualTo(Errors.INVALID_TOPIC_EXCEPTION);
            assertThat(error.message()).as("name '%s'", name).isNotBlank();
        }
    }

    @Test
    @Timeout(10)
    void shouldRejectExistingAndCollidingTopics() {
        MetadataImage image = replay(ONE_BROKER,
                oneBroker.handleCreateTopics(ONE_BROKER, List.of(topic("a.b", 1, 1))));

        ApiError exists = create(oneBroker, image, topic("a.b", 1, 1));
        ApiError collides = create(oneBroker, image, topic("a_b", 1, 1));

        assertThat(exists).isEqualTo(new ApiError(Errors.TOPIC_ALREADY_EXISTS, "Topic 'a.b' already exists"));
        assertThat(collides.error()).isEqualTo(Errors.INVALID_TOPIC_EXCEPTION);
        assertThat(collides.message()).contains("'a_b' collides with existing topic 'a.b'");
    }

    @Test
    @Timeout(10)
    void shouldRejectRepeatedNamesButCreateTheRestWhenOneRequestHasSeveral() {
        ControllerResult<Map<String, ApiError>> result = oneBroker.handleCreateTopics(ONE_BROKER,
                List.of(topic("dup", 1, 1), topic("ok", 1, 1), topic("dup", 1, 1), topic("x.y", 1, 1),
                        topic("x_y", 1, 1)));

        assertThat(result.response().get("dup").error()).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(result.response().get("ok")).isEqualTo(ApiError.NONE);
        assertThat(result.response().get("x.y")).isEqualTo(ApiError.NONE);
        assertThat(result.response().get("x_y").error()).isEqualTo(Errors.INVALID_TOPIC_EXCEPTION);
        assertThat(replay(ONE_BROKER, result).topics()).containsOnlyKeys("ok", "x.y");
    }

    @Test
    @Timeout(10)
    void shouldRejectInvalidPartitionCounts() {
        for (int partitions : new int[] {0, -2, TopicControlManager.MAX_NEW_PARTITIONS_PER_TOPIC + 1}) {
            ApiError error = create(oneBroker, ONE_BROKER, topic("t", partitions, 1));
            assertThat(error.error()).as("%d partitions", partitions).isEqualTo(Errors.INVALID_PARTITIONS);
            assertThat(error.message()).contains(String.valueOf(partitions));
        }
    }

    @Test
    @Timeout(10)
    void shouldRejectInvalidReplicationFactors() {
        ApiError tooLarge = create(oneBroker, ONE_BROKER, topic("t", 1, 3));
        ApiError zero = create(oneBroker, ONE_BROKER, topic("t", 1, 0));
        ApiError negative = create(oneBroker, ONE_BROKER, topic("t", 1, -2));

        assertThat(tooLarge).isEqualTo(new ApiError(Errors.INVALID_REPLICATION_FACTOR,
                "Replication factor 3 is larger than the 1 available (registered and unfenced) broker(s)"));
        assertThat(zero.error()).isEqualTo(Errors.INVALID_REPLICATION_FACTOR);
        assertThat(zero.message()).contains("got 0");
        assertThat(negative.error()).isEqualTo(Errors.INVALID_REPLICATION_FACTOR);
    }

    @Test
    @Timeout(10)
    void shouldRejectUnknownInvalidAndNullConfigsNamingTheSetting() {
        ApiError unknown = create(oneBroker, ONE_BROKER,
                new NewTopic("t", 1, (short) 1, Map.of("no.such.setting", "1")));
        ApiError invalid = create(oneBroker, ONE_BROKER,
                new NewTopic("t", 1, (short) 1, Map.of("retention.ms", "soon")));
        Map<String, String> nullValue = new HashMap<>();
        nullValue.put("retention.ms", null);
        ApiError missing = create(oneBroker, ONE_BROKER, new NewTopic("t", 1, (short) 1, nullValue));

        assertThat(unknown.error()).isEqualTo(Errors.INVALID_CONFIG);
        assertThat(unknown.message()).contains("no.such.setting");
        assertThat(invalid.error()).isEqualTo(Errors.INVALID_CONFIG);
        assertThat(invalid.message()).contains("retention.ms").contains("soon");
        assertThat(missing.error()).isEqualTo(Errors.INVALID_CONFIG);
        assertThat(missing.message()).contains("retention.ms");
    }

    @Test
    @Timeout(10)
    void shouldDeleteKnownTopicsAndReportUnknownOnes() {
        MetadataImage image = replay(ONE_BROKER,
                oneBroker.handleCreateTopics(ONE_BROKER, List.of(topic("a", 1, 1))));

        ControllerResult<Map<String, ApiError>> result = oneBroker.handleDeleteTopics(image, List.of("a", "b", "a"));

        assertThat(result.response()).containsExactly(Map.entry("a", ApiError.NONE),
                Map.entry("b", new ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, "Topic 'b' does not exist")));
        assertThat(result.records()).hasSize(1);
        assertThat(replay(image, result).topics()).isEmpty();
        assertThat(image.topics()).as("the given image is never changed").containsOnlyKeys("a");
    }

    @Test
    @Timeout(10)
    void shouldGrowPartitionsContinuingTheRotationAndRejectShrinking() {
        MetadataImage image = replay(THREE_BROKERS,
                threeBrokers.handleCreateTopics(THREE_BROKERS, List.of(topic("t", 3, 2))));

        ControllerResult<Map<String, ApiError>> shrink = threeBrokers.handleCreatePartitions(image,
                Map.of("t", 2));
        ControllerResult<Map<String, ApiError>> keep = threeBrokers.handleCreatePartitions(image, Map.of("t", 3));
        ControllerResult<Map<String, ApiError>> unknown = threeBrokers.handleCreatePartitions(image,
                Map.of("nope", 5));
        ControllerResult<Map<String, ApiError>> grow = threeBrokers.handleCreatePartitions(image, Map.of("t", 5));

        assertThat(shrink.response().get("t")).isEqualTo(new ApiError(Errors.INVALID_PARTITIONS,
                "Topic t has 3 partitions, cannot reduce or keep the count: asked for 2"));
        assertThat(keep.response().get("t").error()).isEqualTo(Errors.INVALID_PARTITIONS);
        assertThat(shrink.records()).isEmpty();
        assertThat(unknown.response().get("nope").error()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(grow.response().get("t")).isEqualTo(ApiError.NONE);
        assertThat(grow.records()).extracting(r -> ((PartitionRecord) r).replicas())
                .containsExactly(List.of(1, 2), List.of(2, 3));
        assertThat(replay(image, grow).topic("t").orElseThrow().partitions()).containsOnlyKeys(0, 1, 2, 3, 4);
    }
}
