package dev.millrace.broker.replica;

import static dev.millrace.broker.server.ReplicaTestCluster.await;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.message.ProduceResponseData.PartitionProduceResponse;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.server.ReplicaTestCluster;

/**
 * The scenarios leader epochs exist for (KIP-101, KIP-279), on three brokers on loopback with the test as the
 * controller: after each, every replica holds the same log and no record acknowledged with acks=all is missing.
 */
@Timeout(60)
class LeaderEpochTruncationIntegrationTest {

    private static final short ACKS_ALL = -1;
    private static final short ACKS_ONE = 1;
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

    private void start() throws Exception {
        cluster = new ReplicaTestCluster(dir, 3, ReplicaConfig.defaults().withReplicaFetchWaitMaxMs(100)
                .withReplicaFetchBackoffMs(20), Map.of());
        cluster.publish(new PartitionImage(0, ALL, ALL, 1, 0, 0));
    }

    private void produce(int node, short acks, String... values) throws Exception {
        PartitionProduceResponse response = cluster.produce(node, acks, 10_000, values).get(30, TimeUnit.SECONDS);
        assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.NONE);
    }

    private void awaitSameLogs(int... nodes) {
        await(() -> {
            List<String> first = cluster.logValues(nodes[0]);
            for (int node : nodes) {
                if (!cluster.logValues(node).equals(first)) {
                    return false;
                }
            }
            return true;
        });
    }

    @Test
    void shouldTruncateTheTailOfALeaderThatDiedWithRecordsOnlyItHad() throws Exception {
        start();
        produce(1, ACKS_ALL, "a", "b");
        cluster.stop(2);
        cluster.stop(3);
        produce(1, ACKS_ONE, "only-on-1", "also-only-on-1");
        cluster.stop(1);

        cluster.restart(2);
        cluster.restart(3);
        cluster.publish(new PartitionImage(0, ALL, List.of(2, 3), 2, 1, 1));
        produce(2, ACKS_ALL, "c");
        cluster.restart(1);

        await(() -> cluster.state().isr().contains(1));
        awaitSameLogs(1, 2, 3);
        assertThat(cluster.logValues(1)).containsExactly("a", "b", "c");
        assertThat(cluster.partition(1).isFollower()).isTrue();
    }

    @Test
    void shouldAgreeAfterTwoQuickLeaderChangesWithADivergentTailOnEachOldLeader() throws Exception {
        start();
        produce(1, ACKS_ALL, "a", "b");
        cluster.stop(2);
        cluster.stop(3);
        produce(1, ACKS_ONE, "x-epoch-0");
        cluster.stop(1);

        cluster.restart(2);
        cluster.publish(new PartitionImage(0, ALL, List.of(2), 2, 1, 1));
        produce(2, ACKS_ONE, "y-epoch-1");
        cluster.stop(2);

        cluster.restart(3);
        cluster.publish(new PartitionImage(0, ALL, List.of(3), 3, 2, 2));
        produce(3, ACKS_ALL, "z-epoch-2");
        cluster.restart(1);
        cluster.restart(2);

        await(() -> cluster.state().isr().size() == 3);
        awaitSameLogs(1, 2, 3);
        assertThat(cluster.logValues(3)).containsExactly("a", "b", "z-epoch-2");
        produce(3, ACKS_ALL, "after");
        awaitSameLogs(1, 2, 3);
        assertThat(cluster.logValues(1)).containsExactly("a", "b", "z-epoch-2", "after");
    }
}
