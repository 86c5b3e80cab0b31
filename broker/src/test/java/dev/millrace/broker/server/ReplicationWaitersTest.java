package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.CoordinatorNotAvailableException;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.controller.MetadataImage;
import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.controller.MetadataImage.TopicImage;
import dev.millrace.broker.coordinator.ReplicationAwaiter;
import dev.millrace.broker.log.AppendOrigin;
import dev.millrace.broker.log.LogMaintenance;
import dev.millrace.broker.replica.BrokerEndpoints;
import dev.millrace.broker.replica.IsrUpdater;
import dev.millrace.broker.replica.ReplicaConfig;
import dev.millrace.delay.SystemTimer;
import dev.millrace.delay.Timer;
import dev.millrace.delay.TimerReaper;

@Timeout(30)
class ReplicationWaitersTest {

    private static final int NODE = 1;
    private static final String TOPIC = "__coordinated";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);

    @TempDir
    Path dir;

    private final Uuid topicId = Uuid.randomUuid();
    private PartitionManager manager;
    private Timer timer;
    private MetadataImage image = MetadataImage.EMPTY;

    @BeforeEach
    void start() {
        manager = new PartitionManager(NODE, dir.resolve("logs").toFile(), Map.of(), Time.SYSTEM,
                (name, task, delayMs) -> { }, new LogMaintenance(), ReplicaConfig.defaults(),
                IsrUpdater.UNSUPPORTED, BrokerEndpoints.NONE);
        timer = TimerReaper.start("test-timer-reaper", new SystemTimer("test-timer"), TimerReaper.DEFAULT_REAP_INTERVAL_MS);
    }

    @AfterEach
    void stop() throws Exception {
        timer.close();
        manager.close();
    }

    private ReplicationAwaiter waiters(long timeoutMs) {
        ReplicationWaiters waiters = new ReplicationWaiters(manager, timer, timeoutMs);
        manager.addChangeListener(waiters::onPartitionChange);
        return waiters.forTopic(TOPIC);
    }

    @Test
    void shouldAnswerAtOnceWhenTheLeaderIsTheWholeIsr() {
        ReplicationAwaiter awaiter = waiters(60_000);
        publish(new PartitionImage(0, List.of(NODE), List.of(NODE), NODE, 0, 0));
        append();

        assertThat(awaiter.awaitLogEnd(0)).isCompleted();
    }

    @Test
    void shouldWaitForTheIsrAndCompleteWhenTheHighWatermarkPassesTheAppend() {
        ReplicationAwaiter awaiter = waiters(60_000);
        publish(new PartitionImage(0, List.of(NODE, 2), List.of(NODE, 2), NODE, 0, 0));
        append();

        CompletableFuture<Void> waiting = awaiter.awaitLogEnd(0);
        assertThat(waiting).isNotDone(); // broker 2 has not fetched the record

        // broker 2 leaves the ISR: the leader alone holds the high watermark, which moves to the log end
        publish(new PartitionImage(0, List.of(NODE, 2), List.of(NODE), NODE, 0, 1));
        assertThat(waiting).isCompleted();
    }

    @Test
    void shouldFailWithNotCoordinatorWhenLeadershipMovesFirst() {
        ReplicationAwaiter awaiter = waiters(60_000);
        publish(new PartitionImage(0, List.of(NODE, 2), List.of(NODE, 2), NODE, 0, 0));
        append();
        CompletableFuture<Void> waiting = awaiter.awaitLogEnd(0);

        publish(new PartitionImage(0, List.of(NODE, 2), List.of(NODE, 2), 2, 1, 1));

        assertThatThrownBy(waiting::join).isInstanceOf(CompletionException.class)
                .hasCauseInstanceOf(NotCoordinatorException.class);
        assertThatThrownBy(() -> awaiter.awaitLogEnd(0).join()).hasCauseInstanceOf(NotCoordinatorException.class);
    }

    @Test
    void shouldFailWithCoordinatorNotAvailableWhenTheReplicasDoNotCatchUpInTime() throws Exception {
        ReplicationAwaiter awaiter = waiters(50);
        publish(new PartitionImage(0, List.of(NODE, 2), List.of(NODE, 2), NODE, 0, 0));
        append();

        CompletableFuture<Void> waiting = awaiter.awaitLogEnd(0);

        assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(
                CoordinatorNotAvailableException.class).hasMessageContaining(TP.toString());
    }

    private void append() {
        manager.partition(TP).orElseThrow().appendAsLeader(MemoryRecords.withRecords(Compression.NONE,
                new SimpleRecord("k".getBytes(), "v".getBytes())), AppendOrigin.COORDINATOR);
    }

    private void publish(PartitionImage state) {
        MetadataImage next = new MetadataImage(image.appliedIndex() + 1,
                Map.of(TOPIC, new TopicImage(TOPIC, topicId, Map.of(0, state), Map.of())));
        manager.onMetadataUpdate(image, next);
        image = next;
    }
}
