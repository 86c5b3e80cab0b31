package dev.millrace.broker.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(20)
class GroupCommitTest {

    @Test
    void shouldLetWaitersShareTheNextFlush() throws Exception {
        AtomicLong appended = new AtomicLong();
        AtomicInteger flushes = new AtomicInteger();
        CountDownLatch firstFlushStarted = new CountDownLatch(1);
        CountDownLatch releaseFirstFlush = new CountDownLatch(1);
        GroupCommit commit = new GroupCommit(() -> {
            long upTo = appended.get();
            if (flushes.incrementAndGet() == 1) {
                firstFlushStarted.countDown();
                try {
                    releaseFirstFlush.await();
                } catch (InterruptedException e) {
                    throw new java.io.InterruptedIOException();
                }
            }
            return upTo;
        }, 0);

        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            appended.set(1);
            Future<?> first = pool.submit(() -> {
                commit.awaitDurable(1);
                return null;
            });
            assertThat(firstFlushStarted.await(10, TimeUnit.SECONDS)).isTrue();
            List<Future<?>> waiters = new ArrayList<>();
            for (long end = 2; end <= 4; end++) {
                appended.set(end);
                long target = end;
                waiters.add(pool.submit(() -> {
                    commit.awaitDurable(target);
                    return null;
                }));
            }
            // the three later appenders block behind the running flush
            assertThat(waiters).noneMatch(Future::isDone);
            releaseFirstFlush.countDown();
            first.get(10, TimeUnit.SECONDS);
            for (Future<?> waiter : waiters) {
                waiter.get(10, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(flushes.get()).isEqualTo(2);
        assertThat(commit.flushCount()).isEqualTo(2);
        assertThat(commit.durableOffset()).isEqualTo(4);
    }

    @Test
    void shouldReturnAtOnceWhenAlreadyDurable() throws Exception {
        AtomicInteger flushes = new AtomicInteger();
        GroupCommit commit = new GroupCommit(() -> {
            flushes.incrementAndGet();
            return 10;
        }, 10);
        commit.awaitDurable(7);
        assertThat(flushes.get()).isZero();
    }

    @Test
    void shouldReportAFailedFlushToTheCallerAndLetTheNextOneRetry() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        GroupCommit commit = new GroupCommit(() -> {
            if (calls.incrementAndGet() == 1) {
                throw new IOException("disk full");
            }
            return 5;
        }, 0);
        assertThatThrownBy(() -> commit.awaitDurable(5)).isInstanceOf(IOException.class).hasMessage("disk full");
        assertThat(commit.durableOffset()).isZero();
        commit.awaitDurable(5);
        assertThat(commit.durableOffset()).isEqualTo(5);
    }

    @Test
    void shouldNotCountAFlushThatATruncationOvertookAndTellTheWaiter() throws Exception {
        GroupCommit[] holder = new GroupCommit[1];
        AtomicInteger calls = new AtomicInteger();
        GroupCommit commit = new GroupCommit(() -> {
            calls.incrementAndGet();
            holder[0].truncateTo(3);   // the log is cut to 3 while this flush of offsets below 10 runs
            return 10;
        }, 5);
        holder[0] = commit;

        assertThat(commit.awaitDurable(10)).isFalse();

        assertThat(commit.durableOffset()).isEqualTo(3);
        assertThat(calls.get()).isEqualTo(1);
    }

    @Test
    void shouldKeepAWaiterWhoseOffsetsLieBelowTheCutAndFlushAgain() throws Exception {
        GroupCommit[] holder = new GroupCommit[1];
        AtomicInteger calls = new AtomicInteger();
        GroupCommit commit = new GroupCommit(() -> {
            if (calls.incrementAndGet() == 1) {
                holder[0].truncateTo(20);   // cut above the waiter's offsets while the first flush runs
                return 30;
            }
            return 25;
        }, 5);
        holder[0] = commit;

        assertThat(commit.awaitDurable(10)).isTrue();

        assertThat(calls.get()).isEqualTo(2);
        assertThat(commit.durableOffset()).isEqualTo(25);
    }

    @Test
    void shouldReportDurabilityToAWaiterWhenNoTruncationIntervened() throws Exception {
        GroupCommit commit = new GroupCommit(() -> 8, 0);

        assertThat(commit.awaitDurable(8)).isTrue();
        commit.truncateTo(4);
        assertThat(commit.durableOffset()).isEqualTo(4);
        assertThat(commit.awaitDurable(8)).isTrue();
        assertThat(commit.durableOffset()).isEqualTo(8);
    }
}
