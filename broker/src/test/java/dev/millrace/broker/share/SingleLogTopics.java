package dev.millrace.broker.share;

import java.util.Optional;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.record.internal.MemoryRecords;

/**
 * {@link ShareTopics} with one topic of one partition, {@code tp}, held locally in {@code log}: appends to it land in
 * the log, an append anywhere else fails the test. Topic ids are unknown.
 */
record SingleLogTopics(TopicPartition tp, InMemoryShareLog log) implements ShareTopics {

    @Override
    public Optional<Uuid> idOf(String topic) {
        return Optional.empty();
    }

    @Override
    public Optional<String> nameOf(Uuid topicId) {
        return Optional.empty();
    }

    @Override
    public int partitionCount(String topic) {
        return topic.equals(tp.topic()) ? 1 : 0;
    }

    @Override
    public Optional<ShareLog> log(TopicPartition partition) {
        return partition.equals(tp) ? Optional.of(log) : Optional.empty();
    }

    @Override
    public void append(TopicPartition partition, MemoryRecords records) {
        if (!partition.equals(tp)) {
            throw new AssertionError("Unexpected append to " + partition + "; only " + tp + " exists");
        }
        log.appendRecords(records);
    }
}
