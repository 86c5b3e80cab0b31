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

    /** Creates {@code __consumer_offsets} unless it exists; waits for the metadata to apply. */
    static void ensureOffsetsTopic(Controller controller, int partitions) throws Exception {
        ensureCompactedTopic(controller, OffsetsTopic.NAME, partitions);
    }

    /** Creates {@code __transaction_state} unless it exists; waits for the metadata to apply. */
    static void ensureTransactionStateTopic(Controller controller, int partitions) throws Exception {
        ensureCompactedTopic(controller, TransactionStateTopic.NAME, partitions);
    }

    /**
     * Creates {@code __millrace_delayed} unless it exists: kept until the delay service moves its log
     * start past delivered records (no time or size retention, which could lose pending delays).
     */
    static void ensureDelayTopic(Controller controller, int partitions) throws Exception {
        ensureTopic(controller, DelayedDelivery.TOPIC, partitions, Map.of(
                LogConfig.CLEANUP_POLICY, "delete", LogConfig.RETENTION_MS, "-1", LogConfig.RETENTION_BYTES, "-1",
                LogConfig.SEGMENT_BYTES, String.valueOf(100 * 1024 * 1024)));
    }

    private static void ensureCompactedTopic(Controller controller, String name, int partitions) throws Exception {
        ensureTopic(controller, name, partitions, Map.of(
                LogConfig.CLEANUP_POLICY, LogConfig.CLEANUP_POLICY_COMPACT,
                LogConfig.SEGMENT_BYTES, String.valueOf(100 * 1024 * 1024)));
    }

    private static void ensureTopic(Controller controller, String name, int partitions, Map<String, String> configs)
            throws Exception {
        if (controller.image().topic(name).isPresent()) {
            return;
        }
        NewTopic topic = new NewTopic(name, partitions, (short) 1, configs);
        ApiError result = controller.createTopics(List.of(topic), false).get(30, TimeUnit.SECONDS)
                .get(name);
        if (!result.isSuccess() && result.error() != Errors.TOPIC_ALREADY_EXISTS) {
            throw result.exception();
        }
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
