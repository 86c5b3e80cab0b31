package dev.millrace.broker.replica;

import static dev.millrace.broker.server.ReplicaTestCluster.await;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.message.ProduceResponseData.PartitionProduceResponse;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.server.Partition;
import dev.millrace.broker.server.ReplicaTestCluster;

/**
 * Three brokers on loopback replicate one partition: followers fetch over the network from the leader's real Fetch
 * handling, the leader keeps the ISR and high watermark, and the test plays the controller
 * ({@link ReplicaTestCluster}).
 */
@Timeout(60)
class ReplicationIntegrationTest {

    private static final short ACKS_ALL = -1;
    private static final short ACKS_ONE = 1;
    private static final long LAG_MS = 10_000;
    private static final List<Integer> ALL = List.of(1, 2, 3);

    @TempDir
    Path dir;

    private ReplicaTestCluster cluster;

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** Starts three brokers, stops {@code stopped} (before they could fetch), and makes broker 1 the leader. */
    private void start(Map<String, String> topicConfigs, List<Integer> isr, int... stopped) throws Exception {
        cluster = new ReplicaTestCluster(dir, 3, ReplicaConfig.defaults().withReplicaLagTimeMaxMs(LAG_MS)
                .withReplicaFetchWaitMaxMs(100).withReplicaFetchBackoffMs(20), topicConfigs);
        for (int node : stopped) {
            cluster.stop(node);
        }
        cluster.publish(new PartitionImage(0, ALL, isr, 1, 0, 0));
    }

    private static PartitionProduceResponse get(CompletableFuture<PartitionProduceResponse> f) throws Exception {
        return f.get(30, TimeUnit.SECONDS);
    }

    private long leaderEnd() {
        return cluster.partition(1).logEndOffset();
    }

    @Test
    void shouldReplicateToEveryFollower() throws Exception {
        start(Map.of(), ALL);
        for (int i = 0; i < 20; i++) {
            assertThat(get(cluster.produce(1, ACKS_ONE, 10_000, "a" + i, "b" + i)).errorCode())
                    .isEqualTo(Errors.NONE.code());
        }

        await(() -> cluster.partition(2).logEndOffset() == 40 && cluster.partition(3).logEndOffset() == 40);
        assertThat(cluster.logValues(2)).isEqualTo(cluster.logValues(1));
        assertThat(cluster.logValues(3)).isEqualTo(cluster.logValues(1)).hasSize(40);
        await(() -> cluster.partition(1).highWatermark() == 40);
        await(() -> cluster.partition(2).highWatermark() == 40 && cluster.partition(3).highWatermark() == 40);
        assertThat(cluster.partition(2).isFollower()).isTrue();
        assertThat(cluster.partition(1).isLeader()).isTrue();
    }

    @Test
    void shouldKeepTheHighWatermarkAtTheIsrMinimumAndConsumersBelowIt() throws Exception {
        start(Map.of(), ALL);
        get(cluster.produce(1, ACKS_ONE, 10_000, "r0", "r1"));
        await(() -> cluster.partition(1).highWatermark() == 2);
        cluster.stop(3);

        get(cluster.produce(1, ACKS_ONE, 10_000, "r2", "r3", "r4"));
        await(() -> cluster.partition(2).logEndOffset() == 5);
        // broker 3 is in the ISR and does not have r2..r4: they are not committed
        assertThat(cluster.partition(1).highWatermark()).isEqualTo(2);
        FetchResponseData.PartitionData fetched = cluster.consumerFetch(1, 0, -1);
        assertThat(fetched.highWatermark()).isEqualTo(2);
        assertThat(ReplicaTestCluster.values(fetched)).containsExactly("r0", "r1");
        assertThat(cluster.consumerRead(1, 2)).isEmpty();
        assertThat(cluster.listLatest(1).offset()).isEqualTo(2);
    }

