package dev.millrace.broker.group;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.message.DeleteGroupsResponseData.DeletableGroupResult;
import org.apache.kafka.common.message.DeleteGroupsResponseData.DeletableGroupResultCollection;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.message.DescribeGroupsResponseData.DescribedGroup;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.message.FindCoordinatorResponseData.Coordinator;
import org.apache.kafka.common.message.HeartbeatResponseData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.message.ListGroupsResponseData.ListedGroup;
import org.apache.kafka.common.message.OffsetFetchRequestData.OffsetFetchRequestGroup;
import org.apache.kafka.common.message.OffsetFetchResponseData.OffsetFetchResponseGroup;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.requests.DeleteGroupsResponse;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.DescribeGroupsResponse;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorRequest.CoordinatorType;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
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

import dev.millrace.delay.Time;
import dev.millrace.delay.Timer;

/**
 * The classic consumer-group coordinator: one entry point per Kafka group API, each returning the
 * response as a future. Groups are spread over the partitions of {@code __consumer_offsets} (group
 * {@code g} lives in partition {@code Utils.abs(g.hashCode()) % partitionCount}); each partition is
 * a {@link GroupShard}, a single-threaded state machine over a {@link SerialExecutor}, so a request
 * about one group runs on that group's shard and a request about many (DescribeGroups, ListGroups,
 * DeleteGroups, OffsetFetch v8+) fans out and is merged in request order.
 *
 * <p>Futures: JoinGroup completes when the group's join phase completes and SyncGroup when the
 * leader's assignment is persisted; OffsetCommit and DeleteGroups complete after their append to
 * the log returned; the others complete as soon as their shard ran them. No request thread ever
 * waits: a caller only chains on the future. Futures complete on the shard executor's threads.
 *
 * <p>Lifecycle: construct, {@link #load()} (replays every partition), serve, {@link #close()}.
 * Before a shard finished loading its requests get {@code COORDINATOR_LOAD_IN_PROGRESS}; after
 * close, {@code NOT_COORDINATOR}.
 *
 * <p>Threading: thread-safe; every method may be called from any thread.
 */
public final class GroupCoordinator implements AutoCloseable {

    private final Supplier<Node> localNode;
    private final GroupShard[] shards;

    /**
     * @param config       coordinator settings (initial rebalance delay, session timeout bounds, ...)
     * @param offsetsTopic the logs of {@code __consumer_offsets}; its partition count is read once
     * @param topicIds     topic id lookup for OffsetCommit/OffsetFetch v10 ({@link TopicIds#NONE} if only
     *                     v9 and earlier are advertised)
     * @param localNode    this broker's endpoint, returned by FindCoordinator for groups
     * @param timer        the timing wheel that drives session, rebalance and delay timeouts
     * @param time         the clock for commit timestamps and elapsed times
     * @param executor     the threads that run the shards (one thread is enough); not owned, so the
     *                     caller shuts it down after {@link #close()}
     */
    public GroupCoordinator(GroupCoordinatorConfig config, OffsetsTopic offsetsTopic, TopicIds topicIds,
                            Supplier<Node> localNode, Timer timer, Time time, Executor executor) {
        this.localNode = Objects.requireNonNull(localNode, "localNode");
        Objects.requireNonNull(executor, "executor");
        CoordinatorContext context = new CoordinatorContext(config, offsetsTopic, topicIds, timer, time);
        int partitionCount = offsetsTopic.partitionCount();
        if (partitionCount < 1) {
            throw new IllegalArgumentException(OffsetsTopic.NAME + " must have at least one partition, got "
                    + partitionCount);
        }
        this.shards = new GroupShard[partitionCount];
        for (int p = 0; p < partitionCount; p++) {
            shards[p] = new GroupShard(p, context, executor);
        }
    }

    /** Replays every partition of {@code __consumer_offsets}; returns once all shards serve. */
    public void load() {
        CompletableFuture<?>[] loads = new CompletableFuture<?>[shards.length];
        for (int p = 0; p < shards.length; p++) {
            loads[p] = shards[p].load();
        }
        CompletableFuture.allOf(loads).join();
    }

