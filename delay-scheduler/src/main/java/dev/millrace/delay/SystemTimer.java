package dev.millrace.delay;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.StampedLock;
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
 * <p>Threading: thread-safe, with a {@link StampedLock} used as a read/write lock. {@link #add}
 * takes it for reading, so adds from many threads proceed together. Moving the clock takes it for
 * writing, so that no add sees a wheel half-way through a tick, but only for O(levels): flushing
 * the due bucket and re-adding its tasks then happens under the read lock, beside adds. That is
 * safe because the slot being flushed is the current tick at every level, which no add can target
 * until the clock moves again, and only the flushing thread moves it: calls to {@link
 * #advanceClock} are serialized with each other. {@link TimerTask#cancel()} takes no timer lock,
 * only the monitor of the task's bucket. Each bucket counts its own tasks, so no counter is shared
 * between threads and {@link #size()} sums the buckets, in O(wheelSize x levels). Tasks are handed
 * to the executor after every lock is released (the lock is never re-entered), so a task may add,
 * cancel, advance or close the timer. The executor is either the timer's own single daemon thread
 * or one the caller supplies (for instance {@code Runnable::run}, to run tasks on the advancing
 * thread), which must accept tasks until {@link #close()} and which the timer never shuts down.
 *
 * <p>On {@link #close()}: tasks still in the wheel are cancelled and never run; tasks already
 * handed to the executor still run, and close() waits for them when the executor is the timer's
 * own (unless called from that thread); {@link #add} then throws {@link IllegalStateException}
 * and {@link #advanceClock} returns false, after waiting out its timeout as an idle timer would.
 */
public final class SystemTimer implements Timer {

    public static final long DEFAULT_TICK_MS = 1;
    public static final int DEFAULT_WHEEL_SIZE = 20;

    private static final TimerTask[] NO_TASKS = new TimerTask[0];

    private final long tickMs;
    private final Time time;
    private final Executor executor;
    private final TaskExecutor ownedExecutor;
    private final DelayQueue<TimerTaskList> queue = new DelayQueue<>();
    private final TimingWheel wheel;
    /** Read: adds and flushes. Write: moving the clock, closing. Never held while a task runs. */
    private final StampedLock lock = new StampedLock();
    private final ReentrantLock advanceLock = new ReentrantLock();
    private final Consumer<TimerTask> reinsert = this::reinsert;
    private final Consumer<TimerTask> drop = TimerTask::cancel;
    /** Tasks found due during one advance, handed over once the locks are released; guarded by advanceLock. */
    private final List<TimerTask> expired = new ArrayList<>();
    private volatile boolean closed;

    /** A timer with the default tick and wheel size on the system clock, running tasks on its own thread. */
    public SystemTimer(String executorThreadName) {
        this(executorThreadName, DEFAULT_TICK_MS, DEFAULT_WHEEL_SIZE, Time.SYSTEM);
    }

    /** A timer that runs tasks on its own daemon thread named {@code executorThreadName}. */
    public SystemTimer(String executorThreadName, long tickMs, int wheelSize, Time time) {
        this(tickMs, wheelSize, time,
                new TaskExecutor(Objects.requireNonNull(executorThreadName, "executorThreadName")), true);
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
        this.wheel = new TimingWheel(tickMs, wheelSize, time.hiResClockMs(), queue, time);
    }

    @Override
    public void add(TimerTask task) {
        Objects.requireNonNull(task, "task");
        boolean due;
        long stamp = lock.readLock();
        try {
            if (closed) {
                throw new IllegalStateException("Timer is closed, cannot add " + task);
            }
            long nowMs = time.hiResClockMs();
            if (task.delayMs() <= 0) {
                task.arm(nowMs);
                due = task.tryExpire();
            } else {
                long dueMs = roundUpToTick(nowMs + task.delayMs());
                task.arm(dueMs);
                due = !wheel.add(task, dueMs) && task.tryExpire();
            }
        } finally {
            lock.unlockRead(stamp);
        }
        if (due) {
            handOver(task);
        }
    }

    @Override
    public boolean advanceClock(long timeoutMs) throws InterruptedException {
        // no early return when closed: the queue is then empty, so a caller looping on this waits
        // out its timeout like on an idle timer instead of spinning
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
        RejectedExecutionException rejected = null;
        for (TimerTask task : due) {
            try {
                handOver(task);
            } catch (RejectedExecutionException e) {
                if (rejected == null) {
                    rejected = e;
                }
            }
        }
        if (rejected != null) {
            throw rejected;
        }
        return due.length > 0;
    }

    /**
     * Flushes {@code first} and every other bucket due by now, earliest first; returns the tasks
     * found due. The clock moves under the write lock, which takes O(levels), and only ever to the
     * earliest bucket queued, so no queued bucket is ever behind the clock. The flush then runs
     * under the read lock, beside adds: at every level, the slot of the bucket being flushed is the
     * current tick, which no add can target until the clock moves again, and only this thread
     * moves it.
     */
    private TimerTask[] expireFrom(TimerTaskList first) {
        for (TimerTaskList bucket = first; bucket != null; bucket = queue.poll()) {
            long stamp = lock.writeLock();
            try {
                bucket = earliest(bucket);
                if (!closed) {
                    wheel.advanceClock(bucket.expirationMs());
                }
            } finally {
                lock.unlockWrite(stamp);
            }
            stamp = lock.readLock();
            try {
                bucket.flush(closed ? drop : reinsert);
            } finally {
                lock.unlockRead(stamp);
            }
        }
        if (expired.isEmpty()) {
            return NO_TASKS;
        }
        TimerTask[] due = expired.toArray(NO_TASKS);
        expired.clear();
        return due;
    }

    /**
     * The bucket to flush now: {@code polled}, unless an earlier one was queued after it was polled.
     * Called under the write lock, when no add is in progress, so the queue holds every bucket
     * offered so far. Without this, the clock could move past a bucket that an add (one that read
     * the time before the poll) queued meanwhile; a later add could then reuse that bucket's slot
     * for a tick one span later, changing the expiration of a bucket still in the delay queue: it
     * would be queued twice, out of order, and once flushed its second entry would block the
     * queue's head for good.
     */
    private TimerTaskList earliest(TimerTaskList polled) {
        TimerTaskList head = queue.peek();
        if (head == null || head.expirationMs() >= polled.expirationMs()) {
            return polled;
        }
        queue.offer(polled);
        return queue.poll();
    }

    /**
     * A task from a flushed bucket: into a finer bucket, or due. Cancelled tasks are dropped. The
     * task may be re-added by another thread meanwhile; its due time is read once, after its state,
     * so the bucket it lands in is one that belongs to that due time.
     */
    private void reinsert(TimerTask task) {
        if (task.state() != TimerTask.PENDING) {
            return;
        }
        long dueMs = task.expirationMs;
        if (!wheel.add(task, dueMs) && task.tryExpire()) {
            expired.add(task);
        }
    }

    /** Runs the task on the executor; one the executor refuses is cancelled, and the refusal rethrown unless closed. */
    private void handOver(TimerTask task) {
        try {
            executor.execute(task::fire);
        } catch (RejectedExecutionException e) {
            task.cancel();
            if (!closed) {
                throw e;
            }
        }
    }

    private long roundUpToTick(long timeMs) {
        return tickMs == 1 ? timeMs : Math.floorDiv(timeMs + tickMs - 1, tickMs) * tickMs;
    }

    @Override
    public int size() {
        return (int) Math.min(Integer.MAX_VALUE, wheel.size());
    }

    @Override
    public void close() {
        long stamp = lock.writeLock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            List<TimerTaskList> buckets = new ArrayList<>(queue);
            queue.clear();
            for (TimerTaskList bucket : buckets) {
                bucket.flush(drop);
            }
        } finally {
            lock.unlockWrite(stamp);
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
