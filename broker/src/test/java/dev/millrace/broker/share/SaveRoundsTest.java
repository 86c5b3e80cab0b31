package dev.millrace.broker.share;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class SaveRoundsTest {

    private final SaveRounds rounds = new SaveRounds();

    /**
     * Callers that arrive while a write runs are served by one later write, taken after all of their changes: each
     * caller bumps the "partition" before it saves, and every caller must return only once a write that saw its bump
     * is done, with one writer at a time.
     */
    @Test
    void shouldServeTheCallersThatArriveDuringAWriteWithOneWriteTakenAfterTheirChanges() throws Exception {
        AtomicInteger changes = new AtomicInteger();
        AtomicInteger written = new AtomicInteger(); // the change count the last finished write saw
        AtomicInteger writers = new AtomicInteger();
        AtomicInteger writes = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        CountDownLatch firstWriteStarted = new CountDownLatch(1);
        CountDownLatch releaseFirstWrite = new CountDownLatch(1);
        int callers = 8;
        ExecutorService pool = Executors.newFixedThreadPool(callers + 1);
        try {
            Runnable write = () -> {
                if (writers.incrementAndGet() > 1) {
                    overlaps.incrementAndGet();
                }
                int seen = changes.get();
                if (writes.incrementAndGet() == 1) {
                    firstWriteStarted.countDown();
                    await(releaseFirstWrite);
                }
                written.accumulateAndGet(seen, Math::max);
                writers.decrementAndGet();
            };
            Future<?> first = pool.submit(() -> {
                changes.incrementAndGet();
                rounds.save(write);
            });
            assertThat(firstWriteStarted.await(10, TimeUnit.SECONDS)).isTrue();
            List<Future<Integer>> others = new ArrayList<>();
            List<Thread> waiting = new java.util.concurrent.CopyOnWriteArrayList<>();
            for (int i = 0; i < callers; i++) {
                others.add(pool.submit(() -> {
                    int mine = changes.incrementAndGet();
                    waiting.add(Thread.currentThread());
                    rounds.save(write);
                    return mine;
                }));
            }
            awaitAllWaiting(waiting, callers);
            releaseFirstWrite.countDown();
            first.get(10, TimeUnit.SECONDS);
            for (Future<Integer> f : others) {
                int mine = f.get(10, TimeUnit.SECONDS);
                assertThat(written.get()).as("a caller returns after a write that saw its change").isGreaterThanOrEqualTo(mine);
            }
            assertThat(overlaps.get()).as("one writer at a time").isZero();
            assertThat(writes.get()).as("%d callers that waited during the first write: served by one more write",
                    callers).isEqualTo(2);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void shouldFailEveryCallerOfAFailedRoundAndStillRunTheNext() throws Exception {
        CountDownLatch firstWriteStarted = new CountDownLatch(1);
        CountDownLatch releaseFirstWrite = new CountDownLatch(1);
        AtomicInteger writes = new AtomicInteger();
        RuntimeException refused = new IllegalStateException("refused");
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            Future<?> first = pool.submit(() -> rounds.save(() -> {
                writes.incrementAndGet();
                firstWriteStarted.countDown();
                await(releaseFirstWrite);
                throw refused;
            }));
            assertThat(firstWriteStarted.await(10, TimeUnit.SECONDS)).isTrue();
            Future<?> second = pool.submit(() -> rounds.save(writes::incrementAndGet));
            releaseFirstWrite.countDown();
            assertThatThrownBy(() -> first.get(10, TimeUnit.SECONDS)).hasCause(refused);
            second.get(10, TimeUnit.SECONDS);
            assertThat(writes.get()).as("the round after a failed one is written").isEqualTo(2);
            rounds.save(writes::incrementAndGet);
            assertThat(writes.get()).as("and saves go on afterwards").isEqualTo(3);
        } finally {
            pool.shutdownNow();
        }
    }

    /** Until {@code n} threads have registered and each waits (in its round), or ten seconds. */
    private static void awaitAllWaiting(List<Thread> threads, int n) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (threads.size() < n || !threads.stream().allMatch(t -> t.getState() == Thread.State.WAITING)) {
            assertThat(System.nanoTime()).as("%d callers waiting in their round", n).isLessThan(deadline);
            Thread.onSpinWait();
        }
    }

    /** A save asked for from inside a write on the same thread runs at once, as under the re-entrant lock before. */
    @Test
    void shouldRunASaveAskedForFromInsideTheWriteAtOnce() {
        AtomicInteger writes = new AtomicInteger();
        rounds.save(() -> {
            writes.incrementAndGet();
            rounds.save(writes::incrementAndGet);
        });
        assertThat(writes.get()).isEqualTo(2);
        rounds.save(writes::incrementAndGet);
        assertThat(writes.get()).as("saves go on afterwards").isEqualTo(3);
    }

    @Test
    void shouldEndTheRoundOfAWriteThatThrewAnError() {
        assertThatThrownBy(() -> rounds.save(() -> {
            throw new AssertionError("broken");
        })).isInstanceOf(AssertionError.class);
        AtomicInteger writes = new AtomicInteger();
        rounds.save(writes::incrementAndGet);
        assertThat(writes.get()).as("the next save is written, not left waiting").isEqualTo(1);
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
