package dev.millrace.broker.controller;

import static dev.millrace.broker.controller.ImageFixtures.partition;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.broker.controller.Controller.AlterPartitionResult;
import dev.millrace.broker.controller.Controller.IsrChange;
import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.controller.MetadataRecord.BrokerRegistrationRecord;

class ReplicationControlManagerTest {

    private static final Uuid TOPIC = new Uuid(1, 1);

    private final ReplicationControlManager manager = new ReplicationControlManager(false);

    /** Brokers 1-3 unfenced, broker 4 registered but fenced; t-0 replicas [1,2,3,4] ISR [1,2] leader 1 epochs 3/5. */
    private final MetadataImage image = ImageFixtures.withTopic(
            ImageFixtures.replay(ImageFixtures.withUnfencedBrokers(1, 2, 3),
                    List.of(new BrokerRegistrationRecord(4, new Uuid(0, 4), 104, "127.0.0.1", 9004, null))),
            "t", TOPIC, List.of(new PartitionImage(0, List.of(1, 2, 3, 4), List.of(1, 2), 1, 3, 5),
                    partition(1, List.of(2, 1), List.of(2, 1), 1),
                    partition(2, List.of(3, 1), List.of(1), 1),
                    partition(3, List.of(1, 2), List.of(1, 2), 1)));

    private AlterPartitionResult alter(int brokerId, IsrChange change) {
        Map<TopicIdPartition, AlterPartitionResult> result = manager.alterPartition(new ClusterDelta(image), brokerId,
                List.of(change));
        assertThat(result).hasSize(1);
        return result.values().iterator().next();
    }

    @Test
    @Timeout(10)
    void shouldCommitAnIsrChangeWithTheNextPartitionEpochAndTheSameLeaderEpoch() {
        ClusterDelta delta = new ClusterDelta(image);

        Map<TopicIdPartition, AlterPartitionResult> result = manager.alterPartition(delta, 1,
                List.of(new IsrChange(TOPIC, 0, 3, List.of(1, 2, 3), 5)));

        PartitionImage expected = new PartitionImage(0, List.of(1, 2, 3, 4), List.of(1, 2, 3), 1, 3, 6);
        assertThat(result).containsExactly(Map.entry(new TopicIdPartition(TOPIC, 0, "t"),
                new AlterPartitionResult(Errors.NONE, expected)));
        assertThat(ImageFixtures.partitions(ImageFixtures.replay(image, delta.records()), "t").get(0))
                .isEqualTo(expected);
    }

    @Test
    @Timeout(10)
    void shouldRefuseIsrChangesThatBreakARule() {
        PartitionImage current = image.topic("t").orElseThrow().partitions().get(0);

        assertThat(alter(1, new IsrChange(new Uuid(9, 9), 0, 3, List.of(1), 5)))
                .isEqualTo(new AlterPartitionResult(Errors.UNKNOWN_TOPIC_OR_PARTITION, null));
        assertThat(alter(1, new IsrChange(TOPIC, 7, 3, List.of(1), 5)).error())
                .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(alter(2, new IsrChange(TOPIC, 0, 3, List.of(2), 5)))
                .isEqualTo(new AlterPartitionResult(Errors.NOT_LEADER_OR_FOLLOWER, current));
        assertThat(alter(1, new IsrChange(TOPIC, 0, 2, List.of(1), 5)))
                .isEqualTo(new AlterPartitionResult(Errors.FENCED_LEADER_EPOCH, current));
        assertThat(alter(1, new IsrChange(TOPIC, 0, 3, List.of(1), 4)))
                .isEqualTo(new AlterPartitionResult(Errors.INVALID_UPDATE_VERSION, current));
        assertThat(alter(1, new IsrChange(TOPIC, 0, 3, List.of(2), 5)).error()).as("leader left out")
                .isEqualTo(Errors.INELIGIBLE_REPLICA);
        assertThat(alter(1, new IsrChange(TOPIC, 0, 3, List.of(1, 5), 5)).error()).as("not a replica")
                .isEqualTo(Errors.INELIGIBLE_REPLICA);
        assertThat(alter(1, new IsrChange(TOPIC, 0, 3, List.of(1, 4), 5)).error()).as("fenced broker added")
                .isEqualTo(Errors.INELIGIBLE_REPLICA);
        assertThat(alter(1, new IsrChange(TOPIC, 0, 3, List.of(1), 5)).error()).as("shrinking is fine")
                .isEqualTo(Errors.NONE);
    }

    @Test
    @Timeout(10)
    void shouldMovePreferredLeadershipBackOnlyWhereThePreferredReplicaCanLead() {
        ClusterDelta delta = new ClusterDelta(image);

        Map<TopicPartition, ApiError> result = manager.electLeaders(delta, true, null);

        assertThat(result.get(new TopicPartition("t", 0)).error()).isEqualTo(Errors.ELECTION_NOT_NEEDED);
        assertThat(result.get(new TopicPartition("t", 1))).isEqualTo(ApiError.NONE);
        assertThat(result.get(new TopicPartition("t", 2)).error()).isEqualTo(Errors.PREFERRED_LEADER_NOT_AVAILABLE);
        assertThat(result.get(new TopicPartition("t", 2)).message()).contains("not in the ISR");
        assertThat(result.get(new TopicPartition("t", 3)).error()).isEqualTo(Errors.ELECTION_NOT_NEEDED);
        MetadataImage after = ImageFixtures.replay(image, delta.records());
        assertThat(ImageFixtures.partitions(after, "t").get(1))
                .isEqualTo(new PartitionImage(1, List.of(2, 1), List.of(2, 1), 2, 1, 1));
        assertThat(delta.records()).hasSize(1);
    }

    @Test
    @Timeout(10)
    void shouldReportUnknownPartitionsAndElectUncleanlyOnlyLeaderlessOnes() {
        MetadataImage leaderless = ImageFixtures.withTopic(image, "u", new Uuid(1, 2),
                List.of(partition(0, List.of(4, 3), List.of(4), -1)));
        ClusterDelta delta = new ClusterDelta(leaderless);

        Map<TopicPartition, ApiError> result = manager.electLeaders(delta, false,
                Set.of(new TopicPartition("u", 0), new TopicPartition("t", 0), new TopicPartition("nope", 0)));

        assertThat(result.get(new TopicPartition("u", 0))).isEqualTo(ApiError.NONE);
        assertThat(result.get(new TopicPartition("t", 0)).error()).isEqualTo(Errors.ELECTION_NOT_NEEDED);
        assertThat(result.get(new TopicPartition("nope", 0)).error()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(ImageFixtures.partitions(ImageFixtures.replay(leaderless, delta.records()), "u").get(0))
                .isEqualTo(new PartitionImage(0, List.of(4, 3), List.of(3), 3, 1, 1));
    }
}
