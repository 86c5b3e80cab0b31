package dev.millrace.broker.server;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownServerException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData.OffsetForLeaderPartition;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData.OffsetForLeaderTopic;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData.EpochEndOffset;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochResponse;

import dev.millrace.broker.replica.EpochEnd;
import dev.millrace.broker.replica.EpochLog;

/**
 * OffsetsForLeaderEpoch (KIP-101, KIP-279, KIP-320): per partition, the largest leader epoch at or below the one
 * asked for that this log has, and where it ends (the start of the next epoch, or the log end for the latest). Only
 * the leader answers (others: NOT_LEADER_OR_FOLLOWER), for followers about to truncate and for consumers checking
 * their position after a leader change; a {@code currentLeaderEpoch} is checked as in Fetch.
 *
 * <p>Thread-safe; called on request threads.
 */
final class OffsetsForLeaderEpochHandler {

    private final PartitionManager partitions;

    OffsetsForLeaderEpochHandler(PartitionManager partitions) {
        this.partitions = partitions;
    }

    OffsetsForLeaderEpochResponse handle(OffsetsForLeaderEpochRequest request) {
        OffsetForLeaderEpochResponseData response = new OffsetForLeaderEpochResponseData();
        for (OffsetForLeaderTopic topic : request.data().topics()) {
            OffsetForLeaderTopicResult result = new OffsetForLeaderTopicResult().setTopic(topic.topic());
            for (OffsetForLeaderPartition p : topic.partitions()) {
                result.partitions().add(lookup(new TopicPartition(topic.topic(), p.partition()), p));
            }
            response.topics().add(result);
        }
        return new OffsetsForLeaderEpochResponse(response);
    }

    private EpochEndOffset lookup(TopicPartition tp, OffsetForLeaderPartition p) {
        EpochEndOffset out = new EpochEndOffset().setPartition(tp.partition())
                .setLeaderEpoch(EpochEnd.UNDEFINED_EPOCH).setEndOffset(EpochEnd.UNDEFINED_OFFSET);
        try {
            Partition partition = partitions.partition(tp).orElseThrow(() ->
                    new UnknownTopicOrPartitionException("This broker does not host " + tp));
            partition.checkLeaderEpoch(p.currentLeaderEpoch());
            partition.checkLeader();
            EpochLog epochs = partition.epochs().orElseThrow(() -> new UnknownServerException(
                    "The log of " + tp + " keeps no leader epochs on this broker"));
            EpochEnd end = epochs.endOffsetForEpoch(p.leaderEpoch());
            out.setLeaderEpoch(end.epoch()).setEndOffset(end.endOffset());
        } catch (RuntimeException e) {
            out.setErrorCode(Errors.forException(e).code());
        }
        return out;
    }
}
