package dev.millrace.broker.controller;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.alipay.sofa.jraft.util.timer.Timeout;
import com.alipay.sofa.jraft.util.timer.Timer;

import dev.millrace.delay.SystemTimer;
import dev.millrace.delay.Time;
import dev.millrace.delay.TimerReaper;

/**
 * A SOFAJRaft {@link Timer} on a {@link SystemTimer} of its own, advanced by a {@link TimerReaper} thread that also
 * runs the tasks, as SOFAJRaft's {@code HashedWheelTimer} runs them on its worker: one task at a time, so a slow one
 * delays the others of this timer only. Delays are rounded up to whole milliseconds (the wheel's tick), so a task
 * never runs early. A task that throws is logged, as SOFAJRaft's timer does, and the timer goes on.
 *
 * <p>{@link #stop()} stops the thread and returns the timeouts that had neither run nor been cancelled (a second call
 * returns none); they never run, and from then on report themselves cancelled (the wheel drops them as it closes).
 * After it, {@link #newTimeout} throws {@link IllegalStateException}. Thread-safe.
 */
final class WheelRaftTimer implements Timer {

    private static final Logger LOG = LoggerFactory.getLogger(WheelRaftTimer.class);
    private static final long NANOS_PER_MS = 1_000_000L;

    private final String name;
    private final TimerReaper reaper;
    /** Timeouts added and not yet run or cancelled. */
    private final Set<Entry> pending = ConcurrentHashMap.newKeySet();
    private volatile boolean stopped;

    WheelRaftTimer(String name) {
        this.name = name;
        this.reaper = TimerReaper.start(name, new SystemTimer(SystemTimer.DEFAULT_TICK_MS,
                SystemTimer.DEFAULT_WHEEL_SIZE, Time.SYSTEM, Runnable::run), TimerReaper.DEFAULT_REAP_INTERVAL_MS);
    }

    @Override
    public Timeout newTimeout(com.alipay.sofa.jraft.util.timer.TimerTask task, long delay, TimeUnit unit) {
        if (task == null || unit == null) {
            throw new NullPointerException(task == null ? "task" : "unit");
        }
        if (stopped) {
            throw new IllegalStateException("timer " + name + " is stopped");
        }
        long nanos = unit.toNanos(Math.max(0, delay)); // saturates rather than overflows
        long delayMs = Math.min(dev.millrace.delay.TimerTask.MAX_DELAY_MS,
                nanos / NANOS_PER_MS + (nanos % NANOS_PER_MS == 0 ? 0 : 1));
        Entry entry = new Entry(task, delayMs);
        pending.add(entry);
        try {
            reaper.add(entry.wheelTask);
        } catch (IllegalStateException e) {
            pending.remove(entry);
            throw new IllegalStateException("timer " + name + " is stopped", e);
        }
        return entry;
    }

    @Override
    public Set<Timeout> stop() {
        synchronized (this) {
            if (stopped) {
                return Set.of();
            }
            stopped = true;
        }
        // taken out of pending first, so that none of them runs any more (closing cancels them in the wheel)
        Set<Timeout> unprocessed = new HashSet<>();
        for (Entry entry : pending) {
            if (pending.remove(entry) && !entry.isCancelled()) {
                unprocessed.add(entry);
            }
        }
        reaper.close();
        return unprocessed;
    }

    @Override
    public String toString() {
        return "WheelRaftTimer[" + name + ", " + pending.size() + " pending]";
    }

    /** One timeout: SOFAJRaft's handle on a task of the wheel. */
    private final class Entry implements Timeout {

        private final com.alipay.sofa.jraft.util.timer.TimerTask task;
        private final dev.millrace.delay.TimerTask wheelTask;
        private volatile boolean expired;

        Entry(com.alipay.sofa.jraft.util.timer.TimerTask task, long delayMs) {
            this.task = task;
            this.wheelTask = new dev.millrace.delay.TimerTask(delayMs) {
                @Override
                public void run() {
                    fire();
                }
            };
        }

        private void fire() {
            if (!pending.remove(this)) {
                return; // the timer stopped
            }
            expired = true;
            try {
                task.run(this);
            } catch (Throwable t) {
                LOG.warn("A task of timer {} failed: {}", name, task, t);
            }
        }

        @Override
        public Timer timer() {
            return WheelRaftTimer.this;
        }

        @Override
        public com.alipay.sofa.jraft.util.timer.TimerTask task() {
            return task;
        }

        @Override
        public boolean isExpired() {
            return expired;
        }

        @Override
        public boolean isCancelled() {
            return wheelTask.isCancelled();
        }

        /** Stops the task from running, unless it already started; true if this call stopped it. */
        @Override
        public boolean cancel() {
            if (!wheelTask.cancel()) {
                return false;
            }
            pending.remove(this);
            return true;
        }
    }
}