    /** The partition of {@code __consumer_offsets} that holds {@code groupId}. */
    public int partitionFor(String groupId) {
        return Utils.abs(groupId.hashCode()) % shards.length;
    }

    private GroupShard shardFor(String groupId) {
        return shards[partitionFor(groupId == null ? "" : groupId)];
    }

    public CompletableFuture<JoinGroupResponse> handleJoinGroup(JoinGroupRequest request, short apiVersion,
                                                                String clientId, String clientHost) {
        GroupShard shard = shardFor(request.data().groupId());
        return shard.submit(error -> new JoinGroupResponse(GroupResponses.joinError(error, request.data().memberId()),
                apiVersion), result -> shard.joinHandler.handleJoinGroup(request.data(), apiVersion, clientId,
                clientHost, result));
    }

    public CompletableFuture<SyncGroupResponse> handleSyncGroup(SyncGroupRequest request) {
        GroupShard shard = shardFor(request.data().groupId());
        return shard.submit(error -> new SyncGroupResponse(GroupResponses.syncError(error)),
                result -> shard.membershipHandler.handleSyncGroup(request.data(), result));
    }

    public CompletableFuture<HeartbeatResponse> handleHeartbeat(HeartbeatRequest request) {
        GroupShard shard = shardFor(request.data().groupId());
        return shard.submit(error -> new HeartbeatResponse(new HeartbeatResponseData().setErrorCode(error.code())),
                result -> shard.membershipHandler.handleHeartbeat(request.data(), result));
    }

    public CompletableFuture<LeaveGroupResponse> handleLeaveGroup(LeaveGroupRequest request, short apiVersion) {
        String groupId = request.data().groupId();
        GroupShard shard = shardFor(groupId);
        return shard.submit(error -> new LeaveGroupResponse(List.of(), error, 0, apiVersion),
                result -> shard.membershipHandler.handleLeaveGroup(groupId, request.members(), apiVersion, result));
    }

    public CompletableFuture<OffsetCommitResponse> handleOffsetCommit(OffsetCommitRequest request, short apiVersion) {
        GroupShard shard = shardFor(request.data().groupId());
        return shard.submit(error -> (OffsetCommitResponse) request.getErrorResponse(error.exception()),
                result -> shard.offsetsHandler.handleOffsetCommit(request.data(), apiVersion, result));
    }

