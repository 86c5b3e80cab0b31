package dev.millrace.broker.share;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.CoordinatorLoadInProgressException;
import org.apache.kafka.common.errors.FencedLeaderEpochException;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.coordinator.CoordinatorElection;
import dev.millrace.broker.coordinator.ReplicationAwaiter;

/**
 * The share-state coordinator: serves the share-partition state of the groups whose partition of {@value
 * LogShareStateStore#TOPIC} this broker leads (a group's state lives in partition {@code abs(groupId.hashCode()) %
 * partitions}, FindCoordinator's SHARE key). Other brokers reach it with the ShareState extension ({@link
 * ShareStateHandler}); this broker's own share-partitions call it directly ({@link ClusterShareStateStore}).
 *
 * <ul>
 *   <li>{@link #onElected}: the partition is replayed from the local replica, all of it up to the log end, on the
 *       coordinator's own loader thread; until then requests for its groups get COORDINATOR_LOAD_IN_PROGRESS.</li>
 *   <li>{@link #onResigned}: from that moment on, requests for its groups get NOT_COORDINATOR, and its state is
 *       dropped. A write also checks, under the partition's lock, that this broker still leads the state partition
 *       in the epoch it loaded it in, so a write racing the resignation is refused rather than appended by a broker
 *       that no longer leads.</li>
 *   <li>A write is appended, then answered once it is on every in-sync replica ({@link
 *       ReplicationAwaiter#awaitLogEnd}), in the leader epoch it was appended in: an answered write survives the loss
 *       of this broker.</li>
 *   <li>Fencing of share-partition leaders: a read or write carries the sender's leader epoch of the topic-partition.
 *       One older than the newest epoch that read or wrote the share-partition here, or older than the topic-partition's
 *       leader epoch in this broker's metadata, is refused with FENCED_LEADER_EPOCH: once the new leader of a
 *       topic-partition has loaded its share-partitions' state, the old leader can no longer change it, so no
 *       acknowledgement answered by the old leader is lost and none applied after the hand-over is answered as done.
 *       The newest epochs seen are kept in memory only; after a move of the coordinator the metadata check remains.</li>
 * </ul>
 *
 * <p>What survives a failover of the coordinator: everything written (full values, deltas, group settings), as the
 * new leader of the state partition replays it. What does not: the fencing epochs seen (see above).
 *
 * <p>Threading: thread-safe. Election callbacks never block (loads run on the loader thread); reads and writes take
 * the lock of their state partition only while checking and appending, never while waiting for the replicas.
 */
