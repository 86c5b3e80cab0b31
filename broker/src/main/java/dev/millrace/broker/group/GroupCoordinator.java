package dev.millrace.broker.group;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Function;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.message.DeleteGroupsResponseData.DeletableGroupResult;
import org.apache.kafka.common.message.DeleteGroupsResponseData.DeletableGroupResultCollection;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.message.DescribeGroupsResponseData.DescribedGroup;
import org.apache.kafka.common.message.HeartbeatResponseData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.message.ListGroupsResponseData.ListedGroup;
import org.apache.kafka.common.message.OffsetFetchRequestData.OffsetFetchRequestGroup;
import org.apache.kafka.common.message.OffsetFetchResponseData.OffsetFetchResponseGroup;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.requests.DeleteGroupsResponse;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.DescribeGroupsResponse;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.HeartbeatResponse;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.LeaveGroupRequest;
import org.apache.kafka.common.requests.LeaveGroupResponse;
import org.apache.kafka.common.requests.ListGroupsRequest;
import org.apache.kafka.common.requests.ListGroupsResponse;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetCommitResponse;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.OffsetFetchResponse;
import org.apache.kafka.common.requests.SyncGroupRequest;
import org.apache.kafka.common.requests.TxnOffsetCommitRequest;
import org.apache.kafka.common.requests.TxnOffsetCommitResponse;
import org.apache.kafka.common.requests.SyncGroupResponse;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.coordinator.CoordinatorElection;
import dev.millrace.broker.coordinator.ReplicationAwaiter;
import dev.millrace.broker.log.TxnVerification;

import dev.millrace.delay.Time;
import dev.millrace.delay.Timer;

/**
 * The classic consumer-group coordinator: one entry point per Kafka group API, each returning the
 * response as a future. Groups are spread over the partitions of {@code __consumer_offsets} (group
 * {@code g} lives in partition {@code Utils.abs(g.hashCode()) % partitionCount}); each partition that
 * this broker leads is a {@link GroupShard}, a single-threaded state machine over a {@link SerialExecutor}, so a
 * request about one group runs on that group's shard and a request about many (DescribeGroups, ListGroups,
 * DeleteGroups, OffsetFetch v8+) fans out and is merged in request order.
 *
 * <p>Leadership ({@link CoordinatorElection}): the coordinator serves exactly the partitions this broker leads.
 * {@link #onElected} creates the partition's shard for that leader epoch and loads it from the local replica (all
 * of it, up to the log end); meanwhile its groups get {@code COORDINATOR_LOAD_IN_PROGRESS}. {@link #onResigned}
 * drops the shard at once: its groups get {@code NOT_COORDINATOR} from then on, parked JoinGroup and SyncGroup
 * requests are answered with it and its timers are cancelled. A group whose partition is not led here gets {@code
 * NOT_COORDINATOR}, which sends kafka-clients back to FindCoordinator. A shard appends only while the partition is
 * led here in the epoch it was loaded in.
 *
 * <p>What survives a move of the coordinator: everything in the log, i.e. committed offsets (plain and
 * transactional, with their markers), each group's generation, protocol and leader as of its last completed
 * rebalance, and group deletions. What does not: the live membership (members, their sessions, assignments and
 * parked requests) is in memory only; the new coordinator brings each group back Empty at its last generation, and
 * members rejoin (kafka-clients do so when their heartbeat or commit gets {@code UNKNOWN_MEMBER_ID} or {@code
 * NOT_COORDINATOR}), keeping their committed offsets; so a move costs one rebalance.
 *
 * <p>Futures: JoinGroup completes when the group's join phase completes and SyncGroup when the
 * leader's assignment is persisted; OffsetCommit and DeleteGroups complete after their append to
 * the log returned; the others complete as soon as their shard ran them; and every answer only once the partition's
 * in-sync replicas have what the shard appended until then ({@link ReplicationAwaiter}; see {@link GroupShard}). No
 * request thread ever waits: a caller only chains on the future. Futures complete on the shard executor's threads
 * or on the replication thread that moved the high watermark.
 *
 * <p>Lifecycle: construct, register with the broker's elections ({@code PartitionManager.addElectionListener}),
 * serve, {@link #close()}.
 *
 * <p>Threading: thread-safe; every method may be called from any thread; the election callbacks never block.
 */
