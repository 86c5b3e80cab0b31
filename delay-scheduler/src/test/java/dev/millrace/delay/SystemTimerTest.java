package dev.millrace.delay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Single-threaded behaviour of {@link SystemTimer}, on a {@link MockTime}, running tasks on the advancing thread. */
@Timeout(20)
class SystemTimerTest {

    private static final long DAY_MS = TimeUnit.DAYS.toMillis(1);

    private final MockTime time = new MockTime();
    private final List<String> log = new ArrayList<>();
    private SystemTimer timer = new SystemTimer(1, 20, time, Runnable::run);

    @AfterEach
    void closeTimer() {
        timer.close();
    }

    @Test
    void shouldRunTaskWhenItsDelayHasPassedAndNotBefore() throws InterruptedException {
        long startMs = time.hiResClockMs();
        RecordingTask task = task("a", 10);
        timer.add(task);

        advance(9);
        assertThat(task.runs).hasValue(0);
        advance(1);
        assertThat(task.runs).hasValue(1);
        assertThat(task.ranAtMs).isEqualTo(startMs + 10);
        advance(1000);
        assertThat(task.runs).hasValue(1);
    }

    @Test
    void shouldRunTasksInDueOrderAcrossWheelLevels() throws InterruptedException {
        long startMs = time.hiResClockMs();
        List<Long> delaysMs = new ArrayList<>(List.of(1L, 5L, 19L, 20L, 21L, 399L, 400L, 401L, 7_999L, 8_000L,
                123_456L, 3_600_000L, 7 * DAY_MS));
        Collections.shuffle(delaysMs, new Random(42));
        List<RecordingTask> tasks = new ArrayList<>();
        for (long delayMs : delaysMs) {
            RecordingTask task = task("t" + delayMs, delayMs);
            tasks.add(task);
            timer.add(task);
        }
        tasks.sort(Comparator.comparingLong(TimerTask::delayMs));

        for (RecordingTask task : tasks) {
            advanceTo(startMs + task.delayMs() - 1);
            assertThat(task.runs).as(task.name).hasValue(0);
            advance(1);
            assertThat(task.runs).as(task.name).hasValue(1);
            assertThat(task.ranAtMs).as(task.name).isEqualTo(startMs + task.delayMs());
        }
        assertThat(log).containsExactlyElementsOf(tasks.stream().map(t -> t.name).toList());
        assertThat(timer.size()).isZero();
    }

    @Test
    void shouldCreateOverflowWheelsOnlyWhenADelayNeedsThem() {
        assertThat(timer.levels()).isEqualTo(1);
        timer.add(task("span of level 0", 19));
        assertThat(timer.levels()).isEqualTo(1);
        timer.add(task("just past level 0", 20));
        assertThat(timer.levels()).isEqualTo(2);
        timer.add(task("just past level 1", 400));
        assertThat(timer.levels()).isEqualTo(3);
    }

    @Test
    void shouldRunThirtyDayDelayThroughOverflowWheelsWithoutTicking() throws InterruptedException {
        long startMs = time.hiResClockMs();
        RecordingTask task = task("30 days", 30 * DAY_MS);
        timer.add(task);
        assertThat(timer.levels()).isEqualTo(8);

        for (int day = 1; day < 30; day++) {
            advanceTo(startMs + day * DAY_MS);
            assertThat(task.runs).hasValue(0);
        }
        advanceTo(startMs + 30 * DAY_MS - 1);
        assertThat(task.runs).hasValue(0);
        assertThat(timer.size()).isEqualTo(1);
        advance(1);
        assertThat(task.runs).hasValue(1);
        assertThat(task.ranAtMs).isEqualTo(startMs + 30 * DAY_MS);
        assertThat(timer.size()).isZero();
    }

    @Test
    void shouldRunThirtyDayDelayAfterOneJumpOfTheClock() throws InterruptedException {
        RecordingTask task = task("30 days", 30 * DAY_MS);
        timer.add(task);
        advance(30 * DAY_MS + 12_345);
        assertThat(task.runs).hasValue(1);
    }

    @Test
    void shouldDoNothingWhenNothingIsDue() throws InterruptedException {
        assertThat(timer.advanceClock(0)).isFalse();
        timer.add(task("later", 50));
        time.advanceMs(49);
        assertThat(timer.advanceClock(0)).isFalse();
        time.advanceMs(1);
        assertThat(timer.advanceClock(0)).isTrue();
        assertThat(timer.advanceClock(0)).isFalse();
    }

