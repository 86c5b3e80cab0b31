package dev.millrace.broker.controller;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;

import dev.millrace.broker.controller.Controller.AlterPartitionResult;
import dev.millrace.broker.controller.Controller.IsrChange;
import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.controller.MetadataImage.TopicImage;

/**
 * Partition leadership and ISR: moves leaderships and ISR memberships away from a broker that is
 * fenced or shutting down, elects a returning broker leader of the partitions that lost theirs,
 * applies the ISR changes leaders ask for (Kafka's AlterPartition) and runs preferred and unclean
 * leader elections. Every change is a whole new {@link MetadataRecord.PartitionRecord} in a
 * {@link ClusterDelta}; a leader change raises the leader epoch and the partition epoch, an ISR-only
 * change the partition epoch.
 *
 * <p>Rules (Kafka's, without eligible leader replicas):
 * <ul>
 *   <li>A new leader is the first replica, in replica order (so the preferred replica first), that is
 *       in the ISR and unfenced.</li>
 *   <li>A fenced broker leaves every ISR it is in unless it is the last member; a partition it led gets
 *       another leader from the ISR, or leader -1 when there is none (its ISR then stays as it is, so the
 *       last member returns as leader when it comes back).</li>
 *   <li>With {@code uncleanLeaderElection}, a partition left with no usable ISR member elects any
 *       unfenced replica instead of -1, and the ISR becomes just that replica: records only the old
 *       ISR had are lost, which is why it is off by default.</li>
 *   <li>An ISR change that puts every target replica of a reassignment in the ISR completes the
 *       reassignment ({@link ReassignmentControlManager}).</li>
 *   <li>A broker in controlled shutdown hands over the leaderships that another unfenced ISR member
 *       can take and leaves ISRs that keep another member; it keeps leading the others.</li>
 * </ul>
 *
 * <p>Stateless; thread-safe. It reads the delta's image and never changes it.
 */
final class ReplicationControlManager {

    private final boolean uncleanLeaderElection;

    ReplicationControlManager(boolean uncleanLeaderElection) {
        this.uncleanLeaderElection = uncleanLeaderElection;
    }

    /**
     * Moves leaderships and ISR memberships away from {@code brokerId}, which the delta already shows
     * as fenced or in controlled shutdown.
     *
     * @param controlledShutdown keep leaderships nobody else can take (instead of leader -1)
     */
    void moveAwayFrom(ClusterDelta delta, int brokerId, boolean controlledShutdown) {
        delta.forEachPartition((topic, p) -> {
            List<Integer> others = without(p.isr(), brokerId);
            if (p.leader() == brokerId) {
                Optional<Integer> next = firstUsable(delta, p.replicas(), others);
                if (next.isPresent()) {
                    delta.putPartition(topic.topicId(), change(p, next.get(), others, true));
                } else if (controlledShutdown) {
                    return;
                } else {
                    Optional<Integer> unclean = uncleanLeaderElection
                            ? firstUsable(delta, p.replicas(), without(p.replicas(), brokerId)) : Optional.empty();
                    if (unclean.isPresent()) {
                        delta.putPartition(topic.topicId(), change(p, unclean.get(), List.of(unclean.get()), true));
                    } else {
                        delta.putPartition(topic.topicId(), change(p, -1, others.isEmpty() ? p.isr() : others,
                                true));
                    }
                }
            } else if (p.isr().contains(brokerId) && !others.isEmpty()) {
                delta.putPartition(topic.topicId(), change(p, p.leader(), others, false));
            }
        });
    }

    /**
     * Makes {@code brokerId}, just unfenced in the delta, leader of the leaderless partitions whose ISR
     * holds it (with unclean election: of those where it is any replica and no ISR member is usable).
     */
    void electReturningBroker(ClusterDelta delta, int brokerId) {
        delta.forEachPartition((topic, p) -> {
            if (p.leader() != -1 || !p.replicas().contains(brokerId)) {
                return;
            }
            Optional<Integer> clean = firstUsable(delta, p.replicas(), p.isr());
            if (clean.isPresent()) {
                delta.putPartition(topic.topicId(), change(p, clean.get(), p.isr(), true));
            } else if (uncleanLeaderElection) {
                delta.putPartition(topic.topicId(), change(p, brokerId, List.of(brokerId), true));
            }
        });
    }

    /** Whether {@code brokerId} leads a partition that another usable ISR member could lead instead. */
    boolean leadsMovablePartition(ClusterDelta delta, int brokerId) {
        boolean[] movable = {false};
        delta.forEachPartition((topic, p) -> {
            if (p.leader() == brokerId && firstUsable(delta, p.replicas(), without(p.isr(), brokerId)).isPresent()) {
                movable[0] = true;
            }
        });
        return movable[0];
    }

    /** Applies one leader's ISR changes (Kafka's AlterPartition checks, in that order). */
    Map<TopicIdPartition, AlterPartitionResult> alterPartition(ClusterDelta delta, int brokerId,
                                                               List<IsrChange> changes) {
        Map<TopicIdPartition, AlterPartitionResult> response = new LinkedHashMap<>();
        for (IsrChange change : changes) {
            Optional<TopicImage> topic = delta.image().topic(change.topicId());
            PartitionImage base = topic.map(t -> t.partitions().get(change.partition())).orElse(null);
            if (base == null) {
                response.put(new TopicIdPartition(change.topicId(), change.partition(), topic.map(TopicImage::name)
                        .orElse(null)), new AlterPartitionResult(Errors.UNKNOWN_TOPIC_OR_PARTITION, null));
                continue;
            }
            PartitionImage p = delta.partition(topic.get(), base);
            TopicIdPartition key = new TopicIdPartition(change.topicId(), change.partition(), topic.get().name());
            Errors error = checkIsrChange(delta, brokerId, p, change);
            if (error != Errors.NONE) {
                response.put(key, new AlterPartitionResult(error, p));
                continue;
            }
            PartitionImage next = change(p, p.leader(), List.copyOf(change.newIsr()), false);
            delta.putPartition(change.topicId(), next);
            next = ReassignmentControlManager.maybeComplete(delta, change.topicId(), next);
            response.put(key, new AlterPartitionResult(Errors.NONE, next));
        }
        return response;
    }

