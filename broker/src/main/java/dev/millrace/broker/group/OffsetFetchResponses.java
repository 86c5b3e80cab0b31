package dev.millrace.broker.group;

import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.message.OffsetFetchRequestData.OffsetFetchRequestGroup;
import org.apache.kafka.common.message.OffsetFetchRequestData.OffsetFetchRequestTopics;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.OffsetFetchResponseData.OffsetFetchResponseGroup;
import org.apache.kafka.common.message.OffsetFetchResponseData.OffsetFetchResponsePartition;
import org.apache.kafka.common.message.OffsetFetchResponseData.OffsetFetchResponsePartitions;
import org.apache.kafka.common.message.OffsetFetchResponseData.OffsetFetchResponseTopic;
import org.apache.kafka.common.message.OffsetFetchResponseData.OffsetFetchResponseTopics;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.OffsetFetchResponse;

/**
 * Builds the OffsetFetch response body in the form its version expects: versions 8 and later list
 * groups; earlier ones answer for one group with top-level topics, a top-level error code from
 * version 2, and, in version 1, a group error repeated on every requested partition. Stateless.
 */
final class OffsetFetchResponses {

    private OffsetFetchResponses() {
    }

    static OffsetFetchResponse build(List<OffsetFetchRequestGroup> requested, List<OffsetFetchResponseGroup> groups,
                                     short apiVersion) {
        if (apiVersion >= OffsetFetchRequest.BATCH_MIN_VERSION) {
            return new OffsetFetchResponse(new OffsetFetchResponseData().setGroups(groups), apiVersion);
        }
        OffsetFetchResponseGroup group = groups.get(0);
        Errors error = Errors.forCode(group.errorCode());
        OffsetFetchResponseData data = new OffsetFetchResponseData();
        if (error != Errors.NONE && apiVersion < 2) {
            data.setTopics(partitionErrors(requested.get(0), error));
        } else {
            data.setTopics(singleGroupTopics(group.topics())).setErrorCode(group.errorCode());
        }
        return new OffsetFetchResponse(data, apiVersion);
    }

    private static List<OffsetFetchResponseTopic> singleGroupTopics(List<OffsetFetchResponseTopics> topics) {
        List<OffsetFetchResponseTopic> out = new ArrayList<>(topics.size());
        for (OffsetFetchResponseTopics topic : topics) {
            List<OffsetFetchResponsePartition> partitions = new ArrayList<>(topic.partitions().size());
            for (OffsetFetchResponsePartitions p : topic.partitions()) {
                partitions.add(new OffsetFetchResponsePartition()
                        .setPartitionIndex(p.partitionIndex())
                        .setCommittedOffset(p.committedOffset())
                        .setCommittedLeaderEpoch(p.committedLeaderEpoch())
                        .setMetadata(p.metadata())
                        .setErrorCode(p.errorCode()));
            }
            out.add(new OffsetFetchResponseTopic().setName(topic.name()).setPartitions(partitions));
        }
        return out;
    }

    private static List<OffsetFetchResponseTopic> partitionErrors(OffsetFetchRequestGroup requested, Errors error) {
        List<OffsetFetchResponseTopic> out = new ArrayList<>();
        if (requested.topics() == null) {
            return out;
        }
        for (OffsetFetchRequestTopics topic : requested.topics()) {
            List<OffsetFetchResponsePartition> partitions = new ArrayList<>();
            for (int index : topic.partitionIndexes()) {
                partitions.add(new OffsetFetchResponsePartition()
                        .setPartitionIndex(index)
                        .setCommittedOffset(OffsetFetchResponse.INVALID_OFFSET)
                        .setMetadata(OffsetFetchResponse.NO_METADATA)
                        .setErrorCode(error.code()));
            }
            out.add(new OffsetFetchResponseTopic().setName(topic.name()).setPartitions(partitions));
        }
        return out;
    }
}