    @Test
    void shouldCompleteAcksAllOnlyWhenTheWholeIsrHasTheRecord() throws Exception {
        start(Map.of(), ALL);
        cluster.stop(3);

        CompletableFuture<PartitionProduceResponse> produced = cluster.produce(1, ACKS_ALL, 30_000, "all");
        await(() -> cluster.partition(2).logEndOffset() == 1);
        assertThat(produced).isNotDone();
        assertThat(cluster.consumerRead(1, 0)).isEmpty();

        cluster.restart(3);
        PartitionProduceResponse response = get(produced);
        assertThat(response.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(response.baseOffset()).isZero();
        assertThat(cluster.partition(3).logEndOffset()).isEqualTo(1);
        assertThat(cluster.consumerRead(1, 0)).containsExactly("all");
    }

    @Test
    void shouldAnswerRequestTimedOutWhenTheIsrDoesNotReplicateInTime() throws Exception {
        start(Map.of(), ALL);
        cluster.stop(3);

        PartitionProduceResponse response = get(cluster.produce(1, ACKS_ALL, 200, "slow"));

        assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.REQUEST_TIMED_OUT);
    }

    @Test
    void shouldRefuseAcksAllBelowMinInsyncReplicasAndAcceptOnceTheIsrGrows() throws Exception {
        start(Map.of("min.insync.replicas", "2"), List.of(1), 2, 3);

        PartitionProduceResponse refused = get(cluster.produce(1, ACKS_ALL, 10_000, "refused"));
        assertThat(Errors.forCode(refused.errorCode())).isEqualTo(Errors.NOT_ENOUGH_REPLICAS);
        assertThat(refused.errorMessage()).contains("min.insync.replicas 2");
        assertThat(leaderEnd()).isZero();
        // acks=1 does not need the ISR
        assertThat(get(cluster.produce(1, ACKS_ONE, 10_000, "one")).errorCode()).isEqualTo(Errors.NONE.code());

        cluster.restart(2);
        await(() -> cluster.state().isr().contains(2));
        assertThat(cluster.partition(1).isrSize()).isEqualTo(2);

        PartitionProduceResponse accepted = get(cluster.produce(1, ACKS_ALL, 10_000, "accepted"));
        assertThat(Errors.forCode(accepted.errorCode())).isEqualTo(Errors.NONE);
        assertThat(cluster.partition(2).logEndOffset()).isGreaterThanOrEqualTo(2);
    }

