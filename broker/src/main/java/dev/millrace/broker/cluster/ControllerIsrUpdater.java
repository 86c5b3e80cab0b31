package dev.millrace.broker.cluster;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.protocol.Errors;

import dev.millrace.broker.controller.Controller.AlterPartitionResult;
import dev.millrace.broker.controller.Controller.IsrChange;
import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.replica.IsrUpdater;

/**
 * A leader's ISR changes, sent to the active controller as AlterPartition through {@link ControllerClient} with this
 * broker's id and current broker epoch. A partition-level error completes the future with the kafka-clients
 * exception of its code (FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION, INELIGIBLE_REPLICA, ...); the committed state
 * comes back as the controller answered it (its replica list is left to the caller, see
 * {@link ControllerMessages#alterPartitionResults}).
 *
 * <p>Thread-safe.
 */
public final class ControllerIsrUpdater implements IsrUpdater {

    private final int brokerId;
    private final ControllerClient client;
    private final LongSupplier brokerEpoch;

    public ControllerIsrUpdater(int brokerId, ControllerClient client, LongSupplier brokerEpoch) {
        this.brokerId = brokerId;
        this.client = client;
        this.brokerEpoch = brokerEpoch;
    }

    @Override
    public CompletableFuture<PartitionImage> alterIsr(TopicPartition tp, Uuid topicId, int leaderEpoch,
                                                      List<Integer> newIsr, int partitionEpoch) {
        IsrChange change = new IsrChange(topicId, tp.partition(), leaderEpoch, newIsr, partitionEpoch);
        return client.alterPartition(brokerId, brokerEpoch.getAsLong(), List.of(change))
                .thenApply(results -> resultFor(tp, topicId, results));
    }

    private static PartitionImage resultFor(TopicPartition tp, Uuid topicId,
                                            Map<TopicIdPartition, AlterPartitionResult> results) {
        for (Map.Entry<TopicIdPartition, AlterPartitionResult> entry : results.entrySet()) {
            if (entry.getKey().topicId().equals(topicId) && entry.getKey().partition() == tp.partition()) {
                AlterPartitionResult result = entry.getValue();
                if (result.error() != Errors.NONE) {
                    throw result.error().exception("AlterPartition of " + tp + " refused: " + result.error().message());
                }
                return result.partition();
            }
        }
        throw new UnknownTopicOrPartitionException("The controller's AlterPartition answer does not name " + tp);
    }
}
