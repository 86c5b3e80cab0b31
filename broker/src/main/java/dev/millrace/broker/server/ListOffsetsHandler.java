package dev.millrace.broker.server;

import java.util.Optional;

import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.FileRecords.TimestampAndOffset;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;

/**
 * ListOffsets: the earliest offset (log start), the latest (high watermark, or the last stable
 * offset for read_committed, the same until transactions exist), or the first offset whose record
 * timestamp is at or after a given time (-1 and no timestamp when there is none). The max-timestamp
 * and tiered-storage lookups answer UNSUPPORTED_VERSION per partition. Only the leader answers (others:
 * NOT_LEADER_OR_FOLLOWER); a {@code currentLeaderEpoch} in the request is checked as in Fetch.
 *
 * <p>Thread-safe; called on request threads.
 */
final class ListOffsetsHandler {

    /** The first version whose response carries the leader epoch. */
    static final short LEADER_EPOCH_VERSION = 4;

    private final PartitionManager partitions;

    ListOffsetsHandler(PartitionManager partitions) {
        this.partitions = partitions;
    }

    ListOffsetsResponse handle(ListOffsetsRequest request) {
        ListOffsetsRequestData data = request.data();
        boolean readCommitted = data.isolationLevel() == IsolationLevel.READ_COMMITTED.id();
        ListOffsetsResponseData response = new ListOffsetsResponseData();
        for (ListOffsetsRequestData.ListOffsetsTopic topic : data.topics()) {
            ListOffsetsResponseData.ListOffsetsTopicResponse topicResponse =
                    new ListOffsetsResponseData.ListOffsetsTopicResponse().setName(topic.name());
            for (ListOffsetsRequestData.ListOffsetsPartition p : topic.partitions()) {
                topicResponse.partitions().add(lookup(new TopicPartition(topic.name(), p.partitionIndex()),
                        p.timestamp(), readCommitted, p.currentLeaderEpoch(), request.version()));
            }
            response.topics().add(topicResponse);
        }
        return new ListOffsetsResponse(response);
    }

    private ListOffsetsResponseData.ListOffsetsPartitionResponse lookup(TopicPartition tp, long timestamp,
                                                                       boolean readCommitted,
                                                                       int currentLeaderEpoch, short version) {
        ListOffsetsResponseData.ListOffsetsPartitionResponse out = new ListOffsetsResponseData.ListOffsetsPartitionResponse()
                .setPartitionIndex(tp.partition()).setTimestamp(-1).setOffset(-1);
        try {
            Partition partition = partitions.partition(tp).orElseThrow(() ->
                    new UnknownTopicOrPartitionException("This broker does not host " + tp));
            partition.checkLeaderEpoch(currentLeaderEpoch);
            partition.checkLeader();
            if (version >= LEADER_EPOCH_VERSION) {
                out.setLeaderEpoch(partition.leaderEpoch()); // not in v1..3 responses, which could not be written
            }
            if (timestamp == ListOffsetsRequest.EARLIEST_TIMESTAMP || timestamp == ListOffsetsRequest.EARLIEST_LOCAL_TIMESTAMP) {
                out.setOffset(partition.log().logStartOffset());
            } else if (timestamp == ListOffsetsRequest.LATEST_TIMESTAMP) {
                out.setOffset(readCommitted ? partition.lastStableOffset() : partition.highWatermark());
            } else if (timestamp < 0) {
                throw new UnsupportedVersionException("ListOffsets timestamp " + timestamp
                        + " (max timestamp or tiered storage) is not supported");
            } else {
                Optional<TimestampAndOffset> found = partition.log().offsetForTimestamp(timestamp);
                found.filter(f -> f.offset < partition.highWatermark()).ifPresent(f ->
                        out.setOffset(f.offset).setTimestamp(f.timestamp));
            }
        } catch (RuntimeException e) {
            out.setErrorCode(Errors.forException(e).code());
        }
        return out;
    }
}