public final class ShareStateCoordinator implements CoordinatorElection, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ShareStateCoordinator.class);

    private record Id(String groupId, Uuid topicId, int partition) {
    }

    private final ShareTopics topics;
    private final LogShareStateStore state;
    private final ReplicationAwaiter awaiter;
    private final Object[] locks;
    /** Per state partition: the epoch it is served in; absent while not (yet) served. Under {@code this}. */
    private final Map<Integer, Integer> serving = new HashMap<>();
    /** Per state partition: the epoch of the load in progress. Under {@code this}. */
    private final Map<Integer, Integer> loading = new HashMap<>();
    /** The newest leader epoch that read or wrote each share-partition here. Under the lock of its state partition. */
    private final Map<Id, Integer> fences = new HashMap<>();
    private final ExecutorService loader = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "millrace-share-state-loader");
        t.setDaemon(true);
        return t;
    });

    public ShareStateCoordinator(ShareTopics topics, LogShareStateStore state, ReplicationAwaiter awaiter) {
        this.topics = Objects.requireNonNull(topics, "topics");
        this.state = Objects.requireNonNull(state, "state");
        this.awaiter = Objects.requireNonNull(awaiter, "awaiter");
        this.locks = new Object[state.partitionCount()];
        for (int i = 0; i < locks.length; i++) {
            locks[i] = new Object();
        }
    }

    @Override
    public synchronized void onElected(int partition, int leaderEpoch) {
        loading.put(partition, leaderEpoch);
        try {
            loader.execute(() -> load(partition, leaderEpoch));
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            loading.remove(partition); // the broker is stopping
        }
    }

    @Override
    public void onResigned(int partition, int leaderEpoch) {
        synchronized (this) {
            serving.remove(partition);
            loading.remove(partition);
        }
        Runnable unload = () -> {
            synchronized (locks[partition]) {
                synchronized (this) {
                    if (serving.containsKey(partition) || loading.containsKey(partition)) {
                        return; // elected again since: the new load replaced the state
                    }
                }
                state.unloadPartition(partition);
                fences.keySet().removeIf(id -> state.partitionIndex(id.groupId()) == partition);
            }
        };
        try {
            loader.execute(unload);
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            // the broker is stopping: nothing is served any more
        }
        log.info("Share-state partition {} resigned in epoch {}", partition, leaderEpoch);
    }

    private void load(int partition, int leaderEpoch) {
        synchronized (locks[partition]) {
            synchronized (this) {
                if (!Integer.valueOf(leaderEpoch).equals(loading.get(partition))) {
                    return; // resigned (or elected again) before this load ran
                }
            }
            try {
                state.loadPartition(partition);
                fences.keySet().removeIf(id -> state.partitionIndex(id.groupId()) == partition);
            } catch (RuntimeException e) {
                log.error("Cannot load share-state partition {}; it is not served here", partition, e);
                synchronized (this) {
                    loading.remove(partition, leaderEpoch);
                }
                return;
            }
            synchronized (this) {
                if (loading.remove(partition, leaderEpoch)) {
                    serving.put(partition, leaderEpoch);
                }
            }
        }
        log.info("Share-state partition {} loaded in epoch {}", partition, leaderEpoch);
    }

    /** Completes once every load asked for so far has run (the broker's start waits for it on a single node). */
    public void awaitLoads(long timeoutMs) throws InterruptedException, ExecutionException, TimeoutException {
        loader.submit(() -> { }).get(timeoutMs, TimeUnit.MILLISECONDS);
    }

    /** Whether this broker serves the groups of state partition {@code partition} now. */
    public synchronized boolean serves(int partition) {
        return serving.containsKey(partition);
    }

    /** The partition of {@value LogShareStateStore#TOPIC} of {@code groupId}. */
    public int partitionOf(String groupId) {
        return state.partitionIndex(groupId);
    }

    /**
     * The saved state of a share-partition, encoded; {@code leaderEpoch} is the reader's leader epoch of the
     * topic-partition (-1: not fenced), from now on the oldest whose writes are taken.
     *
     * @throws NotCoordinatorException, CoordinatorLoadInProgressException, FencedLeaderEpochException
     */
    public Optional<LogShareStateStore.StoredState> read(String groupId, Uuid topicId, int partition,
                                                         int leaderEpoch) {
        int p = partitionOf(groupId);
        synchronized (locks[p]) {
            checkServing(p);
            fence(new Id(groupId, topicId, partition), leaderEpoch);
            return state.stored(groupId, topicId, partition);
        }
    }

    /** Appends one state of a share-partition; completes once it is on the in-sync replicas. */
    public CompletableFuture<Void> write(String groupId, Uuid topicId, int partition, int leaderEpoch,
                                         SharePartition.EncodedState encoded) {
        int p = partitionOf(groupId);
        int appendEpoch;
        try {
            synchronized (locks[p]) {
                appendEpoch = checkServing(p);
                fence(new Id(groupId, topicId, partition), leaderEpoch);
                state.write(groupId, topicId, partition, encoded);
            }
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return awaitAppended(p, appendEpoch);
    }

    /** Forgets a share-partition's saved state (a tombstone); completes once it is on the in-sync replicas. */
    public CompletableFuture<Void> delete(String groupId, Uuid topicId, int partition) {
        int p = partitionOf(groupId);
        int appendEpoch;
        try {
            synchronized (locks[p]) {
                appendEpoch = checkServing(p);
                state.delete(groupId, topicId, partition);
            }
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return awaitAppended(p, appendEpoch);
    }

    /** The share-partitions of {@code groupId} with saved state. */
    public List<Map.Entry<Uuid, Integer>> partitionsOf(String groupId) {
        int p = partitionOf(groupId);
        synchronized (locks[p]) {
            checkServing(p);
            return state.partitionsOf(groupId);
        }
    }

    /** Saves a group's settings (empty removes them); completes once they are on the in-sync replicas. */
    public CompletableFuture<Void> saveGroupConfig(String groupId, Map<String, String> configs) {
        int p = partitionOf(groupId);
        int appendEpoch;
        try {
            synchronized (locks[p]) {
                appendEpoch = checkServing(p);
                state.saveGroupConfig(groupId, configs);
            }
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return awaitAppended(p, appendEpoch);
    }

    /** The settings of the groups whose state partitions are served here. */
    public Map<String, Map<String, String>> groupConfigs() {
        return state.groupConfigs();
    }

    /**
     * Waits for an append made in leader epoch {@code appendEpoch} of state partition {@code p} (-1: a log without
     * epochs, tests) to reach the in-sync replicas. The awaiter binds its wait to the epoch it finds when called,
     * which is not necessarily the append's: were leadership lost and won back in between, the append may have been
     * truncated away with the interim leader's log, and a wait begun in the new epoch would pass the new log end and
     * answer a write that is gone. Epochs only grow, so a partition still led here in the append's epoch right after
     * the wait began means the wait began in that epoch too; otherwise the write is refused (NOT_COORDINATOR, and the
     * sender writes again to the current coordinator).
     */
    private CompletableFuture<Void> awaitAppended(int p, int appendEpoch) {
        CompletableFuture<Void> replicated = awaiter.awaitLogEnd(p);
        if (appendEpoch >= 0) {
            Optional<ShareLog> stateLog = topics.log(new TopicPartition(LogShareStateStore.TOPIC, p));
            if (stateLog.isEmpty() || !stateLog.get().isLeader() || stateLog.get().leaderEpoch() != appendEpoch) {
                return CompletableFuture.failedFuture(new NotCoordinatorException("Share-state partition " + p
                        + " changed leadership after an append in epoch " + appendEpoch + "; write again"));
            }
        }
        return replicated;
    }

    /** Under the partition's lock; returns the partition's leader epoch in its log (-1 if its log has none). */
    private int checkServing(int p) {
        Integer epoch;
        boolean inProgress;
        synchronized (this) {
            epoch = serving.get(p);
            inProgress = loading.containsKey(p);
        }
        if (epoch == null) {
            if (inProgress) {
                throw new CoordinatorLoadInProgressException("Share-state partition " + p + " is loading here");
            }
            throw new NotCoordinatorException("This broker does not lead share-state partition " + p);
        }
        TopicPartition tp = new TopicPartition(LogShareStateStore.TOPIC, p);
        Optional<ShareLog> stateLog = topics.log(tp);
        if (stateLog.isEmpty() || !stateLog.get().isLeader()
                || stateLog.get().leaderEpoch() >= 0 && stateLog.get().leaderEpoch() != epoch) {
            throw new NotCoordinatorException("This broker no longer leads " + tp + " in epoch " + epoch);
        }
        return stateLog.get().leaderEpoch();
    }

    /** Under the partition's lock. */
    private void fence(Id id, int leaderEpoch) {
        if (leaderEpoch < 0) {
            return;
        }
        int newest = Math.max(fences.getOrDefault(id, -1), topics.leaderEpoch(id.topicId(), id.partition()));
        if (leaderEpoch < newest) {
            throw new FencedLeaderEpochException("Leader epoch " + leaderEpoch + " of " + id.topicId() + "-"
                    + id.partition() + " is older than " + newest + ": a newer leader holds share group "
                    + id.groupId() + "'s share-partition");
        }
        fences.put(id, leaderEpoch);
    }

    @Override
    public void close() {
        loader.shutdownNow();
    }
}
