package dev.millrace.broker.share;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

/** Names one share-partition: a share group's view of one topic partition. */
public record SharePartitionKey(String groupId, Uuid topicId, TopicPartition topicPartition) {

    @Override
    public String toString() {
        return groupId + ":" + topicPartition;
    }
}