    public CompletableFuture<OffsetFetchResponse> handleOffsetFetch(OffsetFetchRequest request, short apiVersion) {
        List<OffsetFetchRequestGroup> groups = request.groups();
        boolean requireStable = request.requireStable();
        List<CompletableFuture<OffsetFetchResponseGroup>> parts = new ArrayList<>(groups.size());
        for (OffsetFetchRequestGroup group : groups) {
            GroupShard shard = shardFor(group.groupId());
            parts.add(shard.submit(error -> OffsetsHandler.groupError(group.groupId(), error),
                    result -> result.complete(shard.offsetsHandler.fetch(group, apiVersion, requireStable))));
        }
        return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0])).thenApply(ignored ->
                OffsetFetchResponses.build(groups, parts.stream().map(CompletableFuture::join).toList(), apiVersion));
    }

    /** TxnOffsetCommit: offsets committed in a producer's transaction, pending until its marker. */
    public CompletableFuture<TxnOffsetCommitResponse> handleTxnOffsetCommit(TxnOffsetCommitRequest request) {
        GroupShard shard = shardFor(request.data().groupId());
        return shard.submit(error -> new TxnOffsetCommitResponse(TxnOffsetsHandler.errorResponse(request.data(), error)),
                result -> result.complete(new TxnOffsetCommitResponse(shard.txnOffsetsHandler.handle(request.data()))));
    }

    /**
     * A transaction marker was written to {@code __consumer_offsets} partition {@code partition}:
     * the producer's pending transactional offsets there take effect (commit) or are dropped (abort).
     * Runs on the shard; the future completes when applied.
     */
    public CompletableFuture<Void> onTransactionMarker(int partition, long producerId, boolean commit) {
        GroupShard shard = shards[partition];
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
        List<CompletableFuture<List<ListedGroup>>> parts = new ArrayList<>(shards.length);
        for (GroupShard shard : shards) {
            parts.add(shard.submit(error -> List.of(), result -> result.complete(shard.adminHandler.list(states))));
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

    /** FindCoordinator: this broker for groups and transactions; share groups are not served yet. */
    public CompletableFuture<FindCoordinatorResponse> handleFindCoordinator(FindCoordinatorRequest request,
                                                                            short apiVersion) {
        FindCoordinatorRequestData data = request.data();
        FindCoordinatorResponseData response = new FindCoordinatorResponseData();
        if (apiVersion < FindCoordinatorRequest.MIN_BATCHED_VERSION) {
            Coordinator c = coordinatorFor(data.key(), data.keyType());
            response.setErrorCode(c.errorCode()).setErrorMessage(c.errorMessage()).setNodeId(c.nodeId())
                    .setHost(c.host()).setPort(c.port());
        } else {
            for (String key : data.coordinatorKeys()) {
                response.coordinators().add(coordinatorFor(key, data.keyType()));
            }
        }
        return CompletableFuture.completedFuture(new FindCoordinatorResponse(response));
    }

    private Coordinator coordinatorFor(String key, byte keyType) {
        Coordinator coordinator = new Coordinator().setKey(key).setNodeId(-1).setHost("").setPort(-1);
        Optional<CoordinatorType> type = Optional.empty();
        try {
            type = Optional.of(CoordinatorType.forId(keyType));
        } catch (RuntimeException e) {
            // reported below as an invalid request
        }
        if (type.isEmpty()) {
            return coordinatorError(coordinator, Errors.INVALID_REQUEST, "Unknown coordinator key type " + keyType);
        }
        switch (type.get()) {
            case GROUP -> {
                if (key == null || key.isEmpty()) {
                    return coordinatorError(coordinator, Errors.INVALID_REQUEST, "The group id must not be empty");
                }
                Node node = localNode.get();
                return coordinator.setErrorCode(Errors.NONE.code()).setNodeId(node.id()).setHost(node.host())
                        .setPort(node.port());
            }
            case TRANSACTION -> {
                if (key == null || key.isEmpty()) {
                    return coordinatorError(coordinator, Errors.INVALID_REQUEST,
                            "The transactional id must not be empty");
                }
                Node node = localNode.get();
                return coordinator.setErrorCode(Errors.NONE.code()).setNodeId(node.id()).setHost(node.host())
                        .setPort(node.port());
            }
            default -> {
                return coordinatorError(coordinator, Errors.COORDINATOR_NOT_AVAILABLE, "This broker has no "
                        + type.get().name().toLowerCase(Locale.ROOT) + " coordinator yet: key " + key
                        + " cannot be served");
            }
        }
    }

    private static Coordinator coordinatorError(Coordinator coordinator, Errors error, String message) {
        return coordinator.setErrorCode(error.code()).setErrorMessage(message);
    }

    /**
     * Sends each shard its share of {@code groupIds} and merges the per-group results back into
     * request order; a shard that cannot serve answers each of its groups with {@code onError}.
     */
    private <T> CompletableFuture<List<T>> fanOut(List<String> groupIds,
                                                  BiFunction<GroupShard, List<String>, List<T>> perShard,
                                                  BiFunction<String, Errors, T> onError, Function<T, String> idOf) {
        Map<GroupShard, List<String>> byShard = new LinkedHashMap<>();
        for (String groupId : groupIds) {
            byShard.computeIfAbsent(shardFor(groupId), s -> new ArrayList<>()).add(groupId);
        }
        List<CompletableFuture<List<T>>> parts = new ArrayList<>(byShard.size());
        byShard.forEach((shard, ids) -> parts.add(shard.submit(
                error -> ids.stream().map(id -> onError.apply(id, error)).toList(),
                result -> result.complete(perShard.apply(shard, ids)))));
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

    /** Stops serving: parked JoinGroup and SyncGroup requests are answered with NOT_COORDINATOR. */
    @Override
    public void close() {
        CompletableFuture<?>[] closes = new CompletableFuture<?>[shards.length];
        for (int p = 0; p < shards.length; p++) {
            closes[p] = shards[p].close();
        }
        CompletableFuture.allOf(closes).join();
    }
}
