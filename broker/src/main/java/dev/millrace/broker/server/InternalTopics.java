package dev.millrace.broker.server;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;

import dev.millrace.broker.controller.Controller;
import dev.millrace.broker.controller.Controller.NewTopic;
import dev.millrace.broker.delay.DelayLogs;
import dev.millrace.broker.group.OffsetsTopic;
import dev.millrace.broker.group.TopicIds;
import dev.millrace.broker.log.LogConfig;
import dev.millrace.broker.log.PartitionLog;
import dev.millrace.broker.share.LogShareStateStore;
import dev.millrace.broker.txn.TransactionStateTopic;
import dev.millrace.protocol.delay.DelayedDelivery;

/**
 * The broker's internal topics and the views the coordinators need of them. {@code __consumer_offsets}
 * and {@code __transaction_state} are created at first start, compacted, with
 * {@code offsets.topic.num.partitions} and {@code transaction.state.log.num.partitions} partitions
 * and 100 MiB segments (as Kafka does); their partition counts never change afterwards. The delay
 * service's {@code __millrace_delayed} has {@code delay.topic.num.partitions} partitions.
 */
final class InternalTopics {

    private InternalTopics() {
    }

    /**
     * Kafka's internal topics plus Millrace's delay topic: shown as internal in Metadata (so
     * {@code listTopics()} leaves them out) and never auto-created.
     */
    static boolean isInternal(String topic) {
        return org.apache.kafka.common.internals.Topic.isInternal(topic) || DelayedDelivery.TOPIC.equals(topic);
    }

