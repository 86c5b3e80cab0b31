package dev.millrace.broker.server;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.controller.MetadataImage;
import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.controller.MetadataImage.TopicImage;
import dev.millrace.broker.controller.MetadataListener;
import dev.millrace.broker.log.LogConfig;
import dev.millrace.broker.log.LogMaintenance;
import dev.millrace.broker.log.PartitionLog;
import dev.millrace.broker.log.Scheduler;

/**
 * Keeps one {@link Partition} (and its log under {@code <logsDir>/<topic>-<partition>}) for every
 * partition the metadata assigns to this broker: opens logs for new partitions, applies topic config
 * changes, and closes and deletes the logs of deleted topics.
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
    private final Map<TopicPartition, Partition> partitions = new ConcurrentHashMap<>();
    /** Topics {@link #onMetadataUpdate} has looked at in full (built their log config), for tests. */
    private long topicsExamined;

    public PartitionManager(int nodeId, File logsDir, Map<String, Object> logDefaults, Time time, Scheduler scheduler,
                            LogMaintenance maintenance) {
        this.nodeId = nodeId;
        this.logsDir = logsDir;
        this.logDefaults = Map.copyOf(logDefaults);
        this.time = time;
        this.scheduler = scheduler;
        this.maintenance = maintenance;
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
                        remove(tp);
                    }
                    open(tp, topic, p, config);
                } else {
                    existing.updateState(p);
                    if (!existing.log().config().originals().equals(config.originals())) {
                        existing.log().updateConfig(config);
                    }
                }
            }
        }
        for (TopicPartition tp : partitions.keySet()) {
            TopicImage topic = current.topics().get(tp.topic());
            if (topic == null || !topic.partitions().containsKey(tp.partition())) {
                remove(tp);
            }
        }
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
            partitions.put(tp, new Partition(tp, topic.topicId(), partitionLog, state));
            maintenance.register(partitionLog);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot open the log of " + tp, e);
        }
    }

    private void remove(TopicPartition tp) {
        Partition partition = partitions.remove(tp);
        if (partition == null) {
            return;
        }
        maintenance.unregister(partition.log()); // waits for a maintenance round working on this log
        partition.log().close();
        deleteRecursively(partition.log().dir().toPath());
        log.info("Deleted the log of {}", tp);
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
        for (Partition partition : partitions.values()) {
            maintenance.unregister(partition.log());
            partition.log().close();
        }
        partitions.clear();
    }
}
