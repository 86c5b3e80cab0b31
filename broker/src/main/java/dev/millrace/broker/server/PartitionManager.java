package dev.millrace.broker.server;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.stream.Stream;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.coordinator.CoordinatorElection;
import dev.millrace.broker.coordinator.LeadershipListener;
import dev.millrace.broker.controller.MetadataImage;
import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.controller.MetadataImage.TopicImage;
import dev.millrace.broker.controller.MetadataListener;
import dev.millrace.broker.log.LogConfig;
import dev.millrace.broker.log.LogMaintenance;
import dev.millrace.broker.log.PartitionLog;
import dev.millrace.broker.log.Scheduler;
import dev.millrace.broker.replica.BrokerEndpoints;
import dev.millrace.broker.replica.EpochLogs;
import dev.millrace.broker.replica.IsrUpdater;
import dev.millrace.broker.replica.ReplicaConfig;
import dev.millrace.broker.replica.ReplicaFetcherManager;
import dev.millrace.protocol.net.ClientSecurity;

/**
 * Keeps one {@link Partition} (and its log under {@code <logsDir>/<topic>-<partition>}) for every
 * partition the metadata assigns to this broker: opens logs for new partitions (also for a broker a reassignment
 * adds: it starts as a follower and fetches from the leader), applies topic config changes, and closes and deletes
 * the logs of deleted topics and, once {@link #enableReplicaRemoval enabled}, of partitions a reassignment moved
 * away from this broker.
 *
 * <p>Replication: every image's state of each partition goes to {@link Partition#applyState}; a partition that
 * becomes a follower is handed to the {@link ReplicaFetcherManager} (which fetches it from its leader), one that
 * becomes leader or is deleted is taken from it. {@link #maybeShrinkIsr} is the leaders' periodic ISR check, run by
 * the broker every {@link ReplicaConfig#isrCheckIntervalMs()}. Listeners added with {@link #addChangeListener} hear
 * of every change to a partition's high watermark, role or ISR (the purgatories re-check their waiting requests).
 * Coordinators hear with {@link #addElectionListener} which partitions of their internal topic this broker leads;
 * {@link #addLeadershipListener} tells the same of every topic's partitions.
 *
 * <p>Threading: {@link #onMetadataUpdate} runs on the controller's applying thread, one update at a
 * time; lookups come from request threads and see a partition once its log is open.
 */
