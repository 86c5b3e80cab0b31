package dev.millrace.broker.server;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.log.AbortedTxn;
import dev.millrace.broker.log.FetchDataInfo;
import dev.millrace.protocol.selector.MemberSelector;
import dev.millrace.protocol.selector.Selector;
import dev.millrace.protocol.selector.SelectorSyntaxException;

/**
 * Fetch for consumers: reads each requested partition from its fetch offset, within the partition's
 * and the response's byte limits, and answers at once when at least {@code min.bytes} are there or
 * the request does not wait; otherwise parks a {@link DelayedFetch} in the {@link FetchPurgatory}.
 *
 * <p>Records go out as slices of the segment files, written to the socket with zero-copy. The
 * first partition with data gets its first batch whole even above the limits (KIP-74), so a batch
 * larger than the limits never stalls a consumer. Fetch sessions (KIP-227) are not kept: every
 * response carries session id 0, which tells the client to send full requests.
 *
 * <p>Only the leader serves fetches; another broker answers NOT_LEADER_OR_FOLLOWER with the leader it knows of
 * (CurrentLeader). A {@code currentLeaderEpoch} in the request is checked: FENCED_LEADER_EPOCH if older than this
 * broker's, UNKNOWN_LEADER_EPOCH if newer.
 *
 * <p>Followers (a replica id of 0 or more) read up to the log end, not the high watermark; their fetch offset is
 * their log end offset, which the leader records ({@link Partition}: ISR and high watermark); the answer carries
 * the high watermark and log start. A follower's fetch offset outside the leader's log answers OFFSET_OUT_OF_RANGE
 * with the leader's log start, so that the follower truncates or starts over.
 *
 * <p>Isolation: consumers read only below the high watermark; read_uncommitted reads up to it. read_committed reads only whole
 * batches below the last stable offset (nothing of an open transaction) and gets the aborted
 * transactions that overlap the returned range, so the client drops their batches.
 *
 * <p>Selective fetches: a Fetch whose RackId carries a JMS selector ({@link MemberSelector}, as the JMS provider's
 * topic subscribers send) gets its records filtered in the broker ({@link SelectiveRecords}): what the selector does
 * not match does not cross the network, and offsets still advance over it. An invalid selector answers every
 * partition with INVALID_REQUEST.
 *
 * <p>Thread-safe; called on request threads.
 */
final class FetchHandler {

    private static final Logger log = LoggerFactory.getLogger(FetchHandler.class);

    /** One read of every requested partition: the response and how many record bytes it holds. */
    record Read(FetchResponse response, int bytes, boolean hasError) {
    }

    private final PartitionManager partitions;
    private final FetchPurgatory purgatory;
    private static final int MAX_CACHED_SELECTORS = 1000;
    private final Map<String, Selector> selectors = new ConcurrentHashMap<>();

    FetchHandler(PartitionManager partitions, FetchPurgatory purgatory) {
        this.partitions = partitions;
        this.purgatory = purgatory;
    }

    CompletableFuture<FetchResponse> handle(FetchRequest request) {
        FetchRequestData data = request.data();
        int replicaId = request.replicaId();
        Read first = read(data, replicaId);
        if (data.maxWaitMs() <= 0 || first.bytes() >= data.minBytes() || first.hasError()) {
            return CompletableFuture.completedFuture(first.response());
        }
        CompletableFuture<FetchResponse> result = new CompletableFuture<>();
        List<TopicPartition> watched = new ArrayList<>();
        for (FetchRequestData.FetchTopic topic : data.topics()) {
            for (FetchRequestData.FetchPartition p : topic.partitions()) {
                watched.add(new TopicPartition(topic.topic(), p.partition()));
            }
        }
        purgatory.watch(new DelayedFetch(data.maxWaitMs(), data.minBytes(), () -> read(data, replicaId), result), watched);
        return result;
    }