    @Test
    void shouldNeverRunCancelledTask() throws InterruptedException {
        RecordingTask task = task("cancelled", 100);
        timer.add(task);
        assertThat(timer.size()).isEqualTo(1);

        assertThat(task.cancel()).isTrue();
        assertThat(task.isCancelled()).isTrue();
        assertThat(timer.size()).isZero();
        assertThat(task.cancel()).as("second cancel").isFalse();
        assertThat(task.isCancelled()).isTrue();

        advance(1000);
        assertThat(task.runs).hasValue(0);
    }

    @Test
    void shouldReturnFalseFromCancelWhenTaskAlreadyRanOrWasNeverAdded() throws InterruptedException {
        RecordingTask neverAdded = task("never added", 10);
        assertThat(neverAdded.cancel()).isFalse();
        assertThat(neverAdded.isCancelled()).isFalse();

        RecordingTask ran = task("ran", 10);
        timer.add(ran);
        advance(10);
        assertThat(ran.runs).hasValue(1);
        assertThat(ran.cancel()).isFalse();
        assertThat(ran.isCancelled()).isFalse();
    }

    @Test
    void shouldNotRunTaskCancelledBetweenExpiryAndExecution() throws InterruptedException {
        ManualExecutor executor = new ManualExecutor();
        timer = new SystemTimer(1, 20, time, executor);
        RecordingTask task = task("handed over", 10);
        timer.add(task);
        advance(10);
        assertThat(executor.queued()).isEqualTo(1);

        assertThat(task.cancel()).isTrue();
        executor.runAll();
        assertThat(task.runs).hasValue(0);
    }

    @Test
    void shouldMoveTaskWhenAddedAgain() throws InterruptedException {
        long startMs = time.hiResClockMs();
        RecordingTask task = task("moved", 100);
        timer.add(task);
        advance(60);
        timer.add(task);
        assertThat(timer.size()).isEqualTo(1);

        advanceTo(startMs + 159);
        assertThat(task.runs).hasValue(0);
        advance(1);
        assertThat(task.runs).hasValue(1);
        assertThat(task.ranAtMs).isEqualTo(startMs + 160);
        assertThat(timer.size()).isZero();
    }

    @Test
    void shouldRunTaskAddedAgainAfterBeingCancelled() throws InterruptedException {
        RecordingTask task = task("revived", 50);
        timer.add(task);
        task.cancel();
        timer.add(task);
        assertThat(task.isCancelled()).isFalse();
        assertThat(timer.size()).isEqualTo(1);
        advance(50);
        assertThat(task.runs).hasValue(1);
    }

    @Test
    void shouldSkipEarlierRunWhenTaskIsAddedAgainBeforeItStarts() throws InterruptedException {
        ManualExecutor executor = new ManualExecutor();
        timer = new SystemTimer(1, 20, time, executor);
        RecordingTask task = task("re-armed", 10);
        timer.add(task);
        advance(10);
        assertThat(executor.queued()).isEqualTo(1);

        timer.add(task);
        executor.runAll();
        assertThat(task.runs).hasValue(0);
        assertThat(task.isCancelled()).isFalse();

        advance(10);
        executor.runAll();
        assertThat(task.runs).hasValue(1);
    }

    @Test
    void shouldRunAgainWhenAddedAgainAfterRunning() throws InterruptedException {
        RecordingTask task = task("twice", 10);
        timer.add(task);
        advance(10);
        timer.add(task);
        advance(10);
        assertThat(task.runs).hasValue(2);
    }

    @Test
    void shouldCountPendingTasksInSize() throws InterruptedException {
        List<RecordingTask> tasks = new ArrayList<>();
        for (int i = 1; i <= 100; i++) {
            RecordingTask task = task("t" + i, i * 10L);
            tasks.add(task);
            timer.add(task);
        }
        assertThat(timer.size()).isEqualTo(100);
        for (int i = 0; i < 100; i += 10) {
            tasks.get(i).cancel();
        }
        assertThat(timer.size()).isEqualTo(90);
        advance(500);
        assertThat(timer.size()).isEqualTo(45);
        advance(500);
        assertThat(timer.size()).isZero();
        assertThat(log).hasSize(90);
    }

