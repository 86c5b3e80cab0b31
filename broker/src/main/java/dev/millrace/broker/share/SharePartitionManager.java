package dev.millrace.broker.share;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.coordinator.LeadershipListener;
import dev.millrace.delay.Time;
import dev.millrace.delay.Timer;

/**
 * Holds the {@link SharePartition}s of this broker, one per (share group, topic partition), created
 * the first time a member fetches the partition: from its persisted state if there is one, else at
 * the log start ({@code share.auto.offset.reset=earliest}, the group's setting in
 * {@link ShareGroupConfigs}, else the broker's {@code group.share.auto.offset.reset}) or the high
 * watermark ({@code latest}). Each uses the group's delivery count limit and redelivery backoff
 * ({@link ShareGroupConfigs#effective}), also when they change later.
 *
 * <p>In a cluster a share-partition lives on the leader of its topic-partition, as in Kafka: it is created only
 * there (a fetch elsewhere is answered NOT_LEADER_OR_FOLLOWER), with the state saved at the share-state coordinator
 * ({@link ShareStateStore#load(SharePartitionKey, int)}, fenced by this broker's leader epoch), and dropped as soon as
 * this broker stops leading the topic-partition ({@link #onResigned}, registered with the broker's partitions). What
 * survives the move: everything saved (acknowledgements, acquisitions with their delivery counts: an acquisition is
 * saved before its records are handed out, so records acquired under a lock held on the old leader come back
 * available at the new one, counted as delivered once, or archived and dead-lettered there if that was the last
 * delivery the group allows, {@link SharePartition#restore}). What does not: the locks themselves, share sessions, selector
 * cursors and lookaheads.
 *
 * <p>Threading: thread-safe.
 */
public final class SharePartitionManager implements LeadershipListener {

    private static final Logger LOG = LoggerFactory.getLogger(SharePartitionManager.class);

    private record Key(String groupId, TopicPartition topicPartition) {
    }

    private final ShareGroupConfig config;
    private final ShareTopics topics;
    private final Timer timer;
    private final Time time;
    private final SharePartitionListener listener;
    private final ShareStateStore store;
    private final Map<Key, SharePartition> partitions = new ConcurrentHashMap<>();
    /** The creations in progress ({@link #createOnce}), by key. */
    private final Map<Key, CompletableFuture<SharePartition>> creating = new ConcurrentHashMap<>();
    private volatile ShareGroupConfigs groupConfigs;
    /**
     * Runs selective members' scans ahead of their next fetches ({@link SelectiveLookahead}) for every
     * share-partition here: one daemon thread, started when there is work and ended after 10 s without.
     */
    private final ThreadPoolExecutor lookaheads = new ThreadPoolExecutor(0, 1, 10, TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(), r -> {
                Thread t = new Thread(r, "millrace-share-lookahead");
                t.setDaemon(true);
                return t;
            });

    public SharePartitionManager(ShareGroupConfig config, ShareTopics topics, Timer timer, Time time,
                                 SharePartitionListener listener, ShareStateStore store) {
        this.config = Objects.requireNonNull(config, "config");
        this.topics = Objects.requireNonNull(topics, "topics");
        this.timer = Objects.requireNonNull(timer, "timer");
        this.time = Objects.requireNonNull(time, "time");
        this.listener = Objects.requireNonNull(listener, "listener");
        this.store = Objects.requireNonNull(store, "store");
    }

    /** Per-group settings to use for new share-partitions instead of the broker's; set once, before serving. */
    void setGroupConfigs(ShareGroupConfigs groupConfigs) {
        this.groupConfigs = groupConfigs;
        groupConfigs.onChange(groupId -> partitionsOf(groupId).forEach(p -> p.reconfigure(
                groupConfigs.effective(groupId))));
    }