    /**
     * The selector a fetch's RackId carries ({@link MemberSelector}); null for none. Compiled selectors are cached
     * by text (at most {@value #MAX_CACHED_SELECTORS}, then the cache starts over).
     *
     * @throws SelectorSyntaxException for an invalid one
     */
    private Selector selectorOf(String rackId) {
        if (!MemberSelector.carriesSelector(rackId)) {
            return null;
        }
        Selector cached = selectors.get(rackId);
        if (cached != null) {
            return cached;
        }
        Selector compiled = MemberSelector.compile(rackId);
        if (compiled == null) {
            return null;
        }
        if (selectors.size() >= MAX_CACHED_SELECTORS) {
            selectors.clear();
        }
        selectors.put(rackId, compiled);
        return compiled;
    }

    private Read read(FetchRequestData data, int replicaId) {
        FetchResponseData response = new FetchResponseData().setSessionId(0);
        Selector selector;
        try {
            selector = selectorOf(data.rackId());
        } catch (SelectorSyntaxException e) {
            log.debug("Fetch with an invalid selector in its rack id: {}", e.getMessage());
            return invalid(data);
        }
        int remaining = data.maxBytes();
        int total = 0;
        boolean hasError = false;
        for (FetchRequestData.FetchTopic topic : data.topics()) {
            FetchResponseData.FetchableTopicResponse topicResponse = new FetchResponseData.FetchableTopicResponse()
                    .setTopic(topic.topic()).setTopicId(topic.topicId());
            for (FetchRequestData.FetchPartition p : topic.partitions()) {
                TopicPartition tp = new TopicPartition(topic.topic(), p.partition());
                FetchResponseData.PartitionData out = readPartition(tp, p, Math.min(remaining, p.partitionMaxBytes()),
                        total == 0, data.isolationLevel() == IsolationLevel.READ_COMMITTED.id(), replicaId);
                if (selector != null && out.records() != null && out.records().sizeInBytes() > 0) {
                    out.setRecords(new SelectiveRecords(selector).filter((Records) out.records()));
                }
                int bytes = out.records() == null ? 0 : out.records().sizeInBytes();
                total += bytes;
                remaining = Math.max(0, remaining - bytes);
                hasError |= out.errorCode() != Errors.NONE.code();
                topicResponse.partitions().add(out);
            }
            response.responses().add(topicResponse);
        }
        return new Read(FetchResponse.of(response), total, hasError);
    }

    /** Every partition answered with INVALID_REQUEST: the fetch's selector does not parse. */
    private static Read invalid(FetchRequestData data) {
        FetchResponseData response = new FetchResponseData().setSessionId(0);
        for (FetchRequestData.FetchTopic topic : data.topics()) {
            FetchResponseData.FetchableTopicResponse topicResponse = new FetchResponseData.FetchableTopicResponse()
                    .setTopic(topic.topic()).setTopicId(topic.topicId());
            for (FetchRequestData.FetchPartition p : topic.partitions()) {
                topicResponse.partitions().add(new FetchResponseData.PartitionData().setPartitionIndex(p.partition())
                        .setErrorCode(Errors.INVALID_REQUEST.code()).setHighWatermark(-1).setLastStableOffset(-1)
                        .setLogStartOffset(-1).setRecords(MemoryRecords.EMPTY));
            }
            response.responses().add(topicResponse);
        }
        return new Read(FetchResponse.of(response), 0, true);
    }

