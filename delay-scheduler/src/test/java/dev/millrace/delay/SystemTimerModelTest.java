package dev.millrace.delay;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Random sequences of add, re-add, cancel and clock jumps on a {@link SystemTimer} with a random
 * tick and wheel size, checked after every step against a model: a task runs exactly when the
 * clock reaches its due time rounded up to the tick, once per add, and never after a successful
 * cancel; {@code size()} is the number of tasks the model holds pending. Replay a failure with
 * {@code -Ddelay.seed=N}.
 */
@Timeout(60)
class SystemTimerModelTest {

    private static final long DAY_MS = TimeUnit.DAYS.toMillis(1);
    private static final int STEPS = 3_000;

    static LongStream seeds() {
        return Seeds.of(40);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    @Timeout(20)
    void shouldMatchTheModelAfterEveryStep(long seed) throws InterruptedException {
        try {
            run(seed);
        } catch (AssertionError e) {
            throw new AssertionError("seed " + seed + " (replay with -Ddelay.seed=" + seed + "): " + e.getMessage(), e);
        }
    }

    private void run(long seed) throws InterruptedException {
        Random random = new Random(seed);
        long tickMs = new long[] {1, 1, 1, 2, 7, 10}[random.nextInt(6)];
        int wheelSize = new int[] {2, 3, 8, 20, 20, 64}[random.nextInt(6)];
        long startNanos = TimeUnit.MILLISECONDS.toNanos(random.nextInt(1_000_000)) + random.nextInt(1_000_000);
        MockTime time = new MockTime(startNanos);
        List<String> log = new ArrayList<>();
        List<Modelled> tasks = new ArrayList<>();
        try (SystemTimer timer = new SystemTimer(tickMs, wheelSize, time, Runnable::run)) {
            for (int step = 0; step < STEPS; step++) {
                int op = random.nextInt(10);
                long nowMs = time.hiResClockMs();
                if (op < 4 || tasks.isEmpty()) {
                    Modelled task = new Modelled("t" + tasks.size(), randomDelayMs(random), time, log);
                    tasks.add(task);
                    task.armed(nowMs, tickMs);
                    timer.add(task);
                } else if (op < 5) {
                    Modelled task = tasks.get(random.nextInt(tasks.size()));
                    task.armed(nowMs, tickMs);
                    timer.add(task);
                } else if (op < 7) {
                    Modelled task = tasks.get(random.nextInt(tasks.size()));
                    boolean wasPending = task.dueMs != Modelled.NOT_PENDING;
                    assertThat(task.cancel()).as("cancel of %s at step %d", task.name, step).isEqualTo(wasPending);
                    task.dueMs = Modelled.NOT_PENDING;
                } else {
                    time.advanceMs(randomJumpMs(random, tickMs));
                    timer.advanceClock(0);
                }
                check(timer, tasks, time.hiResClockMs(), step);
            }
            time.advanceMs(50 * DAY_MS);
            timer.advanceClock(0);
            check(timer, tasks, time.hiResClockMs(), STEPS);
            assertThat(timer.size()).isZero();
        }
    }

    private static void check(SystemTimer timer, List<Modelled> tasks, long nowMs, int step) {
        int pending = 0;
        for (Modelled task : tasks) {
            if (task.dueMs != Modelled.NOT_PENDING && task.dueMs <= nowMs) {
                task.expectedRuns++;
                task.dueMs = Modelled.NOT_PENDING;
            }
            if (task.dueMs != Modelled.NOT_PENDING) {
                pending++;
            }
            assertThat(task.runs.get()).as("runs of %s (delay %d) at step %d, now %d", task.name, task.delayMs(), step,
                    nowMs).isEqualTo(task.expectedRuns);
            if (task.runs.get() > task.checkedRuns) {
                assertThat(task.ranAtMs).as("run of %s", task.name).isGreaterThanOrEqualTo(task.notBeforeMs);
                task.checkedRuns = task.runs.get();
            }
        }
        assertThat(timer.size()).as("size at step %d", step).isEqualTo(pending);
    }

    private static long randomDelayMs(Random random) {
        int kind = random.nextInt(20);
        if (kind < 2) {
            return -random.nextInt(5);
        } else if (kind < 10) {
            return 1 + random.nextInt(100);
        } else if (kind < 17) {
            return 1 + random.nextInt(100_000);
        }
        return 1 + (long) (random.nextDouble() * 40 * DAY_MS);
    }

    private static long randomJumpMs(Random random, long tickMs) {
        int kind = random.nextInt(10);
        if (kind < 6) {
            return random.nextInt((int) (2 * tickMs) + 1);
        } else if (kind < 9) {
            return random.nextInt(2_000);
        }
        return (long) (random.nextDouble() * 10 * DAY_MS);
    }

    /** A task and what the model expects of it. */
    private static final class Modelled extends RecordingTask {
        static final long NOT_PENDING = Long.MIN_VALUE;

        long dueMs = NOT_PENDING;
        long notBeforeMs;
        int expectedRuns;
        int checkedRuns;

        Modelled(String name, long delayMs, Time time, List<String> log) {
            super(name, delayMs, time, log);
        }

        /** Added at {@code nowMs}: runs at once for a delay of zero or less (inline executor), else at its tick. */
        void armed(long nowMs, long tickMs) {
            if (delayMs() <= 0) {
                expectedRuns++;
                dueMs = NOT_PENDING;
                notBeforeMs = nowMs;
            } else {
                notBeforeMs = nowMs + delayMs();
                dueMs = Math.floorDiv(notBeforeMs + tickMs - 1, tickMs) * tickMs;
            }
        }
    }
}
