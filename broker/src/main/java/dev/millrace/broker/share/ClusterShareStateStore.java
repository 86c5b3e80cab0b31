package dev.millrace.broker.share;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.CoordinatorLoadInProgressException;
import org.apache.kafka.common.errors.CoordinatorNotAvailableException;
import org.apache.kafka.common.errors.FencedLeaderEpochException;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.protocol.Errors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.coordinator.CoordinatorLocator;
import dev.millrace.protocol.ext.ShareState;
import dev.millrace.protocol.net.ClientSecurity;

/**
 * The broker's {@link ShareStateStore}: each share-partition's state goes to the share-state coordinator of its group
 * (the leader of the group's partition of {@value LogShareStateStore#TOPIC}): straight to the local {@link
 * ShareStateCoordinator} when this broker leads that partition, else over the wire (the ShareState extension,
 * {@link ShareStateClient}) to the leader named by the latest metadata.
 *
 * <p>Every call returns once the coordinator answered: a save once it is on the in-sync replicas of the state
 * partition. NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, a partition without a leader
 * and a lost connection are retried with fresh metadata every {@code retryBackoffMs} within {@code timeoutMs}; then,
 * and for any other error (FENCED_LEADER_EPOCH: a newer leader of the topic-partition took the share-partition over),
 * the call throws a Kafka {@code ApiException}, and a save makes the partition's next save a full value. A save refused
 * with FENCED_LEADER_EPOCH also closes the share-partition ({@link SharePartition#close()}): a newer leader owns it, and
 * a copy kept open would fail every later save (and, before ShareFetch answered such failures per partition, every
 * fetch of its members here).
 *
 * <p>Saves of one share-partition are taken and written one at a time, in order (a delta applies to the save before
 * it), and the saves asked for while one is written are served by one write taken after it ({@link SaveRounds}); saves
 * of different share-partitions go in parallel. The wait blocks the calling thread (a request thread, or
 * the timer's for a lock expiry): with every request thread of two brokers waiting on each other's coordinator, both
 * wait out {@code timeoutMs}; the coordinator side holds no thread while its write replicates.
 *
 * <p>Group settings are not kept here any more but in the metadata log ({@link ShareGroupConfigs}); {@link
 * #groupConfigs()} and {@link #saveGroupConfig} still reach the records earlier versions wrote to the share-state
 * topic.
 *
 * <p>Thread-safe.
 */
