package dev.millrace.broker.replica;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

import dev.millrace.broker.controller.MetadataImage.PartitionImage;

/**
 * Asks the active controller to change a partition's ISR (Kafka's AlterPartition): the leader names its leader epoch
 * and the partition epoch its request is based on; the controller refuses a request based on a stale state.
 *
 * <p>Implementations are thread-safe; the future may complete on any thread.
 */
@FunctionalInterface
public interface IsrUpdater {

    /**
     * Proposes {@code newIsr} for {@code tp}.
     *
     * @return completes with the partition's state as the controller committed it, or exceptionally with a
     *         kafka-clients {@link org.apache.kafka.common.errors.ApiException} (FencedLeaderEpochException,
     *         InvalidUpdateVersionException, NotLeaderOrFollowerException, IneligibleReplicaException, ...)
     */
    CompletableFuture<PartitionImage> alterIsr(TopicPartition tp, Uuid topicId, int leaderEpoch, List<Integer> newIsr,
                                               int partitionEpoch);

    /** For a broker that runs alone: every change is refused (a single replica never changes its ISR). */
    IsrUpdater UNSUPPORTED = (tp, topicId, leaderEpoch, newIsr, partitionEpoch) -> CompletableFuture.failedFuture(
            new org.apache.kafka.common.errors.UnsupportedVersionException("This broker has no controller to send "
                    + "ISR changes to (asked to change the ISR of " + tp + " to " + newIsr + ")"));
}