    @Test
    void shouldHandZeroAndNegativeDelaysToTheExecutorAtOnce() {
        ManualExecutor executor = new ManualExecutor();
        timer = new SystemTimer(1, 20, time, executor);
        RecordingTask zero = task("zero", 0);
        RecordingTask negative = task("negative", -5);
        timer.add(zero);
        timer.add(negative);

        assertThat(zero.runs).as("not run on the caller's thread").hasValue(0);
        assertThat(executor.queued()).isEqualTo(2);
        assertThat(timer.size()).isZero();
        executor.runAll();
        assertThat(log).containsExactly("zero", "negative");
    }

    @Test
    void shouldNeverRunEarlyWithATickLongerThanOneMillisecond() throws InterruptedException {
        Random random = new Random(7);
        for (int round = 0; round < 50; round++) {
            timer.close();
            timer = new SystemTimer(10, 8, time, Runnable::run);
            time.advanceMs(random.nextInt(10));
            long addedAtMs = time.hiResClockMs();
            long delayMs = 1 + random.nextInt(2_000);
            RecordingTask task = task("coarse", delayMs);
            timer.add(task);
            while (task.runs.get() == 0) {
                advance(1);
            }
            assertThat(task.ranAtMs).as("delay %d added at %d", delayMs, addedAtMs)
                    .isGreaterThanOrEqualTo(addedAtMs + delayMs)
                    .isLessThan(addedAtMs + delayMs + 10);
        }
    }

    @Test
    void shouldKeepRunningTasksAfterOneThrows() throws InterruptedException {
        timer.add(new TimerTask(5) {
            @Override
            public void run() {
                throw new IllegalStateException("expected by the test");
            }
        });
        RecordingTask after = task("after", 5);
        timer.add(after);
        advance(5);
        assertThat(after.runs).hasValue(1);
    }

    @Test
    void shouldAcceptTheLongestDelay() throws InterruptedException {
        RecordingTask task = task("max", TimerTask.MAX_DELAY_MS);
        timer.add(task);
        assertThat(timer.size()).isEqualTo(1);
        advance(200 * 365 * DAY_MS);
        assertThat(task.runs).hasValue(0);
        assertThat(task.cancel()).isTrue();
        assertThat(timer.size()).isZero();
    }

    @Test
    void shouldCancelPendingTasksAndRejectAddsWhenClosed() throws InterruptedException {
        RecordingTask pending = task("pending", 100);
        timer.add(pending);
        timer.close();
        timer.close();

        assertThat(pending.isCancelled()).isTrue();
        assertThat(timer.size()).isZero();
        assertThat(timer.advanceClock(0)).isFalse();
        assertThat(timer.advanceClock(1)).as("waits out the timeout, returns false").isFalse();
        assertThatThrownBy(() -> timer.add(task("late", 1)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        advance(1000);
        assertThat(pending.runs).hasValue(0);
    }

    @Test
    void shouldCancelTasksTheExecutorRefusesAndReportTheRefusal() {
        timer = new SystemTimer(1, 20, time, command -> {
            throw new RejectedExecutionException("full");
        });
        RecordingTask first = task("first", 10);
        RecordingTask second = task("second", 10);
        timer.add(first);
        timer.add(second);
        time.advanceMs(10);

        assertThatThrownBy(() -> timer.advanceClock(0)).isInstanceOf(RejectedExecutionException.class);
        assertThat(first.isCancelled()).isTrue();
        assertThat(second.isCancelled()).as("offered too, despite the first refusal").isTrue();
        assertThatThrownBy(() -> timer.add(task("now", 0))).isInstanceOf(RejectedExecutionException.class);
    }

    @Test
    void shouldRejectInvalidSettings() {
        assertThatThrownBy(() -> new SystemTimer(0, 20, time, Runnable::run))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tickMs");
        assertThatThrownBy(() -> new SystemTimer(1, 1, time, Runnable::run))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("wheelSize");
        assertThatThrownBy(() -> task("too long", TimerTask.MAX_DELAY_MS + 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("delayMs");
    }

    private RecordingTask task(String name, long delayMs) {
        return new RecordingTask(name, delayMs, time, log);
    }

    private void advance(long ms) throws InterruptedException {
        time.advanceMs(ms);
        timer.advanceClock(0);
    }

    private void advanceTo(long timeMs) throws InterruptedException {
        advance(timeMs - time.hiResClockMs());
    }
}