public final class ClusterShareStateStore implements ShareStateStore, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ClusterShareStateStore.class);

    private final ShareStateCoordinator local;
    private final CoordinatorLocator locator;
    private final int nodeId;
    private final long timeoutMs;
    private final long retryBackoffMs;
    private final ShareStateClient client;
    /** Serialises the saves of each share-partition (taking the state, then writing it), in rounds. */
    private final Map<SharePartitionKey, SaveRounds> saveLocks = new ConcurrentHashMap<>();

    public ClusterShareStateStore(ShareStateCoordinator local, CoordinatorLocator locator, int nodeId, long timeoutMs,
                                  long retryBackoffMs) {
        this(local, locator, nodeId, timeoutMs, retryBackoffMs, ClientSecurity.PLAINTEXT);
    }

    /** @param security how to connect to the coordinators on other nodes (the inter-broker listener's protocol) */
    public ClusterShareStateStore(ShareStateCoordinator local, CoordinatorLocator locator, int nodeId, long timeoutMs,
                                  long retryBackoffMs, ClientSecurity security) {
        this.local = Objects.requireNonNull(local, "local");
        this.locator = Objects.requireNonNull(locator, "locator");
        this.nodeId = nodeId;
        this.timeoutMs = timeoutMs;
        this.retryBackoffMs = retryBackoffMs;
        this.client = new ShareStateClient(nodeId, (int) Math.min(Integer.MAX_VALUE, timeoutMs), "share-state",
                security);
    }

    @Override
    public Optional<SharePartitionSnapshot> load(SharePartitionKey key) {
        return load(key, -1);
    }

    @Override
    public Optional<SharePartitionSnapshot> load(SharePartitionKey key, int leaderEpoch) {
        String groupId = key.groupId();
        int partition = key.topicPartition().partition();
        Optional<LogShareStateStore.StoredState> stored = call("read the state of " + key, groupId,
                () -> CompletableFuture.completedFuture(local.read(groupId, key.topicId(), partition, leaderEpoch)),
                ShareState.Request.read(groupId, key.topicId(), partition, leaderEpoch),
                r -> r.full() == null ? Optional.empty()
                        : Optional.of(new LogShareStateStore.StoredState(r.full(), r.deltas())));
        return stored.map(LogShareStateStore.StoredState::snapshot);
    }

    @Override
    public void save(SharePartition partition) {
        SharePartitionKey key = partition.key();
        String groupId = key.groupId();
        int index = key.topicPartition().partition();
        saveLocks.computeIfAbsent(key, k -> new SaveRounds()).save(() -> {
            SharePartition.EncodedState state = partition.encodedState();
            int leaderEpoch = partition.leaderEpoch();
            try {
                call("save the state of " + key, groupId,
                        () -> {
                            checkOpen(partition);
                            return local.write(groupId, key.topicId(), index, leaderEpoch, state);
                        },
                        ShareState.Request.write(groupId, key.topicId(), index, leaderEpoch, state.full(),
                                state.version(), state.value()), r -> null, () -> checkOpen(partition));
            } catch (RuntimeException e) {
                partition.saveFailed();
                if (e instanceof FencedLeaderEpochException) {
                    // a newer leader of the topic-partition loaded the share-partition: this copy is done, as after a
                    // resignation; the next fetch here finds out who leads it (and loads it again if this broker does)
                    log.info("Dropping share-partition {} of leader epoch {}: {}", key, leaderEpoch, e.getMessage());
                    partition.close();
                }
                throw e;
            }
        });
    }

    @Override
    public Map<String, Map<String, String>> groupConfigs() {
        return local.groupConfigs();
    }

    @Override
    public void saveGroupConfig(String groupId, Map<String, String> configs) {
        call("save the settings of share group " + groupId, groupId, () -> local.saveGroupConfig(groupId, configs),
                ShareState.Request.groupConfig(groupId, configs.isEmpty() ? null
                        : ShareStateSerde.groupConfigValue(configs)), r -> null);
    }

    @Override
    public List<Map.Entry<Uuid, Integer>> partitionsOf(String groupId) {
        return call("list the share-partitions of " + groupId, groupId,
                () -> CompletableFuture.completedFuture(local.partitionsOf(groupId)), ShareState.Request.list(groupId),
                ShareState.Response::partitions);
    }

    @Override
    public void delete(String groupId, Uuid topicId, int partition) {
        saveLocks.keySet().removeIf(k -> k.groupId().equals(groupId) && k.topicId().equals(topicId)
                && k.topicPartition().partition() == partition);
        call("delete the state of " + groupId + "/" + topicId + "-" + partition, groupId,
                () -> local.delete(groupId, topicId, partition), ShareState.Request.delete(groupId, topicId, partition),
                r -> null);
    }

    private <T> T call(String what, String groupId, Supplier<CompletableFuture<T>> localCall,
                       ShareState.Request request, Function<ShareState.Response, T> remoteResult) {
        return call(what, groupId, localCall, request, remoteResult, () -> { });
    }

    /**
     * Calls the group's coordinator, here or remote, until it answers or {@link #timeoutMs} passes; {@code
     * beforeAttempt} runs before each attempt and may throw to stop.
     */
    private <T> T call(String what, String groupId, Supplier<CompletableFuture<T>> localCall,
                       ShareState.Request request, Function<ShareState.Response, T> remoteResult,
                       Runnable beforeAttempt) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        int statePartition = local.partitionOf(groupId);
        String lastProblem = "no attempt yet";
        while (true) {
            beforeAttempt.run();
            CompletableFuture<T> answer;
            if (local.serves(statePartition)) {
                answer = localCall.get();
            } else {
                Optional<Node> leader = locator.leaderOf(statePartition);
                if (leader.isEmpty() || leader.get().id() == nodeId) {
                    // no leader yet, or elected here and still loading
                    answer = CompletableFuture.failedFuture(new CoordinatorLoadInProgressException(
                            "share-state partition " + statePartition + " has no serving leader yet"));
                } else {
                    answer = send(leader.get(), request).thenApply(r -> {
                        if (r.errorCode() != Errors.NONE.code()) {
                            throw Errors.forCode(r.errorCode()).exception(r.errorMessage());
                        }
                        return remoteResult.apply(r);
                    });
                }
            }
            long leftNs = deadline - System.nanoTime();
            Throwable cause;
            try {
                return answer.get(Math.max(1, leftNs), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptException(e);
            } catch (ExecutionException | CompletionException e) {
                cause = e.getCause() instanceof CompletionException && e.getCause().getCause() != null
                        ? e.getCause().getCause() : e.getCause();
            } catch (java.util.concurrent.TimeoutException e) {
                cause = e;
            }
            if (!retriable(cause)) {
                throw cause instanceof ApiException api ? api
                        : new CoordinatorNotAvailableException("Could not " + what + ": " + cause, cause);
            }
            lastProblem = cause.toString();
            if (System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(retryBackoffMs) - deadline > 0) {
                throw new CoordinatorNotAvailableException("Could not " + what + " within " + timeoutMs
                        + " ms; last problem: " + lastProblem);
            }
            log.debug("Will retry to {}: {}", what, lastProblem);
            try {
                Thread.sleep(retryBackoffMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptException(e);
            }
        }
    }

    /** Sends to the remote coordinator; a failure to send fails the future rather than the caller. */
    private CompletableFuture<ShareState.Response> send(Node leader, ShareState.Request request) {
        try {
            return client.send(leader, request);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e instanceof CompletionException && e.getCause() != null
                    ? e.getCause() : e);
        }
    }

    private static boolean retriable(Throwable cause) {
        // not FENCED_LEADER_EPOCH nor NOT_LEADER_OR_FOLLOWER: the share-partition moved, retrying cannot help
        return cause instanceof NotCoordinatorException || cause instanceof CoordinatorLoadInProgressException
                || cause instanceof CoordinatorNotAvailableException || cause instanceof IOException
                || cause instanceof java.util.concurrent.TimeoutException;
    }

    private static void checkOpen(SharePartition partition) {
        if (partition.isClosed()) {
            throw new NotLeaderOrFollowerException(partition.key() + " moved to another leader; not saved");
        }
    }

    @Override
    public void close() {
        client.close();
    }
}
