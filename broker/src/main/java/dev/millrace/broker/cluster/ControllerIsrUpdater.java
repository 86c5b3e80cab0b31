package dev.millrace.broker.cluster;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.Optional;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.OperationNotAttemptedException;
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
 * <p>Batching, as Kafka's AlterPartition manager does: one AlterPartition is in flight at a time, and the changes
 * proposed meanwhile (by any partition) leave together in the next one. Each AlterPartition is one controller event
 * and one Raft commit, and events wait for the commits before them: after a broker restarts, its hundred partitions
 * each proposing on their own made a queue of a hundred commits that held heartbeats back long enough to fence
 * live brokers. A partition has at most one change in flight (its leader's rule), so a batch holds at most one per
 * partition; a newer proposal for a partition already queued replaces it (the older one fails, not sent).
 *
 * <p>Thread-safe.
 */
public final class ControllerIsrUpdater implements IsrUpdater {

    private record Pending(TopicPartition tp, IsrChange change, CompletableFuture<PartitionImage> result) {
    }

    private final int brokerId;
    private final ControllerClient client;
    private final LongSupplier brokerEpoch;
    private final Supplier<MetadataImage> metadata;
    private final Object lock = new Object();
    /** Changes waiting for the AlterPartition in flight to be answered, by partition. Guarded by {@link #lock}. */
    private final Map<TopicIdPartition, Pending> queued = new LinkedHashMap<>();
    /** Guarded by {@link #lock}. */
    private boolean inFlight;

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
        CompletableFuture<PartitionImage> result = new CompletableFuture<>();
        Pending replaced;
        boolean send;
        synchronized (lock) {
            replaced = queued.put(new TopicIdPartition(topicId, tp), new Pending(tp, change, result));
            send = !inFlight; // else it leaves with the next batch, once the one in flight is answered
            inFlight = true;
        }
        if (replaced != null) {
            replaced.result().completeExceptionally(new OperationNotAttemptedException("The ISR change of " + tp
                    + " to " + replaced.change().newIsr() + " was replaced by a newer one before it was sent"));
        }
        if (send) {
            maybeSend();
        }
        return result;
    }

    /** Sends what is queued; with {@link #inFlight} set by the caller, cleared here when nothing is left. */
    private void maybeSend() {
        List<Pending> batch;
        synchronized (lock) {
            if (queued.isEmpty()) {
                inFlight = false;
                return;
            }
            batch = new ArrayList<>(queued.values());
            queued.clear();
        }
        List<IsrChange> changes = batch.stream().map(Pending::change).toList();
        CompletableFuture<Map<TopicIdPartition, AlterPartitionResult>> sent;
        try {
            sent = client.alterPartition(brokerId, brokerEpoch.getAsLong(), changes);
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        sent.whenComplete((results, error) -> {
            for (Pending p : batch) {
                if (error != null) {
                    p.result().completeExceptionally(error);
                    continue;
                }
                try {
                    p.result().complete(complete(p.change().topicId(), resultFor(p.tp(), p.change().topicId(),
                            results)));
                } catch (RuntimeException e) {
                    p.result().completeExceptionally(e);
                }
            }
            maybeSend(); // what was proposed meanwhile
        });
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
