package dev.millrace.delay;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Interleavings of an add with an advance that a stress test hits only by chance, forced here: the
 * adding thread is held inside {@link Time#hiResClockMs()}, under the timer's read lock, while the
 * test moves the clock and another thread polls a due bucket.
 */
@Timeout(10)
class SystemTimerInterleavingTest {

    /**
     * An add that read the time before the advancing thread polled a bucket queues an earlier
     * bucket after that poll. The clock must move to that earlier bucket first: moving it past a
     * queued bucket lets a later add reuse the bucket's slot while it is still queued.
     *
     * <pre>
     *   wheel: tick 1 ms x 8, so level 1 has 8 ms buckets; time starts at 0
     *   "late" delay 24  ─▶ level-1 bucket 24
     *   the clock moves to 30; the advancing thread polls bucket 24 and waits for the write lock
     *   "early", added with the time read as 0, delay 20  ─▶ level-1 bucket 16, queued after the poll
     *   expected: bucket 16 is flushed before bucket 24, so "early" runs before "late"
     * </pre>
     */
    @Test
    void shouldFlushABucketQueuedAfterThePollBeforeTheOnePolled() throws Exception {
        PausingTime time = new PausingTime(new MockTime(0));
        List<String> ran = Collections.synchronizedList(new ArrayList<>());
        SystemTimer timer = new SystemTimer(1, 8, time, Runnable::run);
        timer.add(named("late", 24, ran));

        Thread adder = new Thread(() -> timer.add(named("early", 20, ran)), "adder");
        time.pauseNextReadOn(adder);
        adder.start();
        time.awaitPaused();

        time.advanceMs(30);
        AtomicReference<Throwable> advanceFailure = new AtomicReference<>();
        Thread advancer = new Thread(() -> {
            try {
                timer.advanceClock(0);
            } catch (Throwable t) {
                advanceFailure.set(t);
            }
        }, "advancer");
        advancer.start();
        awaitParked(advancer);
        time.resume();
        adder.join();
        advancer.join();
        assertThat(advanceFailure.get()).isNull();

        timer.advanceClock(0);
        assertThat(ran).containsExactly("early", "late");
        assertThat(timer.size()).isZero();

        // the wheel still works for a slot that bucket 16 shares at level 1 (tick 16 + 64)
        timer.add(named("after", 50, ran));
        time.advanceMs(100);
        timer.advanceClock(0);
        assertThat(ran).containsExactly("early", "late", "after");
        assertThat(timer.size()).isZero();
        timer.close();
    }

    /** Waits until the thread parks (on the timer's write lock, held back by the paused add). */
    private static void awaitParked(Thread thread) throws InterruptedException {
        while (thread.getState() != Thread.State.WAITING && thread.getState() != Thread.State.TIMED_WAITING) {
            if (!thread.isAlive()) {
                throw new AssertionError(thread.getName() + " ended before it parked");
            }
            Thread.onSpinWait();
        }
    }

    private static TimerTask named(String name, long delayMs, List<String> ran) {
        return new TimerTask(delayMs) {
            @Override
            public void run() {
                ran.add(name);
            }
        };
    }

    /** A {@link MockTime} that can hold one thread inside its next clock read until resumed. */
    private static final class PausingTime implements Time {
        private final MockTime delegate;
        private final CountDownLatch paused = new CountDownLatch(1);
        private final CountDownLatch resumed = new CountDownLatch(1);
        private volatile Thread pauseOn;

        PausingTime(MockTime delegate) {
            this.delegate = delegate;
        }

        void pauseNextReadOn(Thread thread) {
            pauseOn = thread;
        }

        void awaitPaused() throws InterruptedException {
            assertThat(paused.await(5, TimeUnit.SECONDS)).as("the adder read the clock").isTrue();
        }

        void resume() {
            resumed.countDown();
        }

        void advanceMs(long ms) {
            delegate.advanceMs(ms);
        }

        @Override
        public long milliseconds() {
            return delegate.milliseconds();
        }

        @Override
        public long nanoseconds() {
            long nanos = delegate.nanoseconds();
            if (Thread.currentThread() == pauseOn) {
                pauseOn = null;
                paused.countDown();
                try {
                    resumed.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return nanos;
        }
    }
}
