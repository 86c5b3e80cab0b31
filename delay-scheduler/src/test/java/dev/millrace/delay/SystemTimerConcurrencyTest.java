package dev.millrace.delay;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Several threads add, re-add and cancel tasks while another moves a {@link MockTime} and advances
 * the timer, and the timer's own executor runs what expires. Afterwards no task is lost: each runs
 * exactly once unless a cancel returned true, in which case it never runs, and never before its due
 * time. The seed fixes each thread's choices (delays, what to cancel), not the interleaving; a
 * failure names it, replay with {@code -Ddelay.seed=N}.
 */
@Timeout(60)
class SystemTimerConcurrencyTest {

    private static final int ADDERS = 3;
    private static final int TASKS_PER_ADDER = 3_000;
    private static final long MOVED_DELAY_MS = 100_000;
    private static final long CLOCK_CAP_MS = 50_000;
    private static final int POISON = -1;

    static LongStream seeds() {
        return Seeds.of(10);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    @Timeout(30)
    void shouldLoseNoTaskUnderConcurrentAddsCancelsAndAdvances(long seed) throws InterruptedException {
        try {
            run(seed);
        } catch (AssertionError e) {
            throw new AssertionError("seed " + seed + " (replay with -Ddelay.seed=" + seed + "): " + e.getMessage(), e);
        }
    }

    private void run(long seed) throws InterruptedException {
        MockTime time = new MockTime();
        long startMs = time.hiResClockMs();
        int wheelSize = new int[] {2, 8, 20}[new Random(seed).nextInt(3)];
        SystemTimer timer = new SystemTimer("timer-executor-" + seed, 1, wheelSize, time);
        List<Task> all = Collections.synchronizedList(new ArrayList<>());
        BlockingQueue<Task> toCancel = new LinkedBlockingQueue<>();
        BlockingQueue<Task> toMove = new LinkedBlockingQueue<>();
        Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
        CountDownLatch start = new CountDownLatch(1);
        AtomicBoolean workersDone = new AtomicBoolean();

        List<Thread> workers = new ArrayList<>();
        for (int a = 0; a < ADDERS; a++) {
            Random random = new Random(seed * 31 + a);
            workers.add(thread("adder-" + a, start, failures, () -> {
                for (int i = 0; i < TASKS_PER_ADDER; i++) {
                    int kind = random.nextInt(10);
                    Task task;
                    if (kind < 1) {
                        task = new Task(Kind.IMMEDIATE, -random.nextInt(3), time);
                    } else if (kind < 3) {
                        task = new Task(Kind.MOVED, MOVED_DELAY_MS + random.nextInt(10_000), time);
                    } else {
                        task = new Task(Kind.SHORT, 1 + random.nextInt(200), time);
                    }
                    all.add(task);
                    timer.add(task);
                    if (task.kind == Kind.MOVED) {
                        toMove.add(task);
                    } else if (task.kind == Kind.SHORT && random.nextInt(3) == 0) {
                        toCancel.add(task);
                    }
                }
            }));
        }
        Thread canceller = thread("canceller", start, failures, () -> {
            for (Task task = toCancel.take(); task.delayMs() != POISON; task = toCancel.take()) {
                task.cancelled = task.cancel();
            }
        });
        Thread mover = thread("mover", start, failures, () -> {
            for (Task task = toMove.take(); task.delayMs() != POISON; task = toMove.take()) {
                timer.add(task);
            }
        });
        Random clockRandom = new Random(seed * 31 + ADDERS);
        Thread clock = thread("clock", start, failures, () -> {
            while (!workersDone.get()) {
                if (time.hiResClockMs() - startMs < CLOCK_CAP_MS) {
                    time.advanceMs(clockRandom.nextInt(4));
                }
                timer.advanceClock(0);
                assertThat(timer.size()).isNotNegative();
            }
        });

        start.countDown();
        for (Thread worker : workers) {
            worker.join();
        }
        toCancel.add(new Task(Kind.SHORT, POISON, time));
        toMove.add(new Task(Kind.SHORT, POISON, time));
        canceller.join();
        mover.join();
        workersDone.set(true);
        clock.join();
        assertThat(failures).isEmpty();

        time.advanceMs(3 * MOVED_DELAY_MS);
        timer.advanceClock(0);
        assertThat(timer.size()).as("pending after every due time passed").isZero();
        timer.close();

        assertThat(all).hasSize(ADDERS * TASKS_PER_ADDER);
        for (Task task : all) {
            int expectedRuns = task.cancelled ? 0 : 1;
            assertThat(task.runs).as("runs of %s", task).hasValue(expectedRuns);
            if (expectedRuns == 1) {
                assertThat(task.ranAtMs).as("run of %s", task).isGreaterThanOrEqualTo(task.expirationMs);
            }
        }
    }

    private static Thread thread(String name, CountDownLatch start, Queue<Throwable> failures, Body body) {
        Thread thread = new Thread(() -> {
            try {
                start.await();
                body.run();
            } catch (Throwable t) {
                failures.add(t);
            }
        }, name);
        thread.start();
        return thread;
    }

    @FunctionalInterface
    private interface Body {
        void run() throws Exception;
    }

    private enum Kind {
        IMMEDIATE, SHORT, MOVED
    }

    private static final class Task extends TimerTask {
        final Kind kind;
        private final Time time;
        final AtomicInteger runs = new AtomicInteger();
        volatile long ranAtMs;
        volatile boolean cancelled;

        Task(Kind kind, long delayMs, Time time) {
            super(delayMs);
            this.kind = kind;
            this.time = time;
        }

        @Override
        public void run() {
            ranAtMs = time.hiResClockMs();
            runs.incrementAndGet();
        }

        @Override
        public String toString() {
            return kind + " task, delay " + delayMs() + ", due " + expirationMs + ", ran " + runs + " at " + ranAtMs
                    + ", cancelled " + cancelled;
        }
    }
}
