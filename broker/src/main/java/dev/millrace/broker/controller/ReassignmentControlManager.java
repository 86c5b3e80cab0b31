package dev.millrace.broker.controller;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;

import dev.millrace.broker.controller.Controller.OngoingReassignment;
import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.controller.MetadataImage.TopicImage;

/**
 * Partition reassignment, in Kafka's model: moving a partition to target replicas first adds the new
 * ones, which start as followers outside the ISR; once every target replica is in the ISR (the leader
 * adds them with AlterPartition as they catch up) the reassignment completes: the replicas become the
 * target, the old ones leave the ISR and, if the leader is one of them, leadership moves to a target
 * replica in the ISR.
 *
 * <pre>
 *   before     replicas [1,2,3]            isr [1,2,3]
 *   start      replicas [1,4,5,2,3]        adding [4,5] removing [2,3]       (target [1,4,5])
 *   catch up   isr [1,2,3,4,5]  (AlterPartition from leader 1)
 *   complete   replicas [1,4,5]            isr [1,4,5]  adding [] removing []
 * </pre>
 *
 * Every step is a new {@link MetadataRecord.PartitionRecord} with the partition epoch raised (and the
 * leader epoch when the leader changes). A new target while one is in progress replaces it (relative
 * to the original replicas); an empty target cancels it, going back to the original replicas.
 * Errors: UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICA_ASSIGNMENT (empty target, a repeated broker, a
 * broker that is not registered, naming it), NO_REASSIGNMENT_IN_PROGRESS for a cancel with none.
 *
 * <p>Stateless; thread-safe.
 */
final class ReassignmentControlManager {

    Map<TopicPartition, ApiError> alterReassignments(ClusterDelta delta,
                                                     Map<TopicPartition, Optional<List<Integer>>> reassignments) {
        Map<TopicPartition, ApiError> response = new LinkedHashMap<>();
        for (Map.Entry<TopicPartition, Optional<List<Integer>>> entry : reassignments.entrySet()) {
            TopicPartition tp = entry.getKey();
            Optional<TopicImage> topic = delta.image().topic(tp.topic());
            PartitionImage base = topic.map(t -> t.partitions().get(tp.partition())).orElse(null);
            if (base == null) {
                response.put(tp, new ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, "Partition " + tp
                        + " does not exist"));
                continue;
            }
            PartitionImage p = delta.partition(topic.get(), base);
            Uuid topicId = topic.get().topicId();
            if (entry.getValue() == null || entry.getValue().isEmpty()) {
                response.put(tp, cancel(delta, topicId, tp, p));
            } else {
                response.put(tp, reassign(delta, topicId, tp, p, entry.getValue().get()));
            }
        }
        return response;
    }

    /** Every partition with a reassignment in progress. */
    static Map<TopicPartition, OngoingReassignment> ongoing(MetadataImage image) {
        Map<TopicPartition, OngoingReassignment> result = new LinkedHashMap<>();
        for (TopicImage topic : image.topics().values()) {
            for (PartitionImage p : topic.partitions().values()) {
                if (p.isReassigning()) {
                    result.put(new TopicPartition(topic.name(), p.partition()),
                            new OngoingReassignment(p.replicas(), p.addingReplicas(), p.removingReplicas()));
                }
            }
        }
        return result;
    }

    /**
     * Completes the partition's reassignment when every target replica is in the ISR and a target
     * replica can lead; @return the partition as it is then.
     */
    static PartitionImage maybeComplete(ClusterDelta delta, Uuid topicId, PartitionImage p) {
        if (!p.isReassigning()) {
            return p;
        }
        List<Integer> target = p.targetReplicas();
        if (!p.isr().containsAll(target)) {
            return p;
        }
        List<Integer> isr = p.isr().stream().filter(target::contains).toList();
        Optional<Integer> leader = target.contains(p.leader()) ? Optional.of(p.leader())
                : ReplicationControlManager.firstUsable(delta, target, isr);
        if (leader.isEmpty()) {
            return p;
        }
        PartitionImage done = new PartitionImage(p.partition(), target, isr, leader.get(),
                leader.get() == p.leader() ? p.leaderEpoch() : p.leaderEpoch() + 1, p.partitionEpoch() + 1);
        delta.putPartition(topicId, done);
        return done;
    }

    private static ApiError reassign(ClusterDelta delta, Uuid topicId, TopicPartition tp, PartitionImage p,
                                     List<Integer> target) {
        if (target.isEmpty() || new HashSet<>(target).size() != target.size()) {
            return new ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, "The target replicas " + target + " of " + tp
                    + " must be a non-empty list of distinct broker ids");
        }
        for (int brokerId : target) {
            if (!delta.image().brokers().containsKey(brokerId)) {
                return new ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, "Broker " + brokerId + " in the target replicas "
                        + target + " of " + tp + " is not registered");
            }
        }
        List<Integer> original = original(p);
        if (!p.isReassigning() && original.equals(target)) {
            return ApiError.NONE;
        }
        List<Integer> adding = target.stream().filter(r -> !original.contains(r)).toList();
        List<Integer> removing = original.stream().filter(r -> !target.contains(r)).toList();
        List<Integer> replicas = new ArrayList<>(target);
        replicas.addAll(removing);
        List<Integer> isr = p.isr().stream().filter(replicas::contains).toList();
        if (isr.isEmpty()) {
            return new ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, "Reassigning " + tp + " to " + target
                    + " would leave no ISR member of " + p.isr());
        }
        int leader = p.leader() == -1 || isr.contains(p.leader()) ? p.leader()
                : ReplicationControlManager.firstUsable(delta, replicas, isr).orElse(-1);
        PartitionImage started = new PartitionImage(p.partition(), replicas, isr, leader,
                leader == p.leader() ? p.leaderEpoch() : p.leaderEpoch() + 1, p.partitionEpoch() + 1, adding, removing);
        delta.putPartition(topicId, started);
        maybeComplete(delta, topicId, started);
        return ApiError.NONE;
    }

    private static ApiError cancel(ClusterDelta delta, Uuid topicId, TopicPartition tp, PartitionImage p) {
        if (!p.isReassigning()) {
            return new ApiError(Errors.NO_REASSIGNMENT_IN_PROGRESS, "No reassignment of " + tp + " is in progress");
        }
        List<Integer> original = original(p);
        List<Integer> isr = p.isr().stream().filter(original::contains).toList();
        if (isr.isEmpty()) {
            return new ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, "Cancelling the reassignment of " + tp
                    + " would leave no ISR member: the original replicas " + original + " are not in the ISR "
                    + p.isr());
        }
        int leader = original.contains(p.leader()) ? p.leader()
                : ReplicationControlManager.firstUsable(delta, original, isr).orElse(-1);
        delta.putPartition(topicId, new PartitionImage(p.partition(), original, isr, leader,
                leader == p.leader() ? p.leaderEpoch() : p.leaderEpoch() + 1, p.partitionEpoch() + 1));
        return ApiError.NONE;
    }

    /** The replicas before the reassignment in progress (the replicas when none is). */
    private static List<Integer> original(PartitionImage p) {
        return p.replicas().stream().filter(r -> !p.addingReplicas().contains(r)).toList();
    }
}