    /**
     * The share-partition of {@code groupId} on {@code tp}, created if needed (its state loaded from the share-state
     * coordinator, with this broker's leader epoch of {@code tp}); empty if the topic-partition does not exist.
     *
     * @throws NotLeaderOrFollowerException if this broker does not lead {@code tp}
     * @throws org.apache.kafka.common.errors.ApiException if the saved state cannot be loaded (the share-state
     *         coordinator is not reachable within the store's bound)
     */
    public Optional<SharePartition> getOrCreate(String groupId, Uuid topicId, TopicPartition tp) {
        SharePartition existing = partitions.get(new Key(groupId, tp));
        if (existing != null && !existing.isClosed()) {
            existing.settleRestore(); // if its first attempt could not save
            return Optional.of(existing);
        }
        Optional<ShareLog> log = topics.log(tp);
        if (log.isEmpty()) {
            if (notLeader(tp)) {
                throw new NotLeaderOrFollowerException("This broker does not lead " + tp);
            }
            return Optional.empty();
        }
        if (!log.get().isLeader()) {
            throw new NotLeaderOrFollowerException("This broker does not lead " + tp);
        }
        SharePartition partition = createOnce(new Key(groupId, tp), () -> create(groupId, topicId, tp, log.get()));
        if (partition.leaderEpoch() >= 0 && (!log.get().isLeader() || log.get().leaderEpoch() != partition.leaderEpoch())) {
            // leadership moved while the state loaded: the resignation may have missed it
            drop(new Key(groupId, tp), partition);
            throw new NotLeaderOrFollowerException("This broker no longer leads " + tp);
        }
        partition.settleRestore(); // records restored at their delivery limit: archived, saved, then dead-lettered
        return Optional.of(partition);
    }

    /**
     * The open share-partition of {@code key}, created by {@code creator} if there is none. At most one thread
     * creates a given key's share-partition at a time; others asking for it meanwhile wait for that creation and get
     * its outcome. The creation (which loads the saved state, a remote call that may take as long as the store's
     * bound) runs outside every lock of {@link #partitions}: were it inside {@code ConcurrentHashMap.compute}, it
     * would hold that map's bin, and {@link #onResigned}, which runs on the metadata quorum's apply thread, would
     * block removing any key of the same bin until the load finished, and with it every later metadata change on
     * this node, including its start as the active controller (seen in a chaos run: a new leader's term started
     * seconds late, so no dead broker was fenced meanwhile).
     */
    private SharePartition createOnce(Key key, Supplier<SharePartition> creator) {
        SharePartition existing = partitions.get(key);
        if (existing != null && !existing.isClosed()) {
            return existing;
        }
        CompletableFuture<SharePartition> mine = new CompletableFuture<>();
        CompletableFuture<SharePartition> other = creating.putIfAbsent(key, mine);
        if (other != null) {
            try {
                return other.join();
            } catch (CompletionException e) {
                throw e.getCause() instanceof RuntimeException cause ? cause : e;
            }
        }
        try {
            existing = partitions.get(key); // created between the first look and the reservation
            SharePartition created = existing != null && !existing.isClosed() ? existing : creator.get();
            partitions.put(key, created);
            mine.complete(created);
            return created;
        } catch (RuntimeException e) {
            mine.completeExceptionally(e);
            throw e;
        } finally {
            creating.remove(key, mine);
        }
    }

    /**
     * Whether {@code tp} exists but this broker does not lead it: share requests for it are answered
     * NOT_LEADER_OR_FOLLOWER, and the client looks for its leader.
     */
    public boolean notLeader(TopicPartition tp) {
        Optional<ShareLog> log = topics.log(tp);
        if (log.isPresent()) {
            return !log.get().isLeader();
        }
        return tp.partition() >= 0 && tp.partition() < topics.partitionCount(tp.topic());
    }

    /**
     * This broker stopped leading {@code tp}: drops its share-partitions at once ({@link SharePartition#close()}; the
     * new leader loads their saved state) and wakes the fetches parked on them, which then answer
     * NOT_LEADER_OR_FOLLOWER for it.
     */
    @Override
    public void onResigned(TopicPartition tp, int leaderEpoch) {
        partitions.forEach((key, partition) -> {
            if (key.topicPartition().equals(tp)) {
                drop(key, partition);
            }
        });
    }

