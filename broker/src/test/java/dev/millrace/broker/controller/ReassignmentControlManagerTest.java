package dev.millrace.broker.controller;

import static dev.millrace.broker.controller.ImageFixtures.partition;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.broker.controller.Controller.AlterPartitionResult;
import dev.millrace.broker.controller.Controller.IsrChange;
import dev.millrace.broker.controller.Controller.OngoingReassignment;
import dev.millrace.broker.controller.MetadataImage.PartitionImage;

class ReassignmentControlManagerTest {

    private static final Uuid TOPIC = new Uuid(1, 1);
    private static final TopicPartition T0 = new TopicPartition("t", 0);

    private final ReassignmentControlManager manager = new ReassignmentControlManager();
    private final ReplicationControlManager replication = new ReplicationControlManager(false);
    private MetadataImage image = ImageFixtures.withTopic(ImageFixtures.withUnfencedBrokers(1, 2, 3, 4, 5), "t", TOPIC,
            List.of(partition(0, List.of(1, 2, 3), List.of(1, 2, 3), 1)));

    private ApiError reassign(TopicPartition tp, Optional<List<Integer>> target) {
        ClusterDelta delta = new ClusterDelta(image);
        ApiError error = manager.alterReassignments(delta, Map.of(tp, target)).get(tp);
        image = ImageFixtures.replay(image, delta.records());
        return error;
    }

    private AlterPartitionResult isr(int leader, List<Integer> newIsr) {
        PartitionImage p = p0();
        ClusterDelta delta = new ClusterDelta(image);
        AlterPartitionResult result = replication.alterPartition(delta, leader, List.of(new IsrChange(TOPIC, 0,
                p.leaderEpoch(), newIsr, p.partitionEpoch()))).values().iterator().next();
        image = ImageFixtures.replay(image, delta.records());
        return result;
    }

    private PartitionImage p0() {
        return ImageFixtures.partitions(image, "t").get(0);
    }

    @Test
    @Timeout(10)
    void shouldAddTargetReplicasFirstAndDropTheOldOnesOnceEveryTargetIsInTheIsr() {
        assertThat(reassign(T0, Optional.of(List.of(1, 4, 5)))).isEqualTo(ApiError.NONE);

        assertThat(p0()).isEqualTo(new PartitionImage(0, List.of(1, 4, 5, 2, 3), List.of(1, 2, 3), 1, 0, 1,
                List.of(4, 5), List.of(2, 3)));
        assertThat(ReassignmentControlManager.ongoing(image)).containsExactly(Map.entry(T0,
                new OngoingReassignment(List.of(1, 4, 5, 2, 3), List.of(4, 5), List.of(2, 3))));

        assertThat(isr(1, List.of(1, 2, 3, 4)).error()).isEqualTo(Errors.NONE);
        assertThat(p0().isReassigning()).as("5 has not caught up yet").isTrue();
        AlterPartitionResult done = isr(1, List.of(1, 2, 3, 4, 5));

        PartitionImage completed = new PartitionImage(0, List.of(1, 4, 5), List.of(1, 4, 5), 1, 0, 4);
        assertThat(done).isEqualTo(new AlterPartitionResult(Errors.NONE, completed));
        assertThat(p0()).isEqualTo(completed);
        assertThat(ReassignmentControlManager.ongoing(image)).isEmpty();
    }

    @Test
    @Timeout(10)
    void shouldMoveLeadershipToATargetReplicaWhenTheLeaderIsRemoved() {
        reassign(T0, Optional.of(List.of(2, 4)));
        isr(1, List.of(1, 2, 3, 4));

        assertThat(p0()).isEqualTo(new PartitionImage(0, List.of(2, 4), List.of(2, 4), 2, 1, 3));
    }

    @Test
    @Timeout(10)
    void shouldCompleteAtOnceWhenOnlyRemovingReplicas() {
        reassign(T0, Optional.of(List.of(2, 1)));

        assertThat(p0()).isEqualTo(new PartitionImage(0, List.of(2, 1), List.of(1, 2), 1, 0, 2));
    }

    @Test
    @Timeout(10)
    void shouldCancelBackToTheOriginalReplicas() {
        reassign(T0, Optional.of(List.of(4, 5)));
        isr(1, List.of(1, 2, 3, 4));

        assertThat(reassign(T0, Optional.empty())).isEqualTo(ApiError.NONE);

        assertThat(p0()).isEqualTo(new PartitionImage(0, List.of(1, 2, 3), List.of(1, 2, 3), 1, 0, 3));
    }

    @Test
    @Timeout(10)
    void shouldRefuseUnknownPartitionsUnregisteredBrokersRepeatsAndCancellingNothing() {
        ApiError unknownPartition = reassign(new TopicPartition("t", 5), Optional.of(List.of(1)));
        ApiError unknownBroker = reassign(T0, Optional.of(List.of(1, 9)));
        ApiError repeated = reassign(T0, Optional.of(List.of(1, 1)));
        ApiError nothing = reassign(T0, Optional.empty());

        assertThat(unknownPartition.error()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(unknownBroker).isEqualTo(new ApiError(Errors.INVALID_REPLICA_ASSIGNMENT,
                "Broker 9 in the target replicas [1, 9] of t-0 is not registered"));
        assertThat(repeated.error()).isEqualTo(Errors.INVALID_REPLICA_ASSIGNMENT);
        assertThat(nothing.error()).isEqualTo(Errors.NO_REASSIGNMENT_IN_PROGRESS);
        assertThat(p0()).isEqualTo(partition(0, List.of(1, 2, 3), List.of(1, 2, 3), 1));
    }
}
