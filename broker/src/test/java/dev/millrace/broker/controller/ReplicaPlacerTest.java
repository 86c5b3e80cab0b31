package dev.millrace.broker.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.broker.controller.Controller.NewTopic;
import dev.millrace.broker.controller.Controller.TopicConfigChange;
import dev.millrace.broker.controller.MetadataRecord.BrokerRegistrationRecord;
import dev.millrace.broker.controller.MetadataRecord.ClusterIdRecord;

class ReplicaPlacerTest {

    private final AtomicLong nextId = new AtomicLong(1);
    private final TopicControlManager topics = new TopicControlManager(new ConfigControlManager(), 1, (short) 1,
            () -> new Uuid(0, nextId.getAndIncrement()));

    /** Racks a: 1 2, b: 3 4, c: 5 6 (so id order alone would put replicas on one rack), plus fenced broker 7. */
    private static MetadataImage sixBrokersOnThreeRacks() {
        List<MetadataRecord> records = new ArrayList<>();
        records.add(new ClusterIdRecord(ImageFixtures.CLUSTER_ID));
        String[] racks = {"a", "b", "c"};
        for (int id = 1; id <= 6; id++) {
            records.addAll(ImageFixtures.unfencedBroker(id, racks[(id - 1) / 2]));
        }
        records.add(new BrokerRegistrationRecord(7, new Uuid(0, 7), 107, "127.0.0.1", 9007, "a"));
        return ImageFixtures.replay(MetadataImage.EMPTY, records);
    }

    @Test
    @Timeout(10)
    void shouldSpreadEveryPartitionOverRacksAndLeadersEvenlyOverUnfencedBrokers() {
        MetadataImage image = sixBrokersOnThreeRacks();
        Map<Integer, String> rackOf = new HashMap<>();
        image.brokers().values().forEach(b -> rackOf.put(b.id(), b.rack()));

        List<List<Integer>> placed = ReplicaPlacer.of(image).place(0, 12, 3);

        Map<Integer, Integer> leaders = new HashMap<>();
        for (List<Integer> replicas : placed) {
            assertThat(replicas.stream().map(rackOf::get).distinct()).as("racks of " + replicas).hasSize(3);
            assertThat(replicas).doesNotContain(7);
            leaders.merge(replicas.get(0), 1, Integer::sum);
        }
        assertThat(leaders).containsOnlyKeys(1, 2, 3, 4, 5, 6);
        assertThat(leaders.values()).containsOnly(2);
    }

    @Test
    @Timeout(10)
    void shouldPlaceByIdWithoutRacksAndContinueTheRotation() {
        ReplicaPlacer placer = ReplicaPlacer.of(ImageFixtures.withUnfencedBrokers(3, 1, 2));

        assertThat(placer.order()).containsExactly(1, 2, 3);
        assertThat(placer.place(2, 2, 2)).containsExactly(List.of(3, 1), List.of(1, 2));
        assertThatThrownBy(() -> placer.place(0, 1, 4))
                .isInstanceOf(InvalidReplicationFactorException.class)
                .hasMessageContaining("Replication factor 4").hasMessageContaining("3 available");
    }

    @Test
    @Timeout(10)
    void shouldRefuseTopicsWithMoreReplicasThanBrokersOrNoBrokerAtAll() {
        ApiError tooMany = topics.handleCreateTopics(ImageFixtures.withUnfencedBrokers(1, 2),
                List.of(new NewTopic("t", 1, (short) 3, Map.of()))).response().get("t");
        ApiError none = topics.handleCreateTopics(MetadataImage.EMPTY,
                List.of(new NewTopic("t", 1, (short) -1, Map.of()))).response().get("t");

        assertThat(tooMany).isEqualTo(new ApiError(Errors.INVALID_REPLICATION_FACTOR,
                "Replication factor 3 is larger than the 2 available (registered and unfenced) broker(s)"));
        assertThat(none.error()).isEqualTo(Errors.INVALID_REPLICATION_FACTOR);
        assertThat(none.message()).contains("Replication factor 1").contains("0 available");
    }

    @Test
    @Timeout(10)
    void shouldRefuseMinInsyncReplicasAboveTheReplicationFactorWhenCreatingOrAltering() {
        MetadataImage image = ImageFixtures.withUnfencedBrokers(1, 2, 3);

        ControllerResult<Map<String, ApiError>> created = topics.handleCreateTopics(image, List.of(
                new NewTopic("bad", 1, (short) 2, Map.of("min.insync.replicas", "3")),
                new NewTopic("good", 1, (short) 2, Map.of("min.insync.replicas", "2"))));
        MetadataImage withGood = ImageFixtures.replay(image, created.records());
        ApiError altered = new ConfigControlManager().handleAlterConfigs(withGood, Map.of("good",
                new TopicConfigChange(Map.of("min.insync.replicas", "3"), List.of(), false))).response().get("good");

        assertThat(created.response().get("bad")).isEqualTo(new ApiError(Errors.INVALID_CONFIG,
                "Topic bad: min.insync.replicas 3 is larger than the replication factor 2"));
        assertThat(created.response().get("good")).isEqualTo(ApiError.NONE);
        assertThat(altered).isEqualTo(new ApiError(Errors.INVALID_CONFIG,
                "Topic good: min.insync.replicas 3 is larger than the replication factor 2"));
    }
}
