package dev.millrace.broker.share;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ShareFetchRequestData;
import org.apache.kafka.common.message.ShareFetchResponseData.AcquiredRecords;
import org.apache.kafka.common.message.ShareFetchResponseData.LeaderIdAndEpoch;
import org.apache.kafka.common.message.ShareFetchResponseData.PartitionData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.apache.kafka.common.requests.ShareFetchResponse;
import org.apache.kafka.common.requests.ShareRequestMetadata;

/**
 * ShareFetch: updates the member's share session, applies the piggy-backed acknowledgements, then
 * acquires records from the session's partitions (up to {@code MaxRecords} in all, {@code MaxBytes}
 * of batches) and answers with the batches and the acquired offset ranges. When nothing can be
 * acquired and the request may wait, it parks in the {@link ShareFetchPurgatory} until records
 * become acquirable or {@code MaxWaitMs} passes.
 *
 * <p>Partitions are served round-robin across requests, so that a full {@code MaxRecords} from the
 * first partition does not starve the others. A final-epoch request (-1) only acknowledges: then
 * the session closes and every record the member still holds is released. {@code IsRenewAck}
 * requests (v2) only acknowledge (renew) too. A fetch from a member id that is not a current member
 * of the group (it never joined, timed out or left) is answered UNKNOWN_MEMBER_ID, except the final
 * one, which only acknowledges and closes the session. A member with a JMS selector
 * ({@link dev.millrace.protocol.selector.MemberSelector}) acquires only records it matches, also when its group is
 * coordinated on another broker ({@link MemberViews}): until that coordinator has told who the member is, the fetch
 * acknowledges but acquires nothing (it waits for the answer within its {@code MaxWaitMs}, else comes back empty),
 * and a member the coordinator does not know gets UNKNOWN_MEMBER_ID. The response names only partitions with records,
 * an acknowledgement result or an error.
 *
 * <p>Thread-safe; called on request threads.
 */
public final class ShareFetchHandler {

    private static final int DEFAULT_MAX_RECORDS = 500;