    @Override
    public void onElected(TopicPartition tp, int leaderEpoch) {
        // share-partitions are created at their first fetch, loading their state then
    }

    private void drop(Key key, SharePartition partition) {
        partitions.remove(key, partition);
        partition.close();
        listener.onRecordsAvailable(partition.key());
    }

    /** The share-partition if it exists. */
    /**
     * The share-partition of {@code groupId} on {@code tp}, its state loaded first if this broker leads {@code tp} and
     * has not served it yet (a RETURN of records read ahead from the previous leader may come before any fetch).
     *
     * @throws NotLeaderOrFollowerException if another broker leads {@code tp}
     */
    public Optional<SharePartition> load(String groupId, TopicPartition tp) {
        Optional<SharePartition> loaded = get(groupId, tp);
        if (loaded.isPresent()) {
            return loaded;
        }
        Optional<Uuid> topicId = topics.idOf(tp.topic());
        return topicId.isEmpty() ? Optional.empty() : getOrCreate(groupId, topicId.get(), tp);
    }

    public Optional<SharePartition> get(String groupId, TopicPartition tp) {
        return Optional.ofNullable(partitions.get(new Key(groupId, tp))).filter(p -> !p.isClosed());
    }

    /** Every share-partition on {@code tp} (one per share group that reads it here). */
    public List<SharePartition> partitionsOn(TopicPartition tp) {
        return partitions.entrySet().stream().filter(e -> e.getKey().topicPartition().equals(tp))
                .map(Map.Entry::getValue).filter(p -> !p.isClosed()).toList();
    }

    /** Every share-partition of {@code groupId}. */
    public List<SharePartition> partitionsOf(String groupId) {
        return partitions.entrySet().stream().filter(e -> e.getKey().groupId().equals(groupId))
                .map(Map.Entry::getValue).toList();
    }

    /**
     * Forgets the share-partition of {@code groupId} on {@code tp} here and in the store (its saved
     * state gets a tombstone). The group must have no members.
     */
    public void delete(String groupId, Uuid topicId, TopicPartition tp) {
        partitions.remove(new Key(groupId, tp));
        store.delete(groupId, topicId, tp.partition());
    }

    /** Releases every record {@code memberId} holds in any partition of {@code groupId}. */
    public void releaseMember(String groupId, String memberId) {
        partitionsOf(groupId).forEach(p -> p.releaseMember(memberId));
    }

    private SharePartition create(String groupId, Uuid topicId, TopicPartition tp, ShareLog log) {
        SharePartitionKey key = new SharePartitionKey(groupId, topicId, tp);
        int leaderEpoch = log.leaderEpoch();
        Optional<SharePartitionSnapshot> persisted = store.load(key, leaderEpoch);
        ShareGroupConfigs perGroup = groupConfigs;
        boolean earliest = perGroup != null ? perGroup.autoOffsetResetEarliest(groupId) : config.autoOffsetResetEarliest();
        long start = earliest ? log.logStartOffset()
                : perGroup != null && perGroup.readCommitted(groupId) ? log.lastStableOffset() : log.highWatermark();
        ShareLog view = new IsolatedShareLog(log, () -> perGroup != null && perGroup.readCommitted(groupId));
        ShareGroupConfig effective = perGroup != null ? perGroup.effective(groupId) : config;
        SharePartition partition = new SharePartition(key, view, effective, timer, time, listener,
                persisted.map(SharePartitionSnapshot::startOffset).orElse(start), lookaheads);
        partition.leaderEpoch(leaderEpoch);
        persisted.ifPresent(partition::restore);
        LOG.info("Share-partition {} created in leader epoch {}: {}", key, leaderEpoch, persisted.map(s -> "state "
                + s.version() + " loaded, offsets " + s.startOffset() + ".." + s.endOffset() + ", "
                + s.entries().size() + " entries").orElse("no saved state, starting at offset " + start));
        return partition;
    }
}
