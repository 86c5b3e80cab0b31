package dev.millrace.broker.share;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.CoordinatorNotAvailableException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.delay.SystemTimer;

/**
 * Creating share-partitions while leadership changes: the load of a share-partition's saved state (a remote call in a
 * cluster) must not hold up the resignation of other share-partitions, which runs on the metadata quorum's apply
 * thread. The groups "Aa" and "BB" have the same hash code, so their keys on one topic-partition share a bin of the
 * manager's map whatever its size: with the load inside the map's {@code compute}, removing "Aa" waited for "BB"'s
 * load.
 */
@Timeout(30)
class SharePartitionManagerTest {

    private static final TopicPartition TP = new TopicPartition("queue", 0);

    private final ManualClock clock = new ManualClock();
    private final SystemTimer timer = new SystemTimer(1, 20, clock, Runnable::run);
    private final CountDownLatch loadEntered = new CountDownLatch(1);
    private final CountDownLatch releaseLoad = new CountDownLatch(1);
    private final AtomicInteger loads = new AtomicInteger();
    private volatile RuntimeException loadFailure;

    /** Loads of group "BB" wait for {@link #releaseLoad}; every load finds no saved state. */
    private final ShareStateStore store = new ShareStateStore() {
        @Override
        public Optional<SharePartitionSnapshot> load(SharePartitionKey key) {
            loads.incrementAndGet();
            if (key.groupId().equals("BB")) {
                loadEntered.countDown();
                try {
                    releaseLoad.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                if (loadFailure != null) {
                    throw loadFailure;
                }
            }
            return Optional.empty();
        }

        @Override
        public void save(SharePartition partition) {
        }
    };

    private final SharePartitionManager manager = new SharePartitionManager(ShareGroupConfig.defaults(),
            new SingleLogTopics(TP, new InMemoryShareLog()), timer, clock, new SharePartitionListener() {
                @Override
                public void onRecordsAvailable(SharePartitionKey key) {
                }

                @Override
                public void onArchived(DeadLetter deadLetter) {
                }
            }, store);

    @AfterEach
    void close() {
        releaseLoad.countDown();
        timer.close();
    }

    /** A first caller whose creation of BB's share-partition is loading, and a second caller asking meanwhile. */
    private List<CompletableFuture<Optional<SharePartition>>> twoCallersWhileBbLoads() throws InterruptedException {
        CompletableFuture<Optional<SharePartition>> one = CompletableFuture.supplyAsync(
                () -> manager.getOrCreate("BB", Uuid.randomUuid(), TP));
        assertThat(loadEntered.await(10, TimeUnit.SECONDS)).isTrue();
        return List.of(one, CompletableFuture.supplyAsync(() -> manager.getOrCreate("BB", Uuid.randomUuid(), TP)));
    }

    @Test
    void shouldResignWhileAnotherShareGroupsStateLoads() throws Exception {
        assertThat("Aa".hashCode()).isEqualTo("BB".hashCode());
        SharePartition first = manager.getOrCreate("Aa", Uuid.randomUuid(), TP).orElseThrow();
        CompletableFuture<Optional<SharePartition>> loading = CompletableFuture.supplyAsync(
                () -> manager.getOrCreate("BB", Uuid.randomUuid(), TP));
        assertThat(loadEntered.await(10, TimeUnit.SECONDS)).as("BB's load started").isTrue();

        CompletableFuture<Void> resigned = CompletableFuture.runAsync(() -> manager.onResigned(TP, 0));

        resigned.get(10, TimeUnit.SECONDS); // a deadlock check: before the fix this waited for BB's load
        assertThat(loading).as("BB's load is still in progress").isNotDone();
        assertThat(first.isClosed()).isTrue();
        assertThat(manager.get("Aa", TP)).isEmpty();
        releaseLoad.countDown();
        assertThat(loading.get(10, TimeUnit.SECONDS)).isPresent();
    }

    @Test
    void shouldCreateAShareGroupsPartitionOnceWhenAskedFromTwoThreads() throws Exception {
        List<CompletableFuture<Optional<SharePartition>>> callers = twoCallersWhileBbLoads();
        CompletableFuture<Optional<SharePartition>> one = callers.get(0);
        CompletableFuture<Optional<SharePartition>> two = callers.get(1);

        releaseLoad.countDown();

        assertThat(one.get(10, TimeUnit.SECONDS).orElseThrow()).isSameAs(two.get(10, TimeUnit.SECONDS).orElseThrow());
        assertThat(loads).as("the second caller waited for the first creation instead of loading again").hasValue(1);
    }

    @Test
    void shouldGiveEveryWaitingCallerTheLoadsFailureAndLoadAgainNextTime() throws Exception {
        loadFailure = new CoordinatorNotAvailableException("share-state coordinator unreachable");
        List<CompletableFuture<Optional<SharePartition>>> callers = twoCallersWhileBbLoads();
        CompletableFuture<Optional<SharePartition>> one = callers.get(0);
        CompletableFuture<Optional<SharePartition>> two = callers.get(1);

        releaseLoad.countDown();

        assertThatThrownBy(() -> one.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(
                CoordinatorNotAvailableException.class);
        assertThatThrownBy(() -> two.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(
                CoordinatorNotAvailableException.class);
        loadFailure = null;
        assertThat(manager.getOrCreate("BB", Uuid.randomUuid(), TP)).isPresent();
    }
}