    private FetchResponseData.PartitionData readPartition(TopicPartition tp, FetchRequestData.FetchPartition p,
                                                          int maxBytes, boolean minOneBatch, boolean readCommitted,
                                                          int replicaId) {
        FetchResponseData.PartitionData out = new FetchResponseData.PartitionData().setPartitionIndex(p.partition())
                .setRecords(MemoryRecords.EMPTY);
        Partition partition = null;
        try {
            partition = partitions.partition(tp).orElseThrow(() ->
                    new UnknownTopicOrPartitionException("This broker does not host " + tp));
            partition.checkLeaderEpoch(p.currentLeaderEpoch());
            partition.checkLeader();
            if (replicaId >= 0) {
                readForFollower(partition, p, maxBytes, minOneBatch, replicaId, out);
            } else {
                readForConsumer(partition, p, maxBytes, minOneBatch, readCommitted, out);
            }
        } catch (RuntimeException e) {
            Errors error = Errors.forException(e);
            if (error == Errors.UNKNOWN_SERVER_ERROR) {
                log.error("Fetch from {} failed", tp, e);
            }
            out.setErrorCode(error.code()).setHighWatermark(-1).setLastStableOffset(-1).setLogStartOffset(-1)
                    .setRecords(MemoryRecords.EMPTY);
            if (partition != null && e instanceof OffsetOutOfRangeException) {
                out.setLogStartOffset(partition.logStartOffset());
            }
            if (partition != null && e instanceof NotLeaderOrFollowerException && partition.leaderId() >= 0) {
                out.setCurrentLeader(new FetchResponseData.LeaderIdAndEpoch().setLeaderId(partition.leaderId())
                        .setLeaderEpoch(partition.leaderEpoch()));
            }
        }
        return out;
    }

    /** A follower reads up to the log end; its fetch offset is its log end offset. */
    private static void readForFollower(Partition partition, FetchRequestData.FetchPartition p, int maxBytes,
                                        boolean minOneBatch, int replicaId, FetchResponseData.PartitionData out) {
        long logEnd = partition.logEndOffset();
        long logStart = partition.logStartOffset();
        if (p.fetchOffset() > logEnd || p.fetchOffset() < logStart) {
            throw new OffsetOutOfRangeException("Replica " + replicaId + " fetches " + partition.topicPartition()
                    + " at " + p.fetchOffset() + ", outside the leader's log [" + logStart + ", " + logEnd + "]");
        }
        partition.onFollowerFetch(replicaId, p.fetchOffset(), logEnd);
        FetchDataInfo info = partition.log().read(p.fetchOffset(), maxBytes, minOneBatch);
        out.setRecords(info.records()).setHighWatermark(partition.highWatermark())
                .setLastStableOffset(partition.lastStableOffset()).setLogStartOffset(partition.logStartOffset());
    }

    /** A consumer reads below the high watermark (read_committed: below the last stable offset). */
    private static void readForConsumer(Partition partition, FetchRequestData.FetchPartition p, int maxBytes,
                                        boolean minOneBatch, boolean readCommitted,
                                        FetchResponseData.PartitionData out) {
        TopicPartition tp = partition.topicPartition();
        boolean uncapped = partition.highWatermarkIsLogEnd();
        long highWatermark = partition.highWatermark();
        out.setHighWatermark(highWatermark).setLastStableOffset(partition.lastStableOffset())
                .setLogStartOffset(partition.log().logStartOffset());
        if (p.fetchOffset() > highWatermark && p.fetchOffset() > partition.logEndOffset()) {
            throw new OffsetOutOfRangeException("Fetch offset " + p.fetchOffset() + " of " + tp
                    + " is above the log end " + partition.logEndOffset());
        }
        if (p.fetchOffset() >= highWatermark) {
            return; // nothing committed to read yet
        }
        if (readCommitted) {
            long lastStable = partition.lastStableOffset();
            FetchDataInfo info = partition.log().read(p.fetchOffset(), maxBytes, minOneBatch, lastStable);
            out.setRecords(info.records()).setLastStableOffset(lastStable);
            if (info.records().sizeInBytes() > 0) {
                List<FetchResponseData.AbortedTransaction> aborted = new ArrayList<>();
                for (AbortedTxn txn : partition.log().collectAbortedTransactions(p.fetchOffset(), lastStable)) {
                    aborted.add(new FetchResponseData.AbortedTransaction().setProducerId(txn.producerId())
                            .setFirstOffset(txn.firstOffset()));
                }
                out.setAbortedTransactions(aborted);
            }
        } else if (uncapped) {
            out.setRecords(partition.log().read(p.fetchOffset(), maxBytes, minOneBatch).records());
        } else {
            out.setRecords(partition.log().read(p.fetchOffset(), maxBytes, minOneBatch, highWatermark).records());
        }
    }
}
