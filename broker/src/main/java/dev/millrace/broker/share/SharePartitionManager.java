package dev.millrace.broker.share;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

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
 * <p>Threading: thread-safe.
 */
public final class SharePartitionManager {

    private record Key(String groupId, TopicPartition topicPartition) {
    }

    private final ShareGroupConfig config;
    private final ShareTopics topics;
    private final Timer timer;
    private final Time time;
    private final SharePartitionListener listener;
    private final ShareStateStore store;
    private final Map<Key, SharePartition> partitions = new ConcurrentHashMap<>();
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

    /** The share-partition of {@code groupId} on {@code tp}, created if needed; empty if the log is not here. */
    public Optional<SharePartition> getOrCreate(String groupId, Uuid topicId, TopicPartition tp) {
        SharePartition existing = partitions.get(new Key(groupId, tp));
        if (existing != null) {
            return Optional.of(existing);
        }
        Optional<ShareLog> log = topics.log(tp);
        if (log.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(partitions.computeIfAbsent(new Key(groupId, tp), k -> create(groupId, topicId, tp,
                log.get())));
    }

    /** The share-partition if it exists. */
    public Optional<SharePartition> get(String groupId, TopicPartition tp) {
        return Optional.ofNullable(partitions.get(new Key(groupId, tp)));
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
        Optional<SharePartitionSnapshot> persisted = store.load(key);
        ShareGroupConfigs perGroup = groupConfigs;
        boolean earliest = perGroup != null ? perGroup.autoOffsetResetEarliest(groupId) : config.autoOffsetResetEarliest();
        long start = earliest ? log.logStartOffset()
                : perGroup != null && perGroup.readCommitted(groupId) ? log.lastStableOffset() : log.highWatermark();
        ShareLog view = new IsolatedShareLog(log, () -> perGroup != null && perGroup.readCommitted(groupId));
        ShareGroupConfig effective = perGroup != null ? perGroup.effective(groupId) : config;
        SharePartition partition = new SharePartition(key, view, effective, timer, time, listener,
                persisted.map(SharePartitionSnapshot::startOffset).orElse(start), lookaheads);
        persisted.ifPresent(partition::restore);
        return partition;
    }
}