    private static Errors checkIsrChange(ClusterDelta delta, int brokerId, PartitionImage p, IsrChange change) {
        if (p.leader() != brokerId) {
            return Errors.NOT_LEADER_OR_FOLLOWER;
        }
        if (change.leaderEpoch() != p.leaderEpoch()) {
            return Errors.FENCED_LEADER_EPOCH;
        }
        if (change.partitionEpoch() != p.partitionEpoch()) {
            return Errors.INVALID_UPDATE_VERSION;
        }
        List<Integer> newIsr = change.newIsr();
        if (newIsr == null || !newIsr.contains(p.leader()) || !p.replicas().containsAll(newIsr)
                || Set.copyOf(newIsr).size() != newIsr.size()) {
            return Errors.INELIGIBLE_REPLICA;
        }
        for (int member : newIsr) {
            if (!p.isr().contains(member) && !delta.isUsable(member)) {
                return Errors.INELIGIBLE_REPLICA;
            }
        }
        return Errors.NONE;
    }

    /**
     * Preferred election moves leadership to the first replica when it is unfenced and in the ISR;
     * unclean election gives a leaderless partition a leader from the ISR, else any unfenced replica.
     *
     * @param partitions null for every partition
     */
    Map<TopicPartition, ApiError> electLeaders(ClusterDelta delta, boolean preferred, Set<TopicPartition> partitions) {
        Map<TopicPartition, ApiError> response = new LinkedHashMap<>();
        if (partitions == null) {
            delta.forEachPartition((topic, p) -> response.put(new TopicPartition(topic.name(), p.partition()),
                    elect(delta, topic, p, preferred)));
            return response;
        }
        for (TopicPartition tp : partitions) {
            Optional<TopicImage> topic = delta.image().topic(tp.topic());
            PartitionImage base = topic.map(t -> t.partitions().get(tp.partition())).orElse(null);
            if (base == null) {
                response.put(tp, new ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION,
                        "Partition " + tp + " does not exist"));
            } else {
                response.put(tp, elect(delta, topic.get(), delta.partition(topic.get(), base), preferred));
            }
        }
        return response;
    }

    private static ApiError elect(ClusterDelta delta, TopicImage topic, PartitionImage p, boolean preferred) {
        String name = topic.name() + "-" + p.partition();
        if (preferred) {
            int first = p.replicas().get(0);
            if (p.leader() == first) {
                return new ApiError(Errors.ELECTION_NOT_NEEDED, "Preferred replica " + first + " already leads "
                        + name);
            }
            if (!p.isr().contains(first) || !delta.isUsable(first)) {
                return new ApiError(Errors.PREFERRED_LEADER_NOT_AVAILABLE, "Preferred replica " + first + " of "
                        + name + " is " + (p.isr().contains(first) ? "fenced" : "not in the ISR " + p.isr()));
            }
            delta.putPartition(topic.topicId(), change(p, first, p.isr(), true));
            return ApiError.NONE;
        }
        if (p.leader() != -1) {
            return new ApiError(Errors.ELECTION_NOT_NEEDED, name + " already has leader " + p.leader());
        }
        Optional<Integer> clean = firstUsable(delta, p.replicas(), p.isr());
        if (clean.isPresent()) {
            delta.putPartition(topic.topicId(), change(p, clean.get(), p.isr(), true));
            return ApiError.NONE;
        }
        Optional<Integer> unclean = firstUsable(delta, p.replicas(), p.replicas());
        if (unclean.isPresent()) {
            delta.putPartition(topic.topicId(), change(p, unclean.get(), List.of(unclean.get()), true));
            return ApiError.NONE;
        }
        return new ApiError(Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE, "No replica of " + name + " " + p.replicas()
                + " is unfenced");
    }

    /** The first of {@code replicas} (in replica order) that is in {@code candidates} and usable. */
    static Optional<Integer> firstUsable(ClusterDelta delta, List<Integer> replicas, List<Integer> candidates) {
        for (int replica : replicas) {
            if (candidates.contains(replica) && delta.isUsable(replica)) {
                return Optional.of(replica);
            }
        }
        return Optional.empty();
    }

    /** The partition with a new leader and ISR, its reassignment state kept, and the epochs raised. */
    static PartitionImage change(PartitionImage p, int leader, List<Integer> isr, boolean leaderChange) {
        return new PartitionImage(p.partition(), p.replicas(), List.copyOf(isr), leader,
                leaderChange ? p.leaderEpoch() + 1 : p.leaderEpoch(), p.partitionEpoch() + 1, p.addingReplicas(),
                p.removingReplicas());
    }

    private static List<Integer> without(List<Integer> members, int brokerId) {
        List<Integer> rest = new ArrayList<>(members);
        rest.remove(Integer.valueOf(brokerId));
        return List.copyOf(rest);
    }
}