    /**
     * Creates every internal topic that does not exist yet ({@code __consumer_offsets},
     * {@code __transaction_state}, {@code __millrace_delayed}, the share-state topic), each with
     * {@code replicationFactor} replicas, and returns once all exist in the metadata.
     *
     * <p>Only the node whose voter is the active controller creates them, as one request, retrying
     * while fewer brokers than {@code replicationFactor} are unfenced (a cluster starting node by node);
     * every other node waits until the metadata shows them. Returns once this node's replicas of them
     * have their logs open, so that the coordinators can load them. So a cluster's internal topics are created
     * once, with their full replication factor, never with fewer replicas because a node was early.
     *
     * @param replicationFactor min(3, number of voters): 1 for the embedded single node
     * @throws java.util.concurrent.TimeoutException when they do not all exist within {@code timeoutMs}
     */
    static void ensureAll(Controller controller, PartitionManager local, int nodeId, short replicationFactor,
                          int offsetsPartitions,
                          int transactionPartitions, int delayPartitions, int sharePartitions, long timeoutMs)
            throws Exception {
        Map<String, String> compacted = Map.of(LogConfig.CLEANUP_POLICY, LogConfig.CLEANUP_POLICY_COMPACT,
                LogConfig.SEGMENT_BYTES, String.valueOf(100 * 1024 * 1024));
        // kept until the delay service moves its log start past delivered records (no time or size retention,
        // which could lose pending delays)
        Map<String, String> delay = Map.of(LogConfig.CLEANUP_POLICY, "delete", LogConfig.RETENTION_MS, "-1",
                LogConfig.RETENTION_BYTES, "-1",
                LogConfig.SEGMENT_BYTES, String.valueOf(100 * 1024 * 1024));
        List<NewTopic> wanted = List.of(
                new NewTopic(OffsetsTopic.NAME, offsetsPartitions, replicationFactor, compacted),
                new NewTopic(TransactionStateTopic.NAME, transactionPartitions, replicationFactor, compacted),
                new NewTopic(DelayedDelivery.TOPIC, delayPartitions, replicationFactor, delay),
                new NewTopic(LogShareStateStore.TOPIC, sharePartitions, replicationFactor, compacted));
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        String lastProblem = "none yet";
        while (true) {
            List<NewTopic> missing = wanted.stream().filter(t -> controller.image().topic(t.name()).isEmpty()).toList();
            if (missing.isEmpty() && wanted.stream().allMatch(t -> openHere(controller, local, nodeId, t.name()))) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new java.util.concurrent.TimeoutException("The internal topics " + missing.stream()
                        .map(NewTopic::name).toList() + " did not come to exist within " + timeoutMs + " ms; they need "
                        + replicationFactor + " unfenced broker(s); last problem: " + lastProblem);
            }
            if (controller.activeControllerId().orElse(-1) == nodeId) {
                Map<String, ApiError> results = controller.createTopics(missing, false).get(timeoutMs,
                        TimeUnit.MILLISECONDS);
                for (ApiError result : results.values()) {
                    if (!result.isSuccess() && result.error() != Errors.TOPIC_ALREADY_EXISTS) {
                        if (result.error() != Errors.INVALID_REPLICATION_FACTOR
                                && result.error() != Errors.NOT_CONTROLLER) {
                            throw result.exception();
                        }
                        lastProblem = result.messageWithFallback();
                    }
                }
            }
            Thread.sleep(100);
        }
    }

    private static boolean openHere(Controller controller, PartitionManager local, int nodeId, String topic) {
        return controller.image().topic(topic).map(t -> t.partitions().values().stream()
                .filter(p -> p.replicas().contains(nodeId))
                .allMatch(p -> local.partition(new TopicPartition(topic, p.partition())).isPresent())).orElse(false);
    }

    /** {@code __consumer_offsets} as the group coordinator sees it: the local logs of its partitions. */
    static OffsetsTopic offsetsTopic(Controller controller, PartitionManager partitions) {
        int count = controller.image().topic(OffsetsTopic.NAME).orElseThrow().partitions().size();
        return new OffsetsTopic() {
            @Override
            public int partitionCount() {
                return count;
            }

            @Override
            public PartitionLog log(int partition) {
                return localLog(partitions, OffsetsTopic.NAME, partition);
            }

            @Override
            public int leaderEpoch(int partition) {
                return leaderEpochForAppend(partitions, OffsetsTopic.NAME, partition);
            }
        };
    }

    /** {@code __transaction_state} as the transaction coordinator sees it. */
    static TransactionStateTopic transactionStateTopic(Controller controller, PartitionManager partitions) {
        int count = controller.image().topic(TransactionStateTopic.NAME).orElseThrow().partitions().size();
        return new TransactionStateTopic() {
            @Override
            public int partitionCount() {
                return count;
            }

            @Override
            public PartitionLog log(int partition) {
                return localLog(partitions, TransactionStateTopic.NAME, partition);
            }

            @Override
            public int leaderEpoch(int partition) {
                return leaderEpochForAppend(partitions, TransactionStateTopic.NAME, partition);
            }
        };
    }

    private static PartitionLog localLog(PartitionManager partitions, String topic, int partition) {
        return local(partitions, topic, partition).log();
    }

    private static Partition local(PartitionManager partitions, String topic, int partition) {
        return partitions.partition(new TopicPartition(topic, partition))
                .orElseThrow(() -> new IllegalStateException(topic + "-" + partition + " has no local log"));
    }

    /**
     * The leader epoch a coordinator stamps on its append to {@code partition}: every coordinator append asks for it
     * just before writing, so this is where a broker that does not lead the partition refuses the write.
     *
     * @throws org.apache.kafka.common.errors.NotLeaderOrFollowerException if this broker does not lead it
     */
    private static int leaderEpochForAppend(PartitionManager partitions, String topic, int partition) {
        return local(partitions, topic, partition).checkLeader().leaderEpoch();
    }

    /** The broker's topics and local logs as the delay service needs them. */
    static DelayLogs delayLogs(Controller controller, PartitionManager partitions) {
        return new DelayLogs() {
            @Override
            public int partitionCount(String topic) {
                return controller.image().topic(topic).map(t -> t.partitions().size()).orElse(-1);
            }

            @Override
            public Optional<PartitionLog> log(TopicPartition tp) {
                return partitions.partition(tp).map(Partition::log);
            }

            @Override
            public int leaderEpoch(TopicPartition tp) {
                return leaderEpochForAppend(partitions, tp.topic(), tp.partition());
            }
        };
    }

    /** Topic names and ids from the latest metadata image. */
    static TopicIds topicIds(Controller controller) {
        return new TopicIds() {
            @Override
            public Optional<String> nameOf(Uuid topicId) {
                return controller.image().topic(topicId).map(t -> t.name());
            }

            @Override
            public Optional<Uuid> idOf(String topicName) {
                return controller.image().topic(topicName).map(t -> t.topicId());
            }
        };
    }
}
