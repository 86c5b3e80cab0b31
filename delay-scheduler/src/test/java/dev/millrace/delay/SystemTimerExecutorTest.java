package dev.millrace.delay;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A {@link SystemTimer} with its own executor thread: where tasks run, and what close() does to it. */
@Timeout(20)
class SystemTimerExecutorTest {

    private final MockTime time = new MockTime();
    private final SystemTimer timer = new SystemTimer("timer-executor-test", 1, 20, time);

    @AfterEach
    void closeTimer() {
        timer.close();
    }

    @Test
    void shouldRunTasksOnItsOwnNamedThreadNeverOnTheCaller() throws InterruptedException {
        LatchTask immediate = new LatchTask(0);
        timer.add(immediate);
        immediate.ran.await();
        assertThat(immediate.thread.get().getName()).isEqualTo("timer-executor-test");

        LatchTask delayed = new LatchTask(10);
        timer.add(delayed);
        time.advanceMs(10);
        assertThat(timer.advanceClock(0)).isTrue();
        delayed.ran.await();
        assertThat(delayed.thread.get()).isSameAs(immediate.thread.get());
    }

    @Test
    void shouldStopTheExecutorThreadOnClose() throws InterruptedException {
        LatchTask task = new LatchTask(0);
        timer.add(task);
        task.ran.await();
        Thread executorThread = timer.executorThread();
        assertThat(executorThread).isSameAs(task.thread.get());

        timer.close();
        executorThread.join();
        assertThat(executorThread.isAlive()).isFalse();
    }

    @Test
    void shouldRunTasksAlreadyHandedToTheExecutorBeforeCloseReturns() throws InterruptedException {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch blocking = new CountDownLatch(1);
        timer.add(new TimerTask(0) {
            @Override
            public void run() {
                blocking.countDown();
                awaitUninterruptibly(release);
            }
        });
        LatchTask queuedBehind = new LatchTask(0);
        timer.add(queuedBehind);
        LatchTask pending = new LatchTask(1_000);
        timer.add(pending);
        blocking.await();

        Thread closer = new Thread(timer::close, "closer");
        closer.start();
        release.countDown();
        closer.join();

        assertThat(queuedBehind.ran.getCount()).as("queued task ran before close returned").isZero();
        assertThat(pending.isCancelled()).isTrue();
        assertThat(pending.ran.getCount()).isEqualTo(1);
    }

    @Test
    void shouldNotDeadlockWhenATaskClosesItsOwnTimer() throws InterruptedException {
        CountDownLatch closed = new CountDownLatch(1);
        timer.add(new TimerTask(0) {
            @Override
            public void run() {
                timer.close();
                closed.countDown();
            }
        });
        closed.await();
        timer.executorThread().join();
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Counts down when it runs and remembers the thread it ran on. */
    private static final class LatchTask extends TimerTask {
        final CountDownLatch ran = new CountDownLatch(1);
        final AtomicReference<Thread> thread = new AtomicReference<>();

        LatchTask(long delayMs) {
            super(delayMs);
        }

        @Override
        public void run() {
            thread.set(Thread.currentThread());
            ran.countDown();
        }
    }
}
