package dev.millrace.delay;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;

/**
 * The {@link Timer}: a hierarchical {@link TimingWheel} whose non-empty buckets wait in a {@link
 * DelayQueue}, so the clock jumps straight from one due bucket to the next and an idle timer costs
 * nothing. Adding and cancelling a task are O(1) whatever the number pending; each task is moved at
 * most once per wheel level before it runs.
 *
 * <pre>
 *   add(task) ──▶ wheel: bucket for now + delayMs (level by distance) ──▶ bucket queued by its tick
 *   advanceClock(timeoutMs): DelayQueue.poll ──▶ due bucket ──▶ clock := its tick ──▶ flush:
 *        each task re-added ─┬─▶ a finer bucket (cascade)
 *                            └─▶ due: handed to the executor ──▶ run()
 * </pre>
 *
 * <p>Due times are taken on {@link Time#hiResClockMs()} and rounded up to {@code tickMs}, so a
 * task never runs before its delay has passed and runs within one tick of it, plus the latency of
 * whoever calls {@link #advanceClock} (usually a {@link TimerReaper}) and of the executor. Delays go
 * up to {@link TimerTask#MAX_DELAY_MS}; with the defaults (1 ms, 20 slots) 30 days take 8 levels.
 *
 * <p>Threading: thread-safe. {@link #add} takes the read lock, so adds from many threads proceed
 * together; moving the clock and flushing buckets takes the write lock, so no add sees a wheel
 * half-way through a tick. {@link TimerTask#cancel()} takes no timer lock, only the lock of the
 * task's bucket. Calls to {@link #advanceClock} are serialized with each other. Tasks are handed to
 * the executor after the locks are released, so a task may add, cancel or even advance the timer.
 * The executor is either the timer's own single daemon thread or one the caller supplies (for
 * instance {@code Runnable::run}, to run tasks on the advancing thread), which must accept tasks
 * until {@link #close()} and which the timer never shuts down.
 */
public final class SystemTimer implements Timer {

    public static final long DEFAULT_TICK_MS = 1;
    public static final int DEFAULT_WHEEL_SIZE = 20;

    private final long tickMs;
    private final Time time;
    private final Executor executor;
    private final TaskExecutor ownedExecutor;
    private final DelayQueue<TimerTaskList> queue = new DelayQueue<>();
    private final LongAdder taskCounter = new LongAdder();
    private final TimingWheel wheel;
    private final Lock readLock;
    private final Lock writeLock;
    private final ReentrantLock advanceLock = new ReentrantLock();
    private final Consumer<TimerTask> reinsert = this::reinsert;
    /** Tasks found due during one advance, handed to the executor once the lock is released; guarded by the write lock. */
    private final List<TimerTask> expired = new ArrayList<>();
    private volatile boolean closed;

    /** A timer with the default tick and wheel size on the system clock, running tasks on its own thread. */
    public SystemTimer(String executorThreadName) {
        this(executorThreadName, DEFAULT_TICK_MS, DEFAULT_WHEEL_SIZE, Time.SYSTEM);
    }

    /** A timer that runs tasks on its own daemon thread named {@code executorThreadName}. */
    public SystemTimer(String executorThreadName, long tickMs, int wheelSize, Time time) {
        this(tickMs, wheelSize, time, new TaskExecutor(Objects.requireNonNull(executorThreadName, "executorThreadName")),
                true);
    }

    /** A timer that runs tasks on the caller's executor, which it never shuts down. */
    public SystemTimer(long tickMs, int wheelSize, Time time, Executor executor) {
        this(tickMs, wheelSize, time, executor, false);
    }

    private SystemTimer(long tickMs, int wheelSize, Time time, Executor executor, boolean owned) {
        if (tickMs < 1) {
            throw new IllegalArgumentException("tickMs must be at least 1, got " + tickMs);
        }
        if (wheelSize < 2) {
            throw new IllegalArgumentException("wheelSize must be at least 2, got " + wheelSize);
        }
        this.tickMs = tickMs;
        this.time = Objects.requireNonNull(time, "time");
        this.executor = Objects.requireNonNull(executor, "executor");
        this.ownedExecutor = owned ? (TaskExecutor) executor : null;
        this.wheel = new TimingWheel(tickMs, wheelSize, time.hiResClockMs(), taskCounter, queue, time);
        ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
        this.readLock = lock.readLock();
        this.writeLock = lock.writeLock();
    }

    @Override
    public void add(TimerTask task) {
        Objects.requireNonNull(task, "task");
        boolean due;
        readLock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("Timer is closed, cannot add " + task);
            }
            long nowMs = time.hiResClockMs();
            if (task.delayMs() <= 0) {
                task.arm(nowMs);
                due = task.tryExpire();
            } else {
                task.arm(roundUpToTick(nowMs + task.delayMs()));
                due = !wheel.add(task) && task.tryExpire();
            }
        } finally {
            readLock.unlock();
        }
        if (due) {
            handOver(task);
        }
    }

    @Override
    public boolean advanceClock(long timeoutMs) throws InterruptedException {
        if (closed) {
            return false;
        }
        TimerTask[] due;
        advanceLock.lockInterruptibly();
        try {
            TimerTaskList bucket = timeoutMs > 0 ? queue.poll(timeoutMs, TimeUnit.MILLISECONDS) : queue.poll();
            if (bucket == null) {
                return false;
            }
            due = expireFrom(bucket);
        } finally {
            advanceLock.unlock();
        }
        for (TimerTask task : due) {
            handOver(task);
        }
        return due.length > 0;
    }

    /** Flushes {@code first} and every other bucket due by now; returns the tasks found due. */
    private TimerTask[] expireFrom(TimerTaskList first) {
        writeLock.lock();
        try {
            if (closed) {
                first.flush(TimerTask::cancel);
                return new TimerTask[0];
            }
            for (TimerTaskList bucket = first; bucket != null; bucket = queue.poll()) {
                wheel.advanceClock(bucket.expirationMs());
                bucket.flush(reinsert);
            }
            TimerTask[] due = expired.toArray(new TimerTask[0]);
            expired.clear();
            return due;
        } finally {
            writeLock.unlock();
        }
    }

    /** A task from a flushed bucket: into a finer bucket, or due. Cancelled tasks are dropped. */
    private void reinsert(TimerTask task) {
        if (task.state() == TimerTask.PENDING && !wheel.add(task) && task.tryExpire()) {
            expired.add(task);
        }
    }

    private void handOver(TimerTask task) {
        try {
            executor.execute(task::fire);
        } catch (RejectedExecutionException e) {
            if (!closed) {
                throw e;
            }
            task.cancel();
        }
    }

    private long roundUpToTick(long timeMs) {
        return tickMs == 1 ? timeMs : Math.floorDiv(timeMs + tickMs - 1, tickMs) * tickMs;
    }

    @Override
    public int size() {
        return (int) Math.max(0, Math.min(Integer.MAX_VALUE, taskCounter.sum()));
    }

    @Override
    public void close() {
        writeLock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            List<TimerTaskList> buckets = new ArrayList<>(queue);
            queue.clear();
            for (TimerTaskList bucket : buckets) {
                bucket.flush(TimerTask::cancel);
            }
        } finally {
            writeLock.unlock();
        }
        if (ownedExecutor != null) {
            ownedExecutor.close();
        }
    }

    /** For tests: the number of wheel levels created so far. */
    int levels() {
        return wheel.levels();
    }

    /** For tests: the timer's own executor thread, or null. */
    Thread executorThread() {
        return ownedExecutor == null ? null : ownedExecutor.thread();
    }
}