public final class GroupCoordinator implements CoordinatorElection, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(GroupCoordinator.class);

    private final CoordinatorContext context;
    private final Executor executor;
    private final int partitionCount;
    /** The shard of each partition led here, null for the others. */
    private final AtomicReferenceArray<GroupShard> shards;
    private volatile TxnOffsetsVerifier txnVerifier = TxnOffsetsVerifier.NONE;
    private boolean closed;

    /**
     * @param config       coordinator settings (initial rebalance delay, session timeout bounds, ...)
     * @param offsetsTopic the logs of {@code __consumer_offsets}; its partition count is read once
     * @param topicIds     topic id lookup for OffsetCommit/OffsetFetch v10 ({@link TopicIds#NONE} if only
     *                     v9 and earlier are advertised)
     * @param replication  waits for the in-sync replicas of {@code __consumer_offsets} before an answer goes out
     *                     ({@link ReplicationAwaiter#IMMEDIATE} where the log is not replicated)
     * @param timer        the timing wheel that drives session, rebalance and delay timeouts
     * @param time         the clock for commit timestamps and elapsed times
     * @param executor     the threads that run the shards (one thread is enough); not owned, so the
     *                     caller shuts it down after {@link #close()}
     */
    public GroupCoordinator(GroupCoordinatorConfig config, OffsetsTopic offsetsTopic, TopicIds topicIds,
                            ReplicationAwaiter replication, Timer timer, Time time, Executor executor) {
        this.executor = Objects.requireNonNull(executor, "executor");
        this.context = new CoordinatorContext(config, offsetsTopic, topicIds, replication, timer, time);
        this.partitionCount = offsetsTopic.partitionCount();
        if (partitionCount < 1) {
            throw new IllegalArgumentException(OffsetsTopic.NAME + " must have at least one partition, got "
                    + partitionCount);
        }
        this.shards = new AtomicReferenceArray<>(partitionCount);
    }

    /** This broker leads {@code partition} in {@code leaderEpoch}: a new shard loads it and then serves it. */
    @Override
    public void onElected(int partition, int leaderEpoch) {
        checkPartition(partition);
        GroupShard shard;
        GroupShard previous;
        synchronized (this) {
            if (closed) {
                return;
            }
            shard = new GroupShard(partition, leaderEpoch, context, executor);
            previous = shards.getAndSet(partition, shard);
        }
        if (previous != null) {
            log.warn("{}-{} elected in epoch {} while its shard of epoch {} still served; dropping that one",
                    OffsetsTopic.NAME, partition, leaderEpoch, previous.leaderEpoch());
            previous.resign();
        }
        log.info("Loading the groups of {}-{}: this broker leads it in epoch {}", OffsetsTopic.NAME, partition,
                leaderEpoch);
        shard.load();
    }

    /** This broker no longer leads {@code partition}: its groups get NOT_COORDINATOR from now on. */
    @Override
    public void onResigned(int partition, int leaderEpoch) {
        checkPartition(partition);
        GroupShard shard = shards.get(partition);
        if (shard == null || shard.leaderEpoch() != leaderEpoch || !shards.compareAndSet(partition, shard, null)) {
            return;
        }
        log.info("Dropping the groups of {}-{}: this broker stopped leading it (epoch {})", OffsetsTopic.NAME,
                partition, leaderEpoch);
        shard.resign();
    }

    /**
     * Completes when every shard led here right now has loaded (or failed to: the failure is logged and its groups
     * keep getting COORDINATOR_LOAD_IN_PROGRESS); the broker waits for it before it reports started.
     */
    public CompletableFuture<Void> awaitLoaded() {
        List<CompletableFuture<Void>> loads = new ArrayList<>();
        for (int p = 0; p < partitionCount; p++) {
            GroupShard shard = shards.get(p);
            if (shard != null) {
                loads.add(shard.loading().exceptionally(e -> null));
            }
        }
        return CompletableFuture.allOf(loads.toArray(new CompletableFuture<?>[0]));
    }

    /** True if this broker serves the groups of {@code partition} (loaded or loading). */
    public boolean leads(int partition) {
        return partition >= 0 && partition < partitionCount && shards.get(partition) != null;
    }

    private void checkPartition(int partition) {
        if (partition < 0 || partition >= partitionCount) {
            throw new IllegalArgumentException("No partition " + partition + " in " + OffsetsTopic.NAME + " ("
                    + partitionCount + " partitions)");
        }
    }

    /** The partition of {@code __consumer_offsets} that holds {@code groupId}. */
    public int partitionFor(String groupId) {
        return Utils.abs(groupId.hashCode()) % partitionCount;
    }

    /** The shard of {@code groupId}'s partition, null when this broker does not lead it. */
    private GroupShard shardFor(String groupId) {
        return shards.get(partitionFor(groupId == null ? "" : groupId));
    }

    /** Runs {@code task} on the shard of {@code groupId}; NOT_COORDINATOR at once when its partition is not led here. */
    private <T> CompletableFuture<T> submit(String groupId, Function<Errors, T> onError,
                                            BiConsumer<GroupShard, CompletableFuture<T>> task) {
        GroupShard shard = shardFor(groupId);
        if (shard == null) {
            return CompletableFuture.completedFuture(onError.apply(Errors.NOT_COORDINATOR));
        }
        return shard.submit(onError, result -> task.accept(shard, result));
    }

    public CompletableFuture<JoinGroupResponse> handleJoinGroup(JoinGroupRequest request, short apiVersion,
                                                                String clientId, String clientHost) {
        return submit(request.data().groupId(), error -> new JoinGroupResponse(GroupResponses.joinError(error,
                request.data().memberId()), apiVersion), (shard, result) -> shard.joinHandler.handleJoinGroup(
                request.data(), apiVersion, clientId, clientHost, result));
    }

    public CompletableFuture<SyncGroupResponse> handleSyncGroup(SyncGroupRequest request) {
        return submit(request.data().groupId(), error -> new SyncGroupResponse(GroupResponses.syncError(error)),
                (shard, result) -> shard.membershipHandler.handleSyncGroup(request.data(), result));
    }

    public CompletableFuture<HeartbeatResponse> handleHeartbeat(HeartbeatRequest request) {
        return submit(request.data().groupId(), error -> new HeartbeatResponse(new HeartbeatResponseData()
                .setErrorCode(error.code())), (shard, result) -> shard.membershipHandler.handleHeartbeat(
                request.data(), result));
    }

    public CompletableFuture<LeaveGroupResponse> handleLeaveGroup(LeaveGroupRequest request, short apiVersion) {
        String groupId = request.data().groupId();
        return submit(groupId, error -> new LeaveGroupResponse(List.of(), error, 0, apiVersion),
                (shard, result) -> shard.membershipHandler.handleLeaveGroup(groupId, request.members(), apiVersion,
                        result));
    }

    public CompletableFuture<OffsetCommitResponse> handleOffsetCommit(OffsetCommitRequest request, short apiVersion) {
        return submit(request.data().groupId(), error -> (OffsetCommitResponse) request.getErrorResponse(
                error.exception()), (shard, result) -> shard.offsetsHandler.handleOffsetCommit(request.data(),
                apiVersion, result));
    }

    public CompletableFuture<OffsetFetchResponse> handleOffsetFetch(OffsetFetchRequest request, short apiVersion) {
        List<OffsetFetchRequestGroup> groups = request.groups();
        boolean requireStable = request.requireStable();
        List<CompletableFuture<OffsetFetchResponseGroup>> parts = new ArrayList<>(groups.size());
        for (OffsetFetchRequestGroup group : groups) {
            parts.add(submit(group.groupId(), error -> OffsetsHandler.groupError(group.groupId(), error),
                    (shard, result) -> result.complete(shard.offsetsHandler.fetch(group, apiVersion,
                            requireStable))));
        }
        return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0])).thenApply(ignored ->
                OffsetFetchResponses.build(groups, parts.stream().map(CompletableFuture::join).toList(), apiVersion));
    }

    /** Connects the transaction coordinators that TxnOffsetCommit verifies with (until then none is asked). */
    public void setTxnOffsetsVerifier(TxnOffsetsVerifier verifier) {
        this.txnVerifier = Objects.requireNonNull(verifier, "verifier");
    }

    /**
     * TxnOffsetCommit: offsets committed in a producer's transaction, pending until its marker. When the commit would
     * open the producer's transaction on the group's partition, the transaction's coordinator is asked first
     * ({@link TxnOffsetsVerifier}), and the append is refused (INVALID_TXN_STATE) if a marker of the producer reached
     * the partition meanwhile ({@link TxnVerification}). Coordinator errors of the verification are answered as
     * COORDINATOR_NOT_AVAILABLE (the producer retries), INVALID_TXN_STATE and PRODUCER_FENCED as they are.
     */
    public CompletableFuture<TxnOffsetCommitResponse> handleTxnOffsetCommit(TxnOffsetCommitRequest request) {
        TxnOffsetCommitRequestData data = request.data();
        int partition = partitionFor(data.groupId() == null ? "" : data.groupId());
        TxnVerification verification;
        try {
            verification = context.offsetsTopic().log(partition).startTxnVerification(data.producerId(),
                    data.producerEpoch());
        } catch (IllegalStateException | KafkaStorageException notHere) {
            // no usable local log: this broker cannot coordinate the group now, and nothing is appended unchecked
            return CompletableFuture.completedFuture(new TxnOffsetCommitResponse(TxnOffsetsHandler.errorResponse(data,
                    Errors.NOT_COORDINATOR)));
        }
        TxnVerification.Guard guard = verification.guard();
        if (!verification.needed()) {
            return submitTxnOffsetCommit(data, guard);
        }
        return txnVerifier.verify(data.transactionalId(), data.producerId(), data.producerEpoch(),
                new TopicPartition(OffsetsTopic.NAME, partition)).thenCompose(error -> switch (error) {
                    case NONE -> submitTxnOffsetCommit(data, guard);
                    case INVALID_TXN_STATE, PRODUCER_FENCED -> CompletableFuture.completedFuture(
                            new TxnOffsetCommitResponse(TxnOffsetsHandler.errorResponse(data, error)));
                    default -> CompletableFuture.completedFuture(new TxnOffsetCommitResponse(
                            TxnOffsetsHandler.errorResponse(data, Errors.COORDINATOR_NOT_AVAILABLE)));
                });
    }

    private CompletableFuture<TxnOffsetCommitResponse> submitTxnOffsetCommit(TxnOffsetCommitRequestData data,
                                                                           TxnVerification.Guard guard) {
        return submit(data.groupId(), error -> new TxnOffsetCommitResponse(TxnOffsetsHandler.errorResponse(data,
                error)), (shard, result) -> result.complete(new TxnOffsetCommitResponse(
                shard.txnOffsetsHandler.handle(data, guard))));
    }

    /**
     * A transaction marker was written to {@code __consumer_offsets} partition {@code partition}:
     * the producer's pending transactional offsets there take effect (commit) or are dropped (abort).
     * Runs on the shard; the future completes when applied. Only a shard led here applies it: a partition not led
     * here has no state to change (its leader loads the marker from the log), and a shard still loading applies it
     * after the load, which replays the markers already in the log (applying one twice changes nothing: the
     * producer's pending offsets are gone after the first).
     */
    public CompletableFuture<Void> onTransactionMarker(int partition, long producerId, boolean commit) {
        checkPartition(partition);
        GroupShard shard = shards.get(partition);
        if (shard == null) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        try {
            shard.executor().execute(() -> {
                shard.completeTransaction(producerId, commit);
                done.complete(null);
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            done.complete(null);
        }
        return done;
    }

    public CompletableFuture<DescribeGroupsResponse> handleDescribeGroups(DescribeGroupsRequest request,
                                                                          short apiVersion) {
        return fanOut(request.data().groups(),
                (shard, ids) -> shard.adminHandler.describe(ids, apiVersion),
                (id, error) -> DescribeGroupsResponse.groupError(id, error, apiVersion >= 6 ? error.message() : null),
                DescribedGroup::groupId)
                .thenApply(described -> new DescribeGroupsResponse(new DescribeGroupsResponseData()
                        .setGroups(described)));
    }

    public CompletableFuture<ListGroupsResponse> handleListGroups(ListGroupsRequest request) {
        List<String> typesFilter = request.data().typesFilter();
        if (!typesFilter.isEmpty() && typesFilter.stream().noneMatch(GroupAdminHandler.GROUP_TYPE::equalsIgnoreCase)) {
            return CompletableFuture.completedFuture(new ListGroupsResponse(new ListGroupsResponseData()));
        }
        List<String> statesFilter = request.data().statesFilter();
        Set<GroupState> states = EnumSet.noneOf(GroupState.class);
        statesFilter.forEach(name -> GroupState.parse(name).ifPresent(states::add));
        if (!statesFilter.isEmpty() && states.isEmpty()) {
            return CompletableFuture.completedFuture(new ListGroupsResponse(new ListGroupsResponseData()));
        }
        List<CompletableFuture<List<ListedGroup>>> parts = new ArrayList<>(partitionCount);
        for (int p = 0; p < partitionCount; p++) {
            GroupShard shard = shards.get(p);
            if (shard != null) {
                parts.add(shard.submit(error -> List.of(), result -> result.complete(
                        shard.adminHandler.list(states))));
            }
        }
        return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0])).thenApply(ignored -> {
            ListGroupsResponseData data = new ListGroupsResponseData();
            parts.forEach(part -> data.groups().addAll(part.join()));
            return new ListGroupsResponse(data);
        });
    }

    public CompletableFuture<DeleteGroupsResponse> handleDeleteGroups(DeleteGroupsRequest request, short apiVersion) {
        return fanOut(request.data().groupsNames(),
                (shard, ids) -> shard.adminHandler.delete(ids),
                (id, error) -> new DeletableGroupResult().setGroupId(id).setErrorCode(error.code())
                        .setErrorMessage(error.message()),
                DeletableGroupResult::groupId)
                .thenApply(results -> {
                    DeletableGroupResultCollection collection = new DeletableGroupResultCollection();
                    results.forEach(collection::add);
                    return new DeleteGroupsResponse(new DeleteGroupsResponseData().setResults(collection));
                });
    }

    /**
     * Sends each shard its share of {@code groupIds} and merges the per-group results back into
     * request order; a shard that cannot serve answers each of its groups with {@code onError}.
     */
    private <T> CompletableFuture<List<T>> fanOut(List<String> groupIds,
                                                  BiFunction<GroupShard, List<String>, List<T>> perShard,
                                                  BiFunction<String, Errors, T> onError, Function<T, String> idOf) {
        Map<Integer, List<String>> byPartition = new LinkedHashMap<>();
        for (String groupId : groupIds) {
            byPartition.computeIfAbsent(partitionFor(groupId == null ? "" : groupId), p -> new ArrayList<>())
                    .add(groupId);
        }
        List<CompletableFuture<List<T>>> parts = new ArrayList<>(byPartition.size());
        byPartition.values().forEach(ids -> parts.add(submit(ids.get(0),
                error -> ids.stream().map(id -> onError.apply(id, error)).toList(),
                (shard, result) -> result.complete(perShard.apply(shard, ids)))));
        return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0])).thenApply(ignored -> {
            Map<String, List<T>> byId = new LinkedHashMap<>();
            parts.forEach(part -> part.join().forEach(r -> byId.computeIfAbsent(idOf.apply(r),
                    k -> new ArrayList<>()).add(r)));
            List<T> ordered = new ArrayList<>(groupIds.size());
            for (String groupId : groupIds) {
                ordered.add(byId.get(groupId).remove(0));
            }
            return ordered;
        });
    }

    /**
     * Stops serving: every shard is dropped, parked JoinGroup and SyncGroup requests are answered with
     * NOT_COORDINATOR; later elections are ignored. Waits for the shards' last tasks.
     */
    @Override
    public void close() {
        List<CompletableFuture<Void>> closes = new ArrayList<>();
        synchronized (this) {
            closed = true;
            for (int p = 0; p < partitionCount; p++) {
                GroupShard shard = shards.getAndSet(p, null);
                if (shard != null) {
                    closes.add(shard.resign());
                }
            }
        }
        CompletableFuture.allOf(closes.toArray(new CompletableFuture<?>[0])).join();
    }
}
