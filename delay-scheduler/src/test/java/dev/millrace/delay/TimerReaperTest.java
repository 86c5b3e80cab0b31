package dev.millrace.delay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link TimerReaper} on a {@link MockTime}: the test moves the clock and waits on latches; the
 * reaper's own thread notices the due bucket within one reap interval of real time.
 */
@Timeout(20)
class TimerReaperTest {

    private final MockTime time = new MockTime();
    private final TimerReaper reaper = TimerReaper.start("reaper-test", new SystemTimer(1, 20, time, Runnable::run), 5);

    @AfterEach
    void closeReaper() {
        reaper.close();
    }

    @Test
    void shouldRunDueTasksFromItsOwnThread() throws InterruptedException {
        CountDownLatch ran = new CountDownLatch(1);
        AtomicReference<String> threadName = new AtomicReference<>();
        reaper.add(new TimerTask(100) {
            @Override
            public void run() {
                threadName.set(Thread.currentThread().getName());
                ran.countDown();
            }
        });
        assertThat(reaper.size()).isEqualTo(1);

        time.advanceMs(100);
        ran.await();
        assertThat(threadName.get()).isEqualTo("reaper-test");
        assertThat(reaper.size()).isZero();
    }

    @Test
    void shouldStopItsThreadAndCloseTheTimerOnClose() {
        TimerTask pending = new TimerTask(1_000) {
            @Override
            public void run() {
            }
        };
        reaper.add(pending);
        reaper.close();

        assertThat(reaper.isAlive()).isFalse();
        assertThat(pending.isCancelled()).isTrue();
        assertThatThrownBy(() -> reaper.add(pending)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void shouldRejectANonPositiveInterval() {
        SystemTimer timer = new SystemTimer(1, 20, time, Runnable::run);
        assertThatThrownBy(() -> TimerReaper.start("bad", timer, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("reapIntervalMs");
        timer.close();
    }
}
