package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.controller.MetadataImage;
import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.controller.MetadataImage.TopicImage;
import dev.millrace.broker.log.LogMaintenance;

@Timeout(30)
class PartitionManagerTest {

    private static final int NODE = 1;

    @TempDir
    Path dir;

    private PartitionManager manager;
    private final Map<String, TopicImage> topics = new TreeMap<>();
    private MetadataImage image = MetadataImage.EMPTY;

    @BeforeEach
    void start() {
        manager = new PartitionManager(NODE, dir.resolve("logs").toFile(), Map.of(), Time.SYSTEM,
                (name, task, delayMs) -> { }, new LogMaintenance());
    }

    @AfterEach
    void stop() {
        manager.close();
    }

    @Test
    void shouldLookOnlyAtTheTopicsAnUpdateChanged() {
        for (int i = 0; i < 50; i++) {
            publish(topic("t" + i, Map.of()));
        }
        long before = manager.topicsExamined();

        publish(topic("new", Map.of()));
        assertThat(manager.partition(new TopicPartition("new", 0))).isPresent();
        assertThat(manager.topicsExamined() - before).isEqualTo(1);

        publish(new TopicImage("t7", topics.get("t7").topicId(), topics.get("t7").partitions(),
                Map.of("retention.ms", "1234")));
        assertThat(manager.topicsExamined() - before).isEqualTo(2);
        assertThat(manager.partition(new TopicPartition("t7", 0)).orElseThrow().log().config().retentionMs())
                .isEqualTo(1234L);
        assertThat(manager.partition(new TopicPartition("t8", 0)).orElseThrow().log().config().retentionMs())
                .isNotEqualTo(1234L);
    }

    @Test
    void shouldOpenAgainAtTheNextUpdateALogThatFailedToOpen() throws IOException {
        File blocker = dir.resolve("logs").resolve("blocked-0").toFile();
        Files.createDirectories(blocker.toPath().getParent());
        Files.writeString(blocker.toPath(), "a file where the log directory should be");
        TopicImage blocked = topic("blocked", Map.of());
        topics.put(blocked.name(), blocked);
        MetadataImage next = new MetadataImage(image.appliedIndex() + 1, Map.copyOf(topics));
        assertThatThrownBy(() -> manager.onMetadataUpdate(image, next)).isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("blocked-0");
        image = next;
        assertThat(manager.partition(new TopicPartition("blocked", 0))).isEmpty();

        Files.delete(blocker.toPath());
        publish(topic("other", Map.of()));

        assertThat(manager.partition(new TopicPartition("blocked", 0))).isPresent();
        assertThat(manager.partition(new TopicPartition("other", 0))).isPresent();
    }

    @Test
    void shouldDeleteTheLogOfADeletedTopicAndOpenARecreatedOne() {
        TopicImage first = topic("gone", Map.of());
        publish(first);
        File logDir = manager.partition(new TopicPartition("gone", 0)).orElseThrow().log().dir();

        topics.remove("gone");
        MetadataImage next = new MetadataImage(image.appliedIndex() + 1, Map.copyOf(topics));
        manager.onMetadataUpdate(image, next);
        image = next;
        assertThat(manager.partition(new TopicPartition("gone", 0))).isEmpty();
        assertThat(logDir).doesNotExist();

        TopicImage again = topic("gone", Map.of());
        publish(again);
        assertThat(manager.partition(new TopicPartition("gone", 0)).orElseThrow().topicId())
                .isEqualTo(again.topicId()).isNotEqualTo(first.topicId());
    }

    @Test
    void shouldRemoveAReplicaMovedAwayOnlyOnceRemovalIsEnabled() {
        TopicImage moved = topic("moved", Map.of());
        publish(moved);
        File logDir = manager.partition(new TopicPartition("moved", 0)).orElseThrow().log().dir();
        TopicImage elsewhere = new TopicImage("moved", moved.topicId(),
                Map.of(0, new PartitionImage(0, List.of(2, 3), List.of(2, 3), 2, 1, 1)), Map.of());

        // while the controller replays its log at start, an image that drops this broker may be history
        publish(elsewhere);
        assertThat(manager.partition(new TopicPartition("moved", 0))).isPresent();
        assertThat(logDir).isDirectory();

        manager.enableReplicaRemoval();
        publish(topic("unrelated", Map.of()));
        assertThat(manager.partition(new TopicPartition("moved", 0))).isEmpty();
        assertThat(logDir).doesNotExist();
        assertThat(manager.partition(new TopicPartition("unrelated", 0))).isPresent();
    }

    @Test
    void shouldDeleteTheOldLogOfATopicRecreatedWithoutThisBroker() {
        publish(topic("renewed", Map.of()));
        File logDir = manager.partition(new TopicPartition("renewed", 0)).orElseThrow().log().dir();

        publish(new TopicImage("renewed", Uuid.randomUuid(),
                Map.of(0, new PartitionImage(0, List.of(2), List.of(2), 2, 0, 0)), Map.of()));
        assertThat(manager.partition(new TopicPartition("renewed", 0))).isEmpty();
        assertThat(logDir).doesNotExist();
    }

    @Test
    void shouldTellElectionListenersWhenLeadershipBeginsAndEndsInOrder() {
        List<String> events = new java.util.concurrent.CopyOnWriteArrayList<>();
        TopicImage led = topic("__coordinated", Map.of());
        publish(led);
        manager.addElectionListener("__coordinated", new dev.millrace.broker.coordinator.CoordinatorElection() {
            @Override
            public void onElected(int partition, int leaderEpoch) {
                events.add("elected " + partition + "@" + leaderEpoch);
            }

            @Override
            public void onResigned(int partition, int leaderEpoch) {
                events.add("resigned " + partition + "@" + leaderEpoch);
            }
        });
        assertThat(events).containsExactly("elected 0@0"); // told at once of what it leads already

        publish(withState(led, new PartitionImage(0, List.of(NODE, 2), List.of(NODE, 2), 2, 1, 1)));
        publish(withState(led, new PartitionImage(0, List.of(NODE, 2), List.of(NODE, 2), NODE, 2, 2)));
        // a newer epoch of its own leadership is a resignation and an election
        publish(withState(led, new PartitionImage(0, List.of(NODE, 2), List.of(NODE, 2), NODE, 3, 3)));
        // an ISR change in the same epoch is neither
        publish(withState(led, new PartitionImage(0, List.of(NODE, 2), List.of(NODE), NODE, 3, 4)));
        publish(topic("unrelated", Map.of()));
        topics.remove("__coordinated");
        publish(topic("other", Map.of())); // the topic is deleted with this image

        assertThat(events).containsExactly("elected 0@0", "resigned 0@0", "elected 0@2", "resigned 0@2",
                "elected 0@3", "resigned 0@3");
    }

    private static TopicImage withState(TopicImage topic, PartitionImage state) {
        return new TopicImage(topic.name(), topic.topicId(), Map.of(state.partition(), state), topic.configs());
    }

    private TopicImage topic(String name, Map<String, String> configs) {
        return new TopicImage(name, Uuid.randomUuid(),
                Map.of(0, new PartitionImage(0, List.of(NODE), List.of(NODE), NODE, 0, 0)), configs);
    }

    /** Applies an image in which {@code changed} replaced (or joined) its topic and every other topic is shared. */
    private void publish(TopicImage changed) {
        topics.put(changed.name(), changed);
        MetadataImage next = new MetadataImage(image.appliedIndex() + 1, Map.copyOf(topics));
        manager.onMetadataUpdate(image, next);
        image = next;
    }
}
