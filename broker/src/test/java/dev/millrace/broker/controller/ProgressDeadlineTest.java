package dev.millrace.broker.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A start deadline on a hand-moved clock: stretched by progress, one window at a time, up to its cap. */
@Timeout(10)
class ProgressDeadlineTest {

    private final AtomicLong now = new AtomicLong(1_000);
    private final AtomicLong applied = new AtomicLong(5);

    @Test
    void shouldRunOutAfterOneWindowWithoutProgress() {
        ProgressDeadline deadline = new ProgressDeadline(100, 10, applied::get, now::get);

        now.addAndGet(60);
        assertThat(deadline.remainingNs()).isEqualTo(40);
        now.addAndGet(40);
        assertThat(deadline.remainingNs()).isZero();
    }

    @Test
    void shouldMoveOneWindowOnWhileTheNodeKeepsApplying() {
        ProgressDeadline deadline = new ProgressDeadline(100, 10, applied::get, now::get);

        now.addAndGet(100);
        applied.incrementAndGet();
        assertThat(deadline.remainingNs()).as("applied an entry in the window: one more").isEqualTo(100);
        now.addAndGet(100);
        assertThat(deadline.remainingNs()).as("nothing applied in the second window").isZero();
    }

    @Test
    void shouldStopStretchingAtItsCap() {
        ProgressDeadline deadline = new ProgressDeadline(100, 3, applied::get, now::get);

        for (int window = 1; window < 3; window++) {
            now.addAndGet(100);
            applied.incrementAndGet();
            assertThat(deadline.remainingNs()).isPositive();
        }
        now.addAndGet(100);
        applied.incrementAndGet();
        assertThat(deadline.remainingNs()).as("three windows in all, progress or not").isZero();
    }

    @Test
    void shouldRefuseAWindowOrCountThatIsNotPositive() {
        assertThatThrownBy(() -> new ProgressDeadline(0, 1, applied::get, now::get))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must be positive");
        assertThatThrownBy(() -> new ProgressDeadline(1, 0, applied::get, now::get))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must be positive");
    }
}
