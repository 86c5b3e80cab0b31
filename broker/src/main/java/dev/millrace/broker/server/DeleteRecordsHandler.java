package dev.millrace.broker.server;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.DeleteRecordsRequestData;
import org.apache.kafka.common.message.DeleteRecordsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DeleteRecordsRequest;
import org.apache.kafka.common.requests.DeleteRecordsResponse;

/**
 * DeleteRecords: moves each partition's log start offset up to the requested offset (-1 means the
 * high watermark), answering with the new low watermark. Readers below it get OFFSET_OUT_OF_RANGE
 * at once; whole segments below it are removed by the next log maintenance run. An offset above
 * the high watermark is OFFSET_OUT_OF_RANGE.
 *
 * <p>Thread-safe; called on request threads.
 */
final class DeleteRecordsHandler {

    private final PartitionManager partitions;

    DeleteRecordsHandler(PartitionManager partitions) {
        this.partitions = partitions;
    }

    DeleteRecordsResponse handle(DeleteRecordsRequest request) {
        DeleteRecordsResponseData response = new DeleteRecordsResponseData();
        for (DeleteRecordsRequestData.DeleteRecordsTopic topic : request.data().topics()) {
            DeleteRecordsResponseData.DeleteRecordsTopicResult topicResult =
                    new DeleteRecordsResponseData.DeleteRecordsTopicResult().setName(topic.name());
            for (DeleteRecordsRequestData.DeleteRecordsPartition p : topic.partitions()) {
                topicResult.partitions().add(delete(new TopicPartition(topic.name(), p.partitionIndex()), p.offset()));
            }
            response.topics().add(topicResult);
        }
        return new DeleteRecordsResponse(response);
    }

    private DeleteRecordsResponseData.DeleteRecordsPartitionResult delete(TopicPartition tp, long offset) {
        DeleteRecordsResponseData.DeleteRecordsPartitionResult out =
                new DeleteRecordsResponseData.DeleteRecordsPartitionResult().setPartitionIndex(tp.partition())
                        .setLowWatermark(-1);
        try {
            Partition partition = partitions.partition(tp).orElseThrow(() ->
                    new UnknownTopicOrPartitionException("This broker does not host " + tp));
            partition.checkLeader();
            long highWatermark = partition.highWatermark();
            long target = offset == DeleteRecordsRequest.HIGH_WATERMARK ? highWatermark : offset;
            if (target < 0 || target > highWatermark) {
                throw new OffsetOutOfRangeException("Cannot delete records of " + tp + " before offset " + offset
                        + ": it must lie between 0 and the high watermark " + highWatermark);
            }
            partition.log().maybeIncrementLogStartOffset(target);
            out.setLowWatermark(partition.log().logStartOffset());
        } catch (RuntimeException e) {
            out.setErrorCode(Errors.forException(e).code());
        }
        return out;
    }
}
