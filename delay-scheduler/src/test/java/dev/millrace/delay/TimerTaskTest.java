package dev.millrace.delay;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The life cycle of a {@link TimerTask} on its own, without a timer. */
@Timeout(10)
class TimerTaskTest {

    private final MockTime time = new MockTime();
    private final RecordingTask task = new RecordingTask("task", 10, time, new ArrayList<>());

    @Test
    void shouldRunOnlyWhenExpiredAndOnlyOnce() {
        task.fire();
        assertThat(task.runs).as("not armed").hasValue(0);
        task.arm(10);
        task.fire();
        assertThat(task.runs).as("pending, not expired").hasValue(0);

        assertThat(task.tryExpire()).isTrue();
        task.fire();
        task.fire();
        assertThat(task.runs).hasValue(1);
        assertThat(task.state()).isEqualTo(TimerTask.FIRED);
    }

    @Test
    void shouldNotExpireOnceCancelled() {
        task.arm(10);
        assertThat(task.cancel()).isTrue();
        assertThat(task.tryExpire()).isFalse();
        task.fire();
        assertThat(task.runs).hasValue(0);
    }

    @Test
    void shouldBecomePendingAgainWhenReArmedFromAnyState() {
        task.arm(10);
        task.cancel();
        task.arm(20);
        assertThat(task.state()).isEqualTo(TimerTask.PENDING);
        assertThat(task.isCancelled()).isFalse();
        assertThat(task.expirationMs).isEqualTo(20);
    }

    @Test
    void shouldNameItsStateInToString() {
        assertThat(task.toString()).contains("delayMs=10", "NEW");
        task.arm(10);
        task.cancel();
        assertThat(task.toString()).contains("CANCELLED");
    }
}
