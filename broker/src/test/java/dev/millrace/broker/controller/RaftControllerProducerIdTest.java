package dev.millrace.broker.controller;

import static dev.millrace.broker.controller.ControllerTestSupport.LOOPBACK;
import static dev.millrace.broker.controller.ControllerTestSupport.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.NotControllerException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.millrace.broker.controller.Controller.NewTopic;

/** Producer-id block allocation on one embedded voter, restarted on the same port and data directory. */
@Tag("integration")
class RaftControllerProducerIdTest {

    private static final int SIZE = ProducerIdBlock.BLOCK_SIZE;

    @TempDir
    Path tempDir;

    private int port;
    private final List<RaftController> started = new ArrayList<>();

    @BeforeEach
    void pickPort() throws IOException {
        port = ControllerTestSupport.freePort();
    }

    @AfterEach
    void closeControllers() {
        started.forEach(RaftController::close);
    }

    private RaftController start(List<MetadataListener> listeners) throws Exception {
        RaftController controller = new RaftController(ControllerConfig.singleVoter(1,
                tempDir.resolve("data").resolve("metadata"), LOOPBACK, port)
                .withInitialClusterId(ControllerTestSupport.CLUSTER_ID));
        started.add(controller);
        listeners.forEach(controller::registerListener);
        controller.start();
        ControllerTestSupport.registerUnfenced(controller, 1);
        return controller;
    }

    private RaftController start() throws Exception {
        return start(List.of());
    }

    @Test
    @Timeout(30)
    void shouldHandOutConsecutiveDisjointBlocksWhenAllocatingTwice() throws Exception {
        RaftController controller = start();

        ProducerIdBlock first = await(controller.allocateProducerIds(1));
        ProducerIdBlock second = await(controller.allocateProducerIds(2));

        assertThat(first).isEqualTo(new ProducerIdBlock(1, 0, SIZE));
        assertThat(first.lastProducerId()).isEqualTo(999);
        assertThat(second).isEqualTo(new ProducerIdBlock(2, 1000, SIZE));
        assertThat(second.lastProducerId()).isEqualTo(1999);
        assertThat(controller.image().nextProducerId()).as("the image already holds both").isEqualTo(2000);
    }

    @Test
    @Timeout(40)
    void shouldContinueAfterTheLastBlockWhenRestartedFromTheRaftLog() throws Exception {
        RaftController first = start();
        await(first.allocateProducerIds(1));
        await(first.createTopics(List.of(new NewTopic("t", 1, (short) -1, Map.of())), false));
        ProducerIdBlock last = await(first.allocateProducerIds(1));
        MetadataImage before = first.image();
        first.close();

        RaftController second = start();

        assertThat(second.image()).isEqualTo(before);
        assertThat(second.image().nextProducerId()).isEqualTo(2000);
        ProducerIdBlock next = await(second.allocateProducerIds(1));
        assertThat(next.firstProducerId()).isEqualTo(last.lastProducerId() + 1);
        assertThat(next).isEqualTo(new ProducerIdBlock(1, 2000, SIZE));
    }

    @Test
    @Timeout(40)
    void shouldContinueAfterTheLastBlockWhenRestartedFromASnapshotAndTheLogAfterIt() throws Exception {
        RaftController first = start();
        await(first.allocateProducerIds(1));
        await(first.allocateProducerIds(2));
        await(first.snapshot());
        MetadataImage atSnapshot = first.image();
        ProducerIdBlock last = await(first.allocateProducerIds(3));
        MetadataImage before = first.image();
        first.close();

        List<MetadataImage> restored = new CopyOnWriteArrayList<>();
        RaftController second = start(List.of((previous, current) -> restored.add(current)));

        assertThat(second.image()).isEqualTo(before);
        assertThat(restored).as("the snapshot in one step, then the one entry after it").hasSize(2);
        assertThat(restored.get(0)).isEqualTo(atSnapshot);
        assertThat(restored.get(0).nextProducerId()).isEqualTo(2000);
        ProducerIdBlock next = await(second.allocateProducerIds(1));
        assertThat(next).isEqualTo(new ProducerIdBlock(1, last.lastProducerId() + 1, SIZE));
        assertThat(next.firstProducerId()).isEqualTo(3000);
    }

    @Test
    @Timeout(40)
    void shouldContinueAfterTheLastBlockWhenRestartedFromASnapshotAlone() throws Exception {
        RaftController first = start();
        await(first.allocateProducerIds(1));
        await(first.snapshot());
        first.close();

        RaftController second = start();

        assertThat(second.image().nextProducerId()).isEqualTo(1000);
        assertThat(await(second.allocateProducerIds(4))).isEqualTo(new ProducerIdBlock(4, 1000, SIZE));
    }

    @Test
    @Timeout(60)
    void shouldNeverHandOutAnIdTwiceWhenAllocatingFromSeveralThreads() throws Exception {
        RaftController controller = start();
        int threads = 4;
        int perThread = 5;
        CountDownLatch go = new CountDownLatch(1);
        List<CompletableFuture<ProducerIdBlock>> futures = new CopyOnWriteArrayList<>();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int brokerId = t + 1;
            Thread worker = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                for (int i = 0; i < perThread; i++) {
                    futures.add(controller.allocateProducerIds(brokerId));
                }
            });
            worker.start();
            workers.add(worker);
        }
        go.countDown();
        for (Thread worker : workers) {
            worker.join(TimeUnit.SECONDS.toMillis(10));
        }

        List<ProducerIdBlock> blocks = new ArrayList<>();
        for (CompletableFuture<ProducerIdBlock> future : futures) {
            blocks.add(await(future));
        }
        blocks.sort(Comparator.comparingLong(ProducerIdBlock::firstProducerId));
        assertThat(blocks).hasSize(threads * perThread);
        for (int i = 0; i < blocks.size(); i++) {
            assertThat(blocks.get(i).size()).isEqualTo(SIZE);
            assertThat(blocks.get(i).firstProducerId()).as("block %d starts where the one before ended", i)
                    .isEqualTo((long) i * SIZE);
        }
        assertThat(blocks).extracting(ProducerIdBlock::brokerId).containsOnly(1, 2, 3, 4);
        assertThat(controller.image().nextProducerId()).isEqualTo((long) threads * perThread * SIZE);
    }

    @Test
    @Timeout(30)
    void shouldFailWithNotControllerWhenClosed() throws Exception {
        RaftController controller = start();
        controller.close();

        assertThatThrownBy(() -> await(controller.allocateProducerIds(1)))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(NotControllerException.class)
                .hasMessageContaining("shut down");
    }

    @Test
    @Timeout(30)
    void shouldRejectANegativeBrokerIdAndAllocateNothing() throws Exception {
        RaftController controller = start();

        assertThatThrownBy(() -> await(controller.allocateProducerIds(-1)))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("broker -1");
        assertThat(controller.image().nextProducerId()).isZero();
        assertThat(await(controller.allocateProducerIds(0))).isEqualTo(new ProducerIdBlock(0, 0, SIZE));
    }
}
