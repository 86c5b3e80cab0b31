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
