package dev.millrace.broker.share;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.message.ShareAcknowledgeRequestData;
import org.apache.kafka.common.message.ShareAcknowledgeResponseData;
import org.apache.kafka.common.message.ShareAcknowledgeResponseData.PartitionData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ShareAcknowledgeRequest;
import org.apache.kafka.common.requests.ShareAcknowledgeResponse;
import org.apache.kafka.common.requests.ShareRequestMetadata;

/**
 * ShareAcknowledge: acknowledgements outside a fetch, within an existing share session (a session
 * cannot be opened by ShareAcknowledge: epoch 0 is answered INVALID_SHARE_SESSION_EPOCH). With the
 * final epoch (-1), after the acknowledgements the session closes and every record the member
 * still holds is released: this is how a closing consumer hands back what it did not process.
 *
 * <p>Thread-safe; called on request threads.
 */
public final class ShareAcknowledgeHandler {

    private final ShareGroupConfig config;
    private final ShareTopics topics;
    private final SharePartitionManager partitions;
    private final ShareSessionCache sessions;
    private final Acknowledger acknowledger;

    ShareAcknowledgeHandler(ShareGroupConfig config, ShareTopics topics, SharePartitionManager partitions,
                            ShareSessionCache sessions) {
        this.config = config;
        this.topics = topics;
        this.partitions = partitions;
        this.sessions = sessions;
        this.acknowledger = new Acknowledger(partitions);
    }

    public ShareAcknowledgeResponse handle(ShareAcknowledgeRequest request) {
        ShareAcknowledgeRequestData data = request.data();
        String groupId = data.groupId();
        String memberId = data.memberId();
        int epoch = data.shareSessionEpoch();
        if (groupId == null || groupId.isEmpty() || memberId == null || memberId.isEmpty()) {
            return error(Errors.INVALID_REQUEST);
        }
        if (epoch == ShareRequestMetadata.INITIAL_EPOCH) {
            return error(Errors.INVALID_SHARE_SESSION_EPOCH);
        }
        ShareSessionCache.Result session = sessions.update(groupId, memberId, epoch, List.of(), List.of());
        if (session.error() != Errors.NONE) {
            return error(session.error());
        }
        LinkedHashMap<TopicIdPartition, PartitionData> out = new LinkedHashMap<>();
        for (ShareAcknowledgeRequestData.AcknowledgeTopic topic : data.topics()) {
            Optional<String> name = topics.nameOf(topic.topicId());
            for (ShareAcknowledgeRequestData.AcknowledgePartition p : topic.partitions()) {
                TopicIdPartition tip = new TopicIdPartition(topic.topicId(), p.partitionIndex(), name.orElse(null));
                Errors result = name.isEmpty() ? Errors.UNKNOWN_TOPIC_ID : acknowledger.acknowledge(groupId, memberId,
                        tip, Acknowledger.batches(p.acknowledgementBatches(),
                                b -> Acknowledger.batch(b.firstOffset(), b.lastOffset(), b.acknowledgeTypes())));
                out.put(tip, new PartitionData().setPartitionIndex(p.partitionIndex()).setErrorCode(result.code()));
            }
        }
        if (epoch == ShareRequestMetadata.FINAL_EPOCH) {
            session.session().partitions().forEach(tip -> partitions.get(groupId, tip.topicPartition())
                    .ifPresent(p -> p.releaseMember(memberId)));
            sessions.close(groupId, memberId);
        }
        // a partition whose leadership moved names its new leader (KIP-951), as ShareFetch does
        Map<Integer, Node> leaders = new LinkedHashMap<>();
        out.forEach((tip, pd) -> {
            if (ShareFetchHandler.movedError(pd.errorCode())) {
                topics.currentLeader(tip.topicPartition()).ifPresent(leader -> {
                    pd.setCurrentLeader(new ShareAcknowledgeResponseData.LeaderIdAndEpoch().setLeaderId(leader.id())
                            .setLeaderEpoch(leader.epoch()));
                    leaders.put(leader.id(), new Node(leader.id(), leader.host(), leader.port()));
                });
            }
        });
        return ShareAcknowledgeResponse.of(Errors.NONE, 0, out, new ArrayList<>(leaders.values()), lockTimeoutMs());
    }

    private ShareAcknowledgeResponse error(Errors error) {
        return ShareAcknowledgeResponse.of(error, 0, new LinkedHashMap<>(), List.of(), lockTimeoutMs());
    }

    private int lockTimeoutMs() {
        return (int) Math.min(Integer.MAX_VALUE, config.recordLockDurationMs());
    }
}
