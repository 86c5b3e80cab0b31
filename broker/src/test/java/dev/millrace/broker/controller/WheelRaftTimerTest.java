package dev.millrace.broker.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import com.alipay.sofa.jraft.JRaftUtils;
import com.alipay.sofa.jraft.util.timer.Timer;

/** SOFAJRaft's timers on the timing wheel: what a Raft node relies on them for. */
@Timeout(20)
class WheelRaftTimerTest {

    @Test
    void sofaJraftTakesMillracesFactoryAndItsTimersAreTheWheels() {
        assertThat(JRaftUtils.raftTimerFactory()).isInstanceOf(WheelRaftTimerFactory.class);

        Timer timer = JRaftUtils.raftTimerFactory().getElectionTimer(false, "test-election");
        try {
            assertThat(timer).isInstanceOf(WheelRaftTimer.class);
        } finally {
            timer.stop();
        }
    }

    @Test
    void aTimeoutRunsOnTheTimersThreadNotBeforeItsDelay() throws Exception {
        WheelRaftTimer timer = new WheelRaftTimer("test-timer");
        try {
            CountDownLatch ran = new CountDownLatch(1);
            AtomicReference<String> thread = new AtomicReference<>();
            long start = System.nanoTime();
            AtomicReference<Long> elapsedNanos = new AtomicReference<>();
            com.alipay.sofa.jraft.util.timer.Timeout timeout = timer.newTimeout(t -> {
                elapsedNanos.set(System.nanoTime() - start);
                thread.set(Thread.currentThread().getName());
                ran.countDown();
            }, 1500, TimeUnit.MICROSECONDS);

            assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(elapsedNanos.get()).isGreaterThanOrEqualTo(TimeUnit.MICROSECONDS.toNanos(1500));
            assertThat(thread.get()).isEqualTo("test-timer");
            assertThat(timeout.isExpired()).isTrue();
            assertThat(timeout.isCancelled()).isFalse();
            assertThat(timeout.cancel()).isFalse();
            assertThat(timer.stop()).isEmpty();
        } finally {
            timer.stop();
        }
    }

    @Test
    void aCancelledTimeoutNeverRunsAndStopReturnsOnlyThoseLeft() throws Exception {
        WheelRaftTimer timer = new WheelRaftTimer("test-timer");
        CountDownLatch later = new CountDownLatch(1);
        com.alipay.sofa.jraft.util.timer.Timeout cancelled = timer.newTimeout(t -> later.countDown(), 1,
                TimeUnit.HOURS);
        com.alipay.sofa.jraft.util.timer.Timeout left = timer.newTimeout(t -> later.countDown(), 1, TimeUnit.HOURS);
        com.alipay.sofa.jraft.util.timer.Timeout never = timer.newTimeout(t -> later.countDown(), Long.MAX_VALUE,
                TimeUnit.DAYS);

        assertThat(cancelled.cancel()).isTrue();
        assertThat(cancelled.cancel()).isFalse();
        assertThat(cancelled.isCancelled()).isTrue();
        Set<com.alipay.sofa.jraft.util.timer.Timeout> unprocessed = timer.stop();

        assertThat(unprocessed).containsExactlyInAnyOrder(left, never);
        assertThat(left.isExpired()).isFalse();
        assertThat(later.getCount()).isEqualTo(1);
        assertThatThrownBy(() -> timer.newTimeout(t -> { }, 1, TimeUnit.MILLISECONDS))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("test-timer is stopped");
    }

    @Test
    void aTaskThatThrowsDoesNotStopTheTimer() throws Exception {
        WheelRaftTimer timer = new WheelRaftTimer("test-timer");
        try {
            CountDownLatch second = new CountDownLatch(1);
            timer.newTimeout(t -> {
                throw new IllegalStateException("boom");
            }, 0, TimeUnit.MILLISECONDS);
            timer.newTimeout(t -> second.countDown(), 2, TimeUnit.MILLISECONDS);

            assertThat(second.await(10, TimeUnit.SECONDS)).isTrue();
        } finally {
            timer.stop();
        }
    }

    @Test
    void aTaskMayScheduleTheNextOneAsRepeatedTimersDo() throws Exception {
        WheelRaftTimer timer = new WheelRaftTimer("test-timer");
        try {
            CountDownLatch runs = new CountDownLatch(3);
            com.alipay.sofa.jraft.util.timer.TimerTask[] again = new com.alipay.sofa.jraft.util.timer.TimerTask[1];
            again[0] = t -> {
                runs.countDown();
                if (runs.getCount() > 0) {
                    timer.newTimeout(again[0], 1, TimeUnit.MILLISECONDS);
                }
            };
            timer.newTimeout(again[0], 1, TimeUnit.MILLISECONDS);

            assertThat(runs.await(10, TimeUnit.SECONDS)).isTrue();
        } finally {
            timer.stop();
        }
    }
}
