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
import dev.millrace.broker.group.OffsetsTopic;
import dev.millrace.broker.group.TopicIds;
import dev.millrace.broker.log.LogConfig;
import dev.millrace.broker.log.PartitionLog;
import dev.millrace.broker.txn.TransactionStateTopic;

/**
 * The broker's internal topics and the views the coordinators need of them. {@code __consumer_offsets}
 * and {@code __transaction_state} are created at first start, compacted, with
 * {@code offsets.topic.num.partitions} and {@code transaction.state.log.num.partitions} partitions
 * and 100 MiB segments (as Kafka does); their partition counts never change afterwards.
 */
final class InternalTopics {

    private InternalTopics() {
    }

    /** Creates {@code __consumer_offsets} unless it exists; waits for the metadata to apply. */
    static void ensureOffsetsTopic(Controller controller, int partitions) throws Exception {
        ensureCompactedTopic(controller, OffsetsTopic.NAME, partitions);
    }

    /** Creates {@code __transaction_state} unless it exists; waits for the metadata to apply. */
    static void ensureTransactionStateTopic(Controller controller, int partitions) throws Exception {
        ensureCompactedTopic(controller, TransactionStateTopic.NAME, partitions);
    }

    private static void ensureCompactedTopic(Controller controller, String name, int partitions) throws Exception {
        if (controller.image().topic(name).isPresent()) {
            return;
        }
        NewTopic topic = new NewTopic(name, partitions, (short) 1, Map.of(
                LogConfig.CLEANUP_POLICY, LogConfig.CLEANUP_POLICY_COMPACT,
                LogConfig.SEGMENT_BYTES, String.valueOf(100 * 1024 * 1024)));
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
        };
    }

    private static PartitionLog localLog(PartitionManager partitions, String topic, int partition) {
        return partitions.partition(new TopicPartition(topic, partition))
                .orElseThrow(() -> new IllegalStateException(topic + "-" + partition + " has no local log"))
                .log();
    }

    /** Topic names and ids from the latest metadata image. */
    static TopicIds topicIds(Controller controller) {
        return new TopicIds() {
            @Override
            public Optional<String> nameOf(Uuid topicId) {
                return controller.image().topics().values().stream().filter(t -> t.topicId().equals(topicId))
                        .map(t -> t.name()).findFirst();
            }

            @Override
            public Optional<Uuid> idOf(String topicName) {
                return controller.image().topic(topicName).map(t -> t.topicId());
            }
        };
    }
}
