package dev.millrace.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.InvalidUpdateVersionException;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.broker.controller.Controller;
import dev.millrace.broker.controller.Controller.AlterPartitionResult;
import dev.millrace.broker.controller.MetadataImage;
import dev.millrace.broker.controller.MetadataImage.PartitionImage;
import dev.millrace.broker.controller.MetadataImage.TopicImage;

/**
 * The ISR changes a leader sends: the committed state it gets back always carries the partition's replicas, even
 * when the controller's answer came over the network without them (an empty replica list would make the leader
 * refuse its own followers' fetches).
 */
@Timeout(30)
class ControllerIsrUpdaterTest {

    private static final Uuid TOPIC_ID = Uuid.randomUuid();
    private static final TopicPartition TP = new TopicPartition("t", 0);

    private final AtomicReference<AlterPartitionResult> answer = new AtomicReference<>();
    private final AtomicReference<MetadataImage> image = new AtomicReference<>();
    private ControllerClient client;

    @AfterEach
    void close() {
        if (client != null) {
            client.close();
        }
    }

    @Test
    void anAnswerWithoutReplicasIsCompletedFromTheLocalMetadata() throws Exception {
        image.set(imageWith(new PartitionImage(0, List.of(1, 2, 3), List.of(1, 2), 1, 4, 7)));
        answer.set(new AlterPartitionResult(Errors.NONE, new PartitionImage(0, List.of(), List.of(1, 2, 3), 1, 4, 8)));

        PartitionImage committed = updater().alterIsr(TP, TOPIC_ID, 4, List.of(1, 2, 3), 7).get(10, TimeUnit.SECONDS);

        assertThat(committed.replicas()).containsExactly(1, 2, 3);
        assertThat(committed.isr()).containsExactly(1, 2, 3);
        assertThat(committed.partitionEpoch()).isEqualTo(8);
    }

    @Test
    void localMetadataAtLeastAsNewAsTheAnswerWins() throws Exception {
        PartitionImage applied = new PartitionImage(0, List.of(1, 2, 3), List.of(1, 2, 3), 1, 4, 8);
        image.set(imageWith(applied));
        answer.set(new AlterPartitionResult(Errors.NONE, new PartitionImage(0, List.of(), List.of(1, 2, 3), 1, 4, 8)));

        assertThat(updater().alterIsr(TP, TOPIC_ID, 4, List.of(1, 2, 3), 7).get(10, TimeUnit.SECONDS))
                .isEqualTo(applied);
    }

    @Test
    void aRefusedChangeFailsWithTheErrorOfItsCode() {
        image.set(imageWith(new PartitionImage(0, List.of(1, 2, 3), List.of(1, 2), 1, 4, 7)));
        answer.set(new AlterPartitionResult(Errors.INVALID_UPDATE_VERSION, null));

        assertThatThrownBy(() -> updater().alterIsr(TP, TOPIC_ID, 4, List.of(1, 2, 3), 6).get(10, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(InvalidUpdateVersionException.class)
                .hasMessageContaining(TP.toString());
    }

    @Test
    void changesProposedWhileOneIsInFlightLeaveTogetherInTheNextAlterPartition() throws Exception {
        Map<Integer, PartitionImage> partitions = new java.util.HashMap<>();
        for (int p = 0; p < 3; p++) {
            partitions.put(p, new PartitionImage(p, List.of(1, 2, 3), List.of(1, 2), 1, 4, 7));
        }
        image.set(new MetadataImage(1, Map.of("t", new TopicImage("t", TOPIC_ID, partitions, Map.of()))));
        List<List<Controller.IsrChange>> requests = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<CompletableFuture<Map<TopicIdPartition, AlterPartitionResult>>> answers =
                new java.util.concurrent.CopyOnWriteArrayList<>();
        Controller local = (Controller) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {Controller.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "activeControllerId" -> Optional.of(1);
                    case "image" -> image.get();
                    case "alterPartition" -> {
                        @SuppressWarnings("unchecked")
                        List<Controller.IsrChange> changes = (List<Controller.IsrChange>) args[2];
                        requests.add(changes);
                        CompletableFuture<Map<TopicIdPartition, AlterPartitionResult>> f = new CompletableFuture<>();
                        answers.add(f);
                        yield f;
                    }
                    default -> throw new UnsupportedOperationException(method.getName());
                });
        client = new ControllerClient(1, local, 5_000, 10);
        ControllerIsrUpdater updater = new ControllerIsrUpdater(1, client, () -> 3L, image::get);

        CompletableFuture<PartitionImage> first = updater.alterIsr(new TopicPartition("t", 0), TOPIC_ID, 4,
                List.of(1, 2, 3), 7);
        awaitSize(requests, 1);
        CompletableFuture<PartitionImage> second = updater.alterIsr(new TopicPartition("t", 1), TOPIC_ID, 4,
                List.of(1, 2, 3), 7);
        CompletableFuture<PartitionImage> third = updater.alterIsr(new TopicPartition("t", 2), TOPIC_ID, 4,
                List.of(1), 7);
        assertThat(requests).as("nothing more is sent while one AlterPartition is in flight").hasSize(1);

        answers.get(0).complete(Map.of(new TopicIdPartition(TOPIC_ID, 0, "t"), new AlterPartitionResult(Errors.NONE,
                new PartitionImage(0, List.of(1, 2, 3), List.of(1, 2, 3), 1, 4, 8))));
        assertThat(first.get(10, TimeUnit.SECONDS).isr()).containsExactly(1, 2, 3);
        awaitSize(requests, 2);
        assertThat(requests.get(1)).extracting(Controller.IsrChange::partition).containsExactly(1, 2);

        answers.get(1).complete(Map.of(
                new TopicIdPartition(TOPIC_ID, 1, "t"), new AlterPartitionResult(Errors.NONE,
                        new PartitionImage(1, List.of(1, 2, 3), List.of(1, 2, 3), 1, 4, 8)),
                new TopicIdPartition(TOPIC_ID, 2, "t"), new AlterPartitionResult(Errors.INELIGIBLE_REPLICA, null)));
        assertThat(second.get(10, TimeUnit.SECONDS).partitionEpoch()).isEqualTo(8);
        assertThatThrownBy(() -> third.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(
                org.apache.kafka.common.errors.IneligibleReplicaException.class);
        assertThat(requests).as("nothing was left to send").hasSize(2);
    }

    private static void awaitSize(List<?> list, int size) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (list.size() < size && System.nanoTime() - deadline < 0) {
            Thread.onSpinWait();
        }
        assertThat(list).hasSize(size);
    }

    private ControllerIsrUpdater updater() {
        Controller local = (Controller) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {Controller.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "activeControllerId" -> Optional.of(1);
                    case "image" -> image.get();
                    case "alterPartition" -> CompletableFuture.completedFuture(Map.of(
                            new TopicIdPartition(TOPIC_ID, TP), answer.get()));
                    default -> throw new UnsupportedOperationException(method.getName());
                });
        client = new ControllerClient(1, local, 5_000, 10);
        return new ControllerIsrUpdater(1, client, () -> 3L, image::get);
    }

    private static MetadataImage imageWith(PartitionImage partition) {
        return new MetadataImage(1, Map.of("t", new TopicImage("t", TOPIC_ID, Map.of(0, partition), Map.of())));
    }
}