    private final ShareGroupConfig config;
    private final ShareTopics topics;
    private final SharePartitionManager partitions;
    private final ShareSessionCache sessions;
    private final ShareFetchPurgatory purgatory;
    /** How many closed connections {@link #recentlyClosed} remembers. */
    static final int CLOSED_REMEMBERED = 4096;
    /** The fetches parked now, by the connection they came on; an entry goes when its connection closes. */
    private final Map<String, Set<DelayedShareFetch>> parked = new ConcurrentHashMap<>();
    /**
     * The last {@value #CLOSED_REMEMBERED} connections reported closed: a fetch whose request was still being handled
     * when its connection closed parks after the close was reported, and is abandoned as it parks. (A close is noted
     * here before the parked fetches are looked up, and a fetch parks before it looks here: one of the two sees the
     * other.) Connection ids are Netty's short channel ids: should a later connection get one still remembered here,
     * a fetch it parks is answered empty, and the client fetches again.
     */
    private final Map<String, Boolean> recentlyClosed = Collections.synchronizedMap(
            new LinkedHashMap<>() {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
                    return size() > CLOSED_REMEMBERED;
                }
            });
    private final LongAdder abandoned = new LongAdder();
    private final Acknowledger acknowledger;
    private final AtomicInteger rotation = new AtomicInteger();
    private final MemberViews members;
    private final StateSaves saves;

    /**
     * @param members  who may acquire, and through which selector
     * @param saves    where the partitions' state changes are saved (the partitions' listener sends them there)
     */
    ShareFetchHandler(ShareGroupConfig config, ShareTopics topics, SharePartitionManager partitions,
                      ShareSessionCache sessions, ShareFetchPurgatory purgatory, MemberViews members,
                      StateSaves saves) {
        this.saves = saves;
        this.members = members;
        this.config = config;
        this.topics = topics;
        this.partitions = partitions;
        this.sessions = sessions;
        this.purgatory = purgatory;
        this.acknowledger = new Acknowledger(partitions);
    }

    /** {@link #handle(ShareFetchRequest, String)} for a request whose connection is never reported closed. */
    public CompletableFuture<ShareFetchResponse> handle(ShareFetchRequest request) {
        return handle(request, null);
    }

    /**
     * The connection {@code connectionId} closed: its parked fetches acquire nothing more ({@link
     * DelayedShareFetch#abandon}). Called on the connection's network thread; does not block.
     */
    public void connectionClosed(String connectionId) {
        recentlyClosed.put(connectionId, Boolean.TRUE);
        Set<DelayedShareFetch> parkedThere = parked.remove(connectionId);
        if (parkedThere != null) {
            for (DelayedShareFetch fetch : parkedThere) {
                fetch.abandon();
                abandoned.increment();
            }
        }
    }

    /** How many parked fetches were abandoned because their connection closed (since start). */
    public long abandonedFetches() {
        return abandoned.sum();
    }

    /**
     * Answers a ShareFetch that came on connection {@code connectionId} (null: not tracked), which a parked fetch
     * needs so that it acquires nothing once that connection closes.
     */
    public CompletableFuture<ShareFetchResponse> handle(ShareFetchRequest request, String connectionId) {
        // one state save per changed partition for the acknowledgements and the acquisition together, written
        // before the response is built; a fetch that parks saves its acknowledgements first, and each later attempt
        // saves its own acquisition (acquireSaved), off this batch
        Step step;
        try (StateSaves.Batch batch = saves.open()) {
            step = handle(request, batch, connectionId);
        }
        return step.run();
    }

    /** What a ShareFetch does once its acknowledgements are saved: answer now, or park. */
    @FunctionalInterface
    private interface Step {
        CompletableFuture<ShareFetchResponse> run();
    }

    private Step handle(ShareFetchRequest request, StateSaves.Batch batch, String connectionId) {
        ShareFetchRequestData data = request.data();
        String groupId = data.groupId();
        String memberId = data.memberId();
        int epoch = data.shareSessionEpoch();
        if (groupId == null || groupId.isEmpty() || memberId == null || memberId.isEmpty()) {
            return done(topLevelError(Errors.INVALID_REQUEST));
        }
        if (epoch != ShareRequestMetadata.FINAL_EPOCH && notMember(groupId, memberId)) {
            // a member removed from the group (session timeout, left) must rejoin before it fetches
            return done(topLevelError(Errors.UNKNOWN_MEMBER_ID));
        }
        Map<TopicIdPartition, PartitionData> out = new LinkedHashMap<>();
        List<TopicIdPartition> added = new ArrayList<>();
        Map<TopicIdPartition, List<AcknowledgementBatch>> acks = new LinkedHashMap<>();
        for (ShareFetchRequestData.FetchTopic topic : data.topics()) {
            Optional<String> name = topics.nameOf(topic.topicId());
            for (ShareFetchRequestData.FetchPartition p : topic.partitions()) {
                TopicIdPartition tip = new TopicIdPartition(topic.topicId(), p.partitionIndex(), name.orElse(null));
                if (name.isEmpty()) {
                    out.put(tip, partitionData(tip).setErrorCode(Errors.UNKNOWN_TOPIC_ID.code()));
                    continue;
                }
                added.add(tip);
                if (!p.acknowledgementBatches().isEmpty()) {
                    acks.put(tip, Acknowledger.batches(p.acknowledgementBatches(),
                            b -> Acknowledger.batch(b.firstOffset(), b.lastOffset(), b.acknowledgeTypes())));
                }
            }
        }
        if (epoch == ShareRequestMetadata.INITIAL_EPOCH && !acks.isEmpty()) {
            return done(topLevelError(Errors.INVALID_REQUEST));
        }
        List<TopicIdPartition> forgotten = new ArrayList<>();
        for (ShareFetchRequestData.ForgottenTopic topic : data.forgottenTopicsData()) {
            String name = topics.nameOf(topic.topicId()).orElse(null);
            topic.partitions().forEach(p -> forgotten.add(new TopicIdPartition(topic.topicId(), p, name)));
        }
        ShareSessionCache.Result session = sessions.update(groupId, memberId, epoch, added, forgotten);
        if (session.error() != Errors.NONE) {
            return done(topLevelError(session.error()));
        }
        acks.forEach((tip, batches) -> out.computeIfAbsent(tip, this::partitionData)
                .setAcknowledgeErrorCode(acknowledger.acknowledge(groupId, memberId, tip, batches).code()));
        if (epoch == ShareRequestMetadata.FINAL_EPOCH) {
            session.session().partitions().forEach(tip -> partitions.get(groupId, tip.topicPartition())
                    .ifPresent(p -> p.releaseMember(memberId)));
            sessions.close(groupId, memberId);
            members.forget(groupId, memberId);
            return done(response(saved(batch, out, acks.keySet())));
        }
        if (data.isRenewAck()) {
            return done(response(saved(batch, out, acks.keySet())));
        }
        List<TopicIdPartition> fetchable = session.session().partitions();
        int maxRecords = data.maxRecords() > 0 ? data.maxRecords() : DEFAULT_MAX_RECORDS;
        Map<TopicIdPartition, PartitionData> first = saved(batch, acquire(groupId, memberId, fetchable, maxRecords,
                data.maxBytes(), out), acks.keySet());
        if (hasRecordsOrErrors(first) || data.maxWaitMs() <= 0 || fetchable.isEmpty()) {
            return done(response(first));
        }
        // nothing acquired: the acknowledgement results (saved with the batch above) are what each attempt starts from
        return () -> park(groupId, memberId, data, fetchable, maxRecords, first, connectionId);
    }

    /** Parks a fetch that found nothing to acquire; called with no batch open (each attempt saves its own). */
    private CompletableFuture<ShareFetchResponse> park(String groupId, String memberId, ShareFetchRequestData data,
                                                       List<TopicIdPartition> fetchable, int maxRecords,
                                                       Map<TopicIdPartition, PartitionData> out,
                                                       String connectionId) {
        CompletableFuture<ShareFetchResponse> result = new CompletableFuture<>();
        // a member that left while its fetch was parked acquires nothing more: what it would take stays locked
        // to no one until the lock expires
        DelayedShareFetch delayed = new DelayedShareFetch(data.maxWaitMs(), () -> {
            if (notMember(groupId, memberId)) {
                return Optional.of(topLevelError(Errors.UNKNOWN_MEMBER_ID));
            }
            Map<TopicIdPartition, PartitionData> attempt = acquireSaved(groupId, memberId, fetchable, maxRecords,
                    data.maxBytes(), out);
            return hasRecordsOrErrors(attempt) ? Optional.of(response(attempt)) : Optional.empty();
        }, () -> notMember(groupId, memberId) ? topLevelError(Errors.UNKNOWN_MEMBER_ID)
                : response(acquireSaved(groupId, memberId, fetchable, maxRecords, data.maxBytes(), out)),
                () -> response(out), result);
        if (connectionId != null) {
            Set<DelayedShareFetch> parkedThere = parked.computeIfAbsent(connectionId,
                    k -> ConcurrentHashMap.newKeySet());
            parkedThere.add(delayed);
            result.whenComplete((r, e) -> parkedThere.remove(delayed));
            if (recentlyClosed.containsKey(connectionId) && parked.remove(connectionId, parkedThere)) {
                delayed.abandon(); // its connection closed while this request was being handled
                abandoned.increment();
            }
        }
        List<TopicPartition> watched = fetchable.stream().map(TopicIdPartition::topicPartition).toList();
        // a member still being looked up at its group's coordinator: try again once the answer is in (taken before
        // watching, whose first try may come too early for it)
        Optional<CompletableFuture<Void>> lookup = members.whenKnown(groupId, memberId);
        purgatory.watch(delayed, watched);
        lookup.ifPresent(known -> known.thenRun(delayed::tryComplete));
        return result;
    }

    /** {@link #acquire} with its state changes saved before it returns (a parked fetch's attempt). */
    private Map<TopicIdPartition, PartitionData> acquireSaved(String groupId, String memberId,
                                                              List<TopicIdPartition> fetchable, int maxRecords,
                                                              int maxBytes, Map<TopicIdPartition, PartitionData> base) {
        try (StateSaves.Batch batch = saves.open()) {
            return saved(batch, acquire(groupId, memberId, fetchable, maxRecords, maxBytes, base), java.util.Set.of());
        }
    }

    /**
     * Saves what {@code batch} holds, then answers each partition whose save failed with that failure instead of its
     * records (its acquisition was not saved, so it is not handed out: the records stay locked to this member until
     * the lock expires, counted as delivered, as after a lost response) and, if it is in {@code acknowledged}, its
     * acknowledgements with it too (not saved: not applied, as far as the client can tell). A share-partition a
     * newer leader took over (FENCED_LEADER_EPOCH) was closed by the store; the next fetch finds out who leads it.
     */
    private Map<TopicIdPartition, PartitionData> saved(StateSaves.Batch batch,
                                                       Map<TopicIdPartition, PartitionData> partitionData,
                                                       java.util.Set<TopicIdPartition> acknowledged) {
        Map<SharePartitionKey, RuntimeException> failures = batch.flushFailures();
        failures.forEach((key, failure) -> {
            Errors error = Errors.forException(failure);
            TopicIdPartition tip = new TopicIdPartition(key.topicId(), key.topicPartition());
            PartitionData pd = partitionData.computeIfAbsent(tip, this::partitionData);
            pd.setErrorCode(error.code()).setRecords(MemoryRecords.EMPTY).setAcquiredRecords(new ArrayList<>());
            if (acknowledged.contains(tip)) {
                pd.setAcknowledgeErrorCode(error.code());
            }
        });
        return partitionData;
    }

    /** Acquires from {@code fetchable} into a copy of {@code base} (the acknowledgement results). */
    private Map<TopicIdPartition, PartitionData> acquire(String groupId, String memberId,
                                                         List<TopicIdPartition> fetchable, int maxRecords,
                                                         int maxBytes, Map<TopicIdPartition, PartitionData> base) {
        Map<TopicIdPartition, PartitionData> out = new LinkedHashMap<>();
        base.forEach((tip, pd) -> out.put(tip, pd.duplicate()));
        int recordsLeft = maxRecords;
        int bytesLeft = maxBytes;
        int n = fetchable.size();
        int start = n == 0 ? 0 : Math.floorMod(rotation.getAndIncrement(), n);
        MemberView member = members.view(groupId, memberId);
        // not known yet (or no longer a member): acquire nothing, never unfiltered; partition errors still go back
        boolean mayAcquire = member.status() == MemberView.Status.MEMBER;
        for (int i = 0; i < n && recordsLeft > 0 && bytesLeft > 0; i++) {
            TopicIdPartition tip = fetchable.get((start + i) % n);
            Optional<SharePartition> partition;
            try {
                partition = partitions.getOrCreate(groupId, tip.topicId(), tip.topicPartition());
            } catch (org.apache.kafka.common.errors.ApiException e) {
                // NOT_LEADER_OR_FOLLOWER: the client refreshes its metadata and fetches from the leader
                out.computeIfAbsent(tip, this::partitionData).setErrorCode(Errors.forException(e).code());
                continue;
            }
            if (partition.isEmpty()) {
                out.computeIfAbsent(tip, this::partitionData).setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
                continue;
            }
            if (!mayAcquire) {
                continue;
            }
            AcquireResult result = partition.get().acquire(memberId, member.filter(), recordsLeft, bytesLeft);
            if (result.isEmpty()) {
                continue;
            }
            List<AcquiredRecords> acquired = new ArrayList<>(result.acquired().size());
            result.acquired().forEach(b -> acquired.add(new AcquiredRecords().setFirstOffset(b.firstOffset())
                    .setLastOffset(b.lastOffset()).setDeliveryCount((short) b.deliveryCount())));
            out.computeIfAbsent(tip, this::partitionData).setRecords(result.records()).setAcquiredRecords(acquired);
            recordsLeft -= result.recordCount();
            bytesLeft -= result.records().sizeInBytes();
        }
        return out;
    }

    private boolean notMember(String groupId, String memberId) {
        return members.view(groupId, memberId).status() == MemberView.Status.NOT_MEMBER;
    }

    private static boolean hasRecordsOrErrors(Map<TopicIdPartition, PartitionData> partitions) {
        for (PartitionData pd : partitions.values()) {
            if (!pd.acquiredRecords().isEmpty() || pd.errorCode() != Errors.NONE.code()) {
                return true;
            }
        }
        return false;
    }

    private PartitionData partitionData(TopicIdPartition tip) {
        return new PartitionData().setPartitionIndex(tip.partition()).setRecords(MemoryRecords.EMPTY);
    }

    /**
     * The response; a partition answered NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH (for its records or its
     * acknowledgements) names its current leader, and the response lists that leader's endpoint (KIP-951).
     * kafka-clients' share consumer keeps fetching a partition from the broker it last fetched it from until a
     * response names another leader, or until its metadata, which it refreshes on its own schedule, does; without
     * the hint it sent a fetch of a moved partition back to the old leader at once, thousands of times a second,
     * and consumed nothing of that partition for minutes (the failover chaos suite).
     */
    private ShareFetchResponse response(Map<TopicIdPartition, PartitionData> partitionData) {
        Map<Integer, Node> leaders = new LinkedHashMap<>();
        partitionData.forEach((tip, pd) -> {
            if (movedError(pd.errorCode()) || movedError(pd.acknowledgeErrorCode())) {
                topics.currentLeader(tip.topicPartition()).ifPresent(leader -> {
                    pd.setCurrentLeader(new LeaderIdAndEpoch().setLeaderId(leader.id())
                            .setLeaderEpoch(leader.epoch()));
                    leaders.put(leader.id(), new Node(leader.id(), leader.host(), leader.port()));
                });
            }
        });
        return ShareFetchResponse.of(Errors.NONE, 0, new LinkedHashMap<>(partitionData),
                new ArrayList<>(leaders.values()), lockTimeoutMs());
    }

    /** NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH: the share-partition lives on another broker now. */
    static boolean movedError(short code) {
        return code == Errors.NOT_LEADER_OR_FOLLOWER.code() || code == Errors.FENCED_LEADER_EPOCH.code();
    }

    private ShareFetchResponse topLevelError(Errors error) {
        return ShareFetchResponse.of(error, 0, new LinkedHashMap<>(), List.of(), lockTimeoutMs());
    }

    private int lockTimeoutMs() {
        return (int) Math.min(Integer.MAX_VALUE, config.recordLockDurationMs());
    }

    private static Step done(ShareFetchResponse response) {
        return () -> CompletableFuture.completedFuture(response);
    }
}