public final class PartitionManager implements MetadataListener, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(PartitionManager.class);

    private final int nodeId;
    private final File logsDir;
    private final Map<String, Object> logDefaults;
    private final Time time;
    private final Scheduler scheduler;
    private final LogMaintenance maintenance;
    private final ReplicaConfig replicaConfig;
    private final IsrUpdater isrUpdater;
    private final ReplicaFetcherManager fetchers;
    private final List<Consumer<TopicPartition>> changeListeners = new CopyOnWriteArrayList<>();
    private final Map<TopicPartition, Partition> partitions = new ConcurrentHashMap<>();
    /** Guards {@link #elections} and {@link #ledEpochs}: elections are told in order, registration included. */
    private final Object electionLock = new Object();
    private final Map<String, List<CoordinatorElection>> elections = new HashMap<>();
    /** Hear of the leadership of every topic's partitions ({@link #addLeadershipListener}). */
    private final List<LeadershipListener> leadershipListeners = new CopyOnWriteArrayList<>();
    /** The epoch each partition of a topic with election listeners is led here in; absent when not led here. */
    private final Map<TopicPartition, Integer> ledEpochs = new HashMap<>();
    /** Whether partitions no longer assigned here are removed (see {@link #enableReplicaRemoval}). */
    private volatile boolean replicaRemoval;
    /** Topics {@link #onMetadataUpdate} has looked at in full (built their log config), for tests. */
    private long topicsExamined;

    /** A broker that runs alone: no ISR changes, no other broker to fetch from. */
    public PartitionManager(int nodeId, File logsDir, Map<String, Object> logDefaults, Time time, Scheduler scheduler,
                            LogMaintenance maintenance) {
        this(nodeId, logsDir, logDefaults, time, scheduler, maintenance, ReplicaConfig.defaults(), IsrUpdater.UNSUPPORTED,
                BrokerEndpoints.NONE);
    }

    /**
     * @param time         the clock of the logs and of {@code replica.lag.time.max.ms}
     * @param isrUpdater   where leaders send ISR changes (the controller)
     * @param endpoints    where followers find their leaders
     */
    public PartitionManager(int nodeId, File logsDir, Map<String, Object> logDefaults, Time time, Scheduler scheduler,
                            LogMaintenance maintenance, ReplicaConfig replicaConfig, IsrUpdater isrUpdater,
                            BrokerEndpoints endpoints) {
        this(nodeId, logsDir, logDefaults, time, scheduler, maintenance, replicaConfig, isrUpdater, endpoints,
                ClientSecurity.PLAINTEXT);
    }

    /** @param security how followers connect to their leaders (the inter-broker listener's protocol) */
    public PartitionManager(int nodeId, File logsDir, Map<String, Object> logDefaults, Time time, Scheduler scheduler,
                            LogMaintenance maintenance, ReplicaConfig replicaConfig, IsrUpdater isrUpdater,
                            BrokerEndpoints endpoints, ClientSecurity security) {
        this.nodeId = nodeId;
        this.logsDir = logsDir;
        this.logDefaults = Map.copyOf(logDefaults);
        this.time = time;
        this.scheduler = scheduler;
        this.maintenance = maintenance;
        this.replicaConfig = replicaConfig;
        this.isrUpdater = isrUpdater;
        this.fetchers = new ReplicaFetcherManager(nodeId, replicaConfig, endpoints, security);
    }

    public int nodeId() {
        return nodeId;
    }

    public ReplicaConfig replicaConfig() {
        return replicaConfig;
    }

    /** Also tells {@code listener} of every change to a partition's high watermark, role or ISR (any thread). */
    public void addChangeListener(Consumer<TopicPartition> listener) {
        changeListeners.add(listener);
    }

    /**
     * Tells {@code election} which partitions of {@code topic} this broker leads: at once for those it leads now,
     * then at every change (see {@link CoordinatorElection} for the order and threading). Call before or after the
     * partitions exist.
     */
    public void addElectionListener(String topic, CoordinatorElection election) {
        synchronized (electionLock) {
            elections.computeIfAbsent(topic, t -> new CopyOnWriteArrayList<>()).add(election);
            for (Partition partition : partitions.values()) {
                TopicPartition tp = partition.topicPartition();
                if (tp.topic().equals(topic)) {
                    Integer led = ledEpochs.get(tp);
                    if (led != null) {
                        election.onElected(tp.partition(), led);
                    } else {
                        noteLeadership(partition);
                    }
                }
            }
        }
    }

    /**
     * As {@link #addElectionListener}, for the partitions of every topic (share-partitions follow the leadership of
     * user topics' partitions): {@code listener} hears at once of those led here now, then of every change.
     */
    public void addLeadershipListener(LeadershipListener listener) {
        synchronized (electionLock) {
            leadershipListeners.add(listener);
            for (Partition partition : partitions.values()) {
                TopicPartition tp = partition.topicPartition();
                Integer led = ledEpochs.get(tp);
                if (led != null) {
                    listener.onElected(tp, led);
                } else {
                    noteLeadership(partition);
                }
            }
        }
    }

    /** Tells the election listeners of {@code partition}'s topic if its leadership here began or ended. */
    private void noteLeadership(Partition partition) {
        TopicPartition tp = partition.topicPartition();
        synchronized (electionLock) {
            List<CoordinatorElection> listeners = elections.getOrDefault(tp.topic(), List.of());
            if (listeners.isEmpty() && leadershipListeners.isEmpty()) {
                return;
            }
            boolean leads = partitions.get(tp) == partition && partition.isLeader();
            int epoch = partition.leaderEpoch();
            Integer led = ledEpochs.get(tp);
            if (led != null && (!leads || led != epoch)) {
                ledEpochs.remove(tp);
                listeners.forEach(l -> l.onResigned(tp.partition(), led));
                leadershipListeners.forEach(l -> l.onResigned(tp, led));
            }
            if (leads && (led == null || led != epoch)) {
                ledEpochs.put(tp, epoch);
                listeners.forEach(l -> l.onElected(tp.partition(), epoch));
                leadershipListeners.forEach(l -> l.onElected(tp, epoch));
            }
        }
    }

    /** The leaders' ISR check: each partition led here proposes removing followers that lag too long. */
    public void maybeShrinkIsr() {
        for (Partition partition : partitions.values()) {
            partition.maybeShrinkIsr(replicaConfig.replicaLagTimeMaxMs());
        }
    }

    /** The follower side, for tests. */
    ReplicaFetcherManager fetchers() {
        return fetchers;
    }

    private void onPartitionChange(TopicPartition tp) {
        for (Consumer<TopicPartition> listener : changeListeners) {
            listener.accept(tp);
        }
    }

    public Optional<Partition> partition(TopicPartition tp) {
        return Optional.ofNullable(partitions.get(tp));
    }

    /** The log config of a topic: broker defaults overlaid with the topic's own settings. */
    public LogConfig logConfig(Map<String, String> topicConfigs) {
        Map<String, Object> merged = new HashMap<>(logDefaults);
        merged.putAll(topicConfigs);
        return new LogConfig(merged);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Work is proportional to what changed: the controller's images share the {@link TopicImage} of every topic an
     * update did not touch, and such a topic is passed over once all its partitions here are open (a partition whose
     * log failed to open is tried again at the next update). Building a topic's {@link LogConfig} costs tens of
     * microseconds, which for every topic at every update made creating a topic on a broker with a thousand of them
     * take several milliseconds.
     */
    @Override
    public void onMetadataUpdate(MetadataImage previous, MetadataImage current) {
        for (TopicImage topic : current.topics().values()) {
            if (previous.topics().get(topic.name()) == topic && allOpen(topic)) {
                continue;
            }
            topicsExamined++;
            LogConfig config = logConfig(topic.configs());
            for (PartitionImage p : topic.partitions().values()) {
                if (!p.replicas().contains(nodeId)) {
                    continue;
                }
                TopicPartition tp = new TopicPartition(topic.name(), p.partition());
                Partition existing = partitions.get(tp);
                if (existing == null || !existing.topicId().equals(topic.topicId())) {
                    if (existing != null) {
                        remove(tp, "its topic was deleted and created again");
                    }
                    open(tp, topic, p, config);
                } else {
                    if (!existing.log().config().originals().equals(config.originals())) {
                        existing.log().updateConfig(config);
                    }
                    applyState(existing, p);
                }
            }
        }
        for (Map.Entry<TopicPartition, Partition> entry : partitions.entrySet()) {
            TopicPartition tp = entry.getKey();
            TopicImage topic = current.topics().get(tp.topic());
            PartitionImage state = topic == null ? null : topic.partitions().get(tp.partition());
            if (state == null || !topic.topicId().equals(entry.getValue().topicId())) {
                remove(tp, "its topic was deleted");
            } else if (!state.replicas().contains(nodeId)) {
                fetchers.stopFollowing(tp);
                if (replicaRemoval) {
                    remove(tp, "broker " + nodeId + " is no longer one of its replicas " + state.replicas());
                }
            }
        }
    }

    /**
     * From now on, a partition whose replicas no longer include this broker (a reassignment moved it away) is closed
     * and its log directory deleted. Call once the controller has replayed the metadata log at start: replayed images
     * are history, and one that dropped this broker may be followed by one that adds it back, with records it has
     * fetched since that only the log on disk holds. Before this call such a partition only stops fetching (a later
     * update removes it). Logs of deleted topics are removed at once either way: a topic id never comes back.
     */
    public void enableReplicaRemoval() {
        replicaRemoval = true;
    }

    /** How many topics metadata updates have looked at in full so far (controller's applying thread). */
    long topicsExamined() {
        return topicsExamined;
    }

    /** Whether every partition of {@code topic} assigned here has its log open, for this incarnation of the topic. */
    private boolean allOpen(TopicImage topic) {
        for (PartitionImage p : topic.partitions().values()) {
            if (p.replicas().contains(nodeId)) {
                Partition existing = partitions.get(new TopicPartition(topic.name(), p.partition()));
                if (existing == null || !existing.topicId().equals(topic.topicId())) {
                    return false;
                }
            }
        }
        return true;
    }

    private void open(TopicPartition tp, TopicImage topic, PartitionImage state, LogConfig config) {
        try {
            PartitionLog partitionLog = PartitionLog.open(new File(logsDir, tp.topic() + "-" + tp.partition()), config,
                    time, scheduler);
            Partition partition = new Partition(tp, topic.topicId(), partitionLog, EpochLogs.forLog(partitionLog),
                    new Partition.Context(nodeId, time, isrUpdater, this::onPartitionChange));
            applyState(partition, state);
            partitions.put(tp, partition);
            maintenance.register(partitionLog);
            noteLeadership(partition);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot open the log of " + tp, e);
        }
    }

    private void applyState(Partition partition, PartitionImage state) {
        switch (partition.applyState(state)) {
            case BECAME_LEADER -> fetchers.stopFollowing(partition.topicPartition());
            case BECAME_FOLLOWER -> {
                if (partition.isFollower()) {
                    fetchers.follow(partition, state.leader(), state.leaderEpoch());
                } else {
                    fetchers.stopFollowing(partition.topicPartition());
                }
            }
            default -> {
            }
        }
        noteLeadership(partition);
    }

    private void remove(TopicPartition tp, String why) {
        fetchers.stopFollowing(tp);
        Partition partition = partitions.remove(tp);
        if (partition == null) {
            return;
        }
        noteLeadership(partition);
        maintenance.unregister(partition.log()); // waits for a maintenance round working on this log
        partition.log().close();
        deleteRecursively(partition.log().dir().toPath());
        log.info("Deleted the log of {}: {}", tp, why);
    }

    private static void deleteRecursively(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            log.warn("Could not delete {}: {}", dir, e.toString());
        }
    }

    @Override
    public void close() {
        fetchers.close();
        for (Partition partition : partitions.values()) {
            maintenance.unregister(partition.log());
            partition.log().close();
        }
        partitions.clear();
    }
}
