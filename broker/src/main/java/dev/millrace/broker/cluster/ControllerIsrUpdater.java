package dev.millrace.broker.cluster;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.Optional;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.protocol.Errors;

import dev.millrace.broker.controller.Controller.AlterPartitionResult;
import dev.millrace.broker.controller.Controller.IsrChange;
import dev.millrace.broker.controller.MetadataImage;
import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.replica.IsrUpdater;

/**
 * A leader's ISR changes, sent to the active controller as AlterPartition through {@link ControllerClient} with this
 * broker's id and current broker epoch. A partition-level error completes the future with the kafka-clients
 * exception of its code (FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION, INELIGIBLE_REPLICA, ...).
 *
 * <p>The committed state returned is whole: an answer that crossed the network carries leader, epochs and ISR but no
 * replica list ({@link ControllerMessages#alterPartitionResults}), so the local metadata's state of the partition is
 * returned when it is at least as new (same or higher partition epoch), and otherwise the answer completed with the
 * local metadata's replica lists (the metadata brings the full record moments later). A state with an empty replica
 * list would make the leader refuse its own followers.
 *
 * <p>Thread-safe.
 */
public final class ControllerIsrUpdater implements IsrUpdater {

    private final int brokerId;
    private final ControllerClient client;
    private final LongSupplier brokerEpoch;
    private final Supplier<MetadataImage> metadata;

    public ControllerIsrUpdater(int brokerId, ControllerClient client, LongSupplier brokerEpoch,
                                Supplier<MetadataImage> metadata) {
        this.brokerId = brokerId;
        this.client = client;
        this.brokerEpoch = brokerEpoch;
        this.metadata = metadata;
    }

    @Override
    public CompletableFuture<PartitionImage> alterIsr(TopicPartition tp, Uuid topicId, int leaderEpoch,
                                                      List<Integer> newIsr, int partitionEpoch) {
        IsrChange change = new IsrChange(topicId, tp.partition(), leaderEpoch, newIsr, partitionEpoch);
        return client.alterPartition(brokerId, brokerEpoch.getAsLong(), List.of(change))
                .thenApply(results -> complete(topicId, resultFor(tp, topicId, results)));
    }

    private PartitionImage complete(Uuid topicId, PartitionImage answer) {
        Optional<PartitionImage> local = metadata.get().topic(topicId)
                .map(topic -> topic.partitions().get(answer.partition()));
        if (local.isEmpty()) {
            return answer;
        }
        PartitionImage known = local.get();
        if (known.partitionEpoch() >= answer.partitionEpoch()) {
            return known;
        }
        return new PartitionImage(answer.partition(), known.replicas(), answer.isr(), answer.leader(),
                answer.leaderEpoch(), answer.partitionEpoch(), known.addingReplicas(), known.removingReplicas());
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