    @Test
    void shouldAnswerNotEnoughReplicasAfterAppendWhenTheIsrShrinksBelowMinInsyncWhileWaiting() throws Exception {
        start(Map.of("min.insync.replicas", "2"), ALL, 2, 3);
        CompletableFuture<PartitionProduceResponse> produced = cluster.produce(1, ACKS_ALL, 30_000, "waiting");
        await(() -> leaderEnd() == 1);
        assertThat(produced).isNotDone();

        cluster.time().advance(LAG_MS + 1);
        cluster.partitionManager(1).maybeShrinkIsr();

        assertThat(cluster.state().isr()).containsExactly(1);
        PartitionProduceResponse response = get(produced);
        assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND);
        assertThat(response.errorMessage()).contains("below min.insync.replicas 2");
    }

    @Test
    void shouldAnswerNotLeaderOrFollowerToAWaitingProduceWhenTheLeadershipMoves() throws Exception {
        start(Map.of(), ALL, 3);
        CompletableFuture<PartitionProduceResponse> produced = cluster.produce(1, ACKS_ALL, 30_000, "waiting");
        await(() -> cluster.partition(2).logEndOffset() == 1);
        assertThat(produced).isNotDone();

        cluster.publish(new PartitionImage(0, ALL, List.of(1, 2), 2, 1, 1));

        assertThat(Errors.forCode(get(produced).errorCode())).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
    }

    @Test
    void shouldShrinkAStoppedFollowerOutAfterTheLagTimeAndAddItBackOnceCaughtUp() throws Exception {
        start(Map.of(), ALL);
        get(cluster.produce(1, ACKS_ALL, 10_000, "before"));
        cluster.stop(3);
        get(cluster.produce(1, ACKS_ONE, 10_000, "while-away"));
        await(() -> cluster.partition(2).logEndOffset() == 2);

        // within the lag time nothing changes
        cluster.time().advance(LAG_MS);
        awaitCaughtUp(2);
        cluster.partitionManager(1).maybeShrinkIsr();
        assertThat(cluster.state().isr()).isEqualTo(ALL);
        assertThat(cluster.partition(1).highWatermark()).isEqualTo(1);

        cluster.time().advance(1);
        awaitCaughtUp(2);
        cluster.partitionManager(1).maybeShrinkIsr();
        assertThat(cluster.state().isr()).containsExactly(1, 2);
        assertThat(cluster.partition(1).isrSize()).isEqualTo(2);
        // the committed shrink lets the high watermark move past what broker 3 lacks
        assertThat(cluster.partition(1).highWatermark()).isEqualTo(2);
        assertThat(cluster.consumerRead(1, 0)).containsExactly("before", "while-away");

        cluster.restart(3);
        await(() -> cluster.state().isr().contains(3));
        assertThat(cluster.logValues(3)).containsExactly("before", "while-away");
        assertThat(cluster.partition(1).isrSize()).isEqualTo(3);
    }

    /** Waits until the leader has seen broker {@code follower} caught up at the manual clock's current time. */
    private void awaitCaughtUp(int follower) {
        long now = cluster.time().milliseconds();
        await(() -> cluster.partition(1).leaderState().orElseThrow().followerLastCaughtUpTimeMs(follower) >= now);
    }

    @Test
    void shouldAnswerNotLeaderOrFollowerOnAFollowerWithTheLeaderItKnows() throws Exception {
        start(Map.of(), ALL);

        ProduceResponseData produce = cluster.produceResponse(2, "to-follower");
        PartitionProduceResponse partition = produce.responses().iterator().next().partitionResponses().get(0);
        assertThat(Errors.forCode(partition.errorCode())).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
        assertThat(partition.currentLeader().leaderId()).isEqualTo(1);
        assertThat(partition.currentLeader().leaderEpoch()).isZero();
        assertThat(produce.nodeEndpoints()).singleElement().satisfies(node -> {
            assertThat(node.nodeId()).isEqualTo(1);
            assertThat(node.host()).isEqualTo("127.0.0.1");
        });
        FetchResponseData.PartitionData fetch = cluster.consumerFetch(2, 0, -1);
        assertThat(Errors.forCode(fetch.errorCode())).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
        assertThat(fetch.currentLeader().leaderId()).isEqualTo(1);
        assertThat(Errors.forCode(cluster.listLatest(2).errorCode())).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
        assertThat(cluster.partition(2).logEndOffset()).isZero();
    }

    @Test
    void shouldCheckTheClientsCurrentLeaderEpoch() throws Exception {
        start(Map.of(), ALL);
        cluster.publish(new PartitionImage(0, ALL, ALL, 1, 3, 1));

        assertThat(Errors.forCode(cluster.consumerFetch(1, 0, 2).errorCode())).isEqualTo(Errors.FENCED_LEADER_EPOCH);
        assertThat(Errors.forCode(cluster.consumerFetch(1, 0, 4).errorCode())).isEqualTo(Errors.UNKNOWN_LEADER_EPOCH);
        assertThat(Errors.forCode(cluster.consumerFetch(1, 0, 3).errorCode())).isEqualTo(Errors.NONE);
    }

    @Test
    void shouldIgnoreAnImageOlderThanOneApplied() throws Exception {
        start(Map.of(), ALL);
        cluster.publish(new PartitionImage(0, ALL, ALL, 1, 2, 2));

        cluster.publish(new PartitionImage(0, ALL, ALL, 2, 1, 3));

        Partition partition = cluster.partition(1);
        assertThat(partition.isLeader()).isTrue();
        assertThat(partition.leaderEpoch()).isEqualTo(2);
        assertThat(cluster.partition(2).isFollower()).isTrue();
    }

    @Test
    void shouldMoveLeadershipAndKeepReplicatingFromTheNewLeader() throws Exception {
        start(Map.of(), ALL);
        get(cluster.produce(1, ACKS_ALL, 10_000, "first"));

        cluster.publish(new PartitionImage(0, ALL, ALL, 2, 1, 1));

        assertThat(cluster.partition(1).isFollower()).isTrue();
        assertThat(Errors.forCode(get(cluster.produce(1, ACKS_ONE, 10_000, "refused")).errorCode()))
                .isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
        PartitionProduceResponse second = get(cluster.produce(2, ACKS_ALL, 10_000, "second"));
        assertThat(Errors.forCode(second.errorCode())).isEqualTo(Errors.NONE);
        assertThat(second.baseOffset()).isEqualTo(1);
        await(() -> cluster.partition(1).logEndOffset() == 2 && cluster.partition(3).logEndOffset() == 2);
        assertThat(cluster.logValues(1)).containsExactly("first", "second");
        assertThat(cluster.logValues(3)).containsExactly("first", "second");
        assertThat(cluster.consumerRead(2, 0)).containsExactly("first", "second");
    }
}
