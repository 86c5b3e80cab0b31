package dev.millrace.delay;

import java.util.concurrent.Delayed;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * A bucket of a {@link TimingWheel}: the tasks due within one tick of one wheel, in a doubly linked
 * circular list around a sentinel, so that adding (at the tail) and removing any task are O(1).
 *
 * <pre>
 *   ┌─▶ root ⇄ task ⇄ task ⇄ ... ⇄ task ─┐     root: a sentinel, never run
 *   └────────────────────────────────────┘     empty bucket: root.next == root.prev == root
 * </pre>
 *
 * <p>The bucket is {@link Delayed}: its expiration is the start of the tick it currently stands
 * for, and the timer's {@code DelayQueue} hands it out when the timer's clock reaches that time.
 * Invariants: every task linked here has {@code list == this}, and {@code taskCount} counts them
 * (a count per bucket rather than one per timer, so that threads adding and cancelling in
 * different buckets share no counter); the expiration is {@link #NOT_SCHEDULED} from a flush
 * until the next add, and the wheel changes it only when the bucket is not queued (a bucket is
 * reused for a later tick only after it was flushed), so the queue's order is never disturbed.
 *
 * <p>Threading: thread-safe. Links change only under this object's monitor; {@link #flush} detaches
 * the whole list under the monitor, into an array of its own, and hands the tasks out from that
 * array after releasing it.
 */
final class TimerTaskList implements Delayed {

    /** The expiration of a bucket that is not in the delay queue. */
    static final long NOT_SCHEDULED = Long.MIN_VALUE;

    private final TimerTask root = new Sentinel();
    private final AtomicLong expirationMs = new AtomicLong(NOT_SCHEDULED);
    private final Time time;
    /** Tasks linked here; guarded by this object's monitor. */
    private int taskCount;

    TimerTaskList(Time time) {
        this.time = time;
        root.next = root;
        root.prev = root;
    }

    /**
     * Links the task at the tail. Fails, leaving everything unchanged, if the task is linked into
     * another bucket (by a concurrent add of the same task): the caller unlinks it and retries.
     */
    boolean add(TimerTask task) {
        synchronized (this) {
            if (!task.tryClaimList(this)) {
                return false;
            }
            TimerTask tail = root.prev;
            task.next = root;
            task.prev = tail;
            tail.next = task;
            root.prev = task;
            taskCount++;
        }
        if (task.isCancelled()) {
            // cancelled between being armed and being linked: its cancel may have missed the link
            remove(task, true);
        }
        return true;
    }

    /** Unlinks the task if it is still here (and, with {@code onlyIfCancelled}, still cancelled). */
    synchronized void remove(TimerTask task, boolean onlyIfCancelled) {
        if (task.list() != this || (onlyIfCancelled && !task.isCancelled())) {
            return;
        }
        task.prev.next = task.next;
        task.next.prev = task.prev;
        task.next = null;
        task.prev = null;
        task.releaseList();
        taskCount--;
    }

    /**
     * Empties the bucket, marks it not scheduled, and then passes each task that was in it, in the
     * order they were added, to {@code action} (the timer re-adds them to a finer wheel or runs them).
     *
     * <p>The tasks are unlinked into an array under the monitor and handed out from that array: a
     * flush runs beside adds, so a task already handed out (or not yet) may be re-added, and so
     * linked into another bucket, while this loop goes on. Walking the detached links instead would
     * then follow the task into that other bucket and lose the rest of this one.
     */
    void flush(Consumer<TimerTask> action) {
        TimerTask[] detached;
        synchronized (this) {
            expirationMs.set(NOT_SCHEDULED);
            if (taskCount == 0) {
                return;
            }
            detached = new TimerTask[taskCount];
            TimerTask task = root.next;
            for (int i = 0; i < detached.length; i++) {
                TimerTask next = task.next;
                task.next = null;
                task.prev = null;
                task.releaseList();
                detached[i] = task;
                task = next;
            }
            root.next = root;
            root.prev = root;
            taskCount = 0;
        }
        for (TimerTask task : detached) {
            action.accept(task);
        }
    }

    /**
     * Sets the tick this bucket stands for.
     *
     * @return true if it changed, in which case the caller must offer the bucket to the delay queue
     */
    boolean setExpiration(long expirationMs) {
        return this.expirationMs.get() != expirationMs && this.expirationMs.getAndSet(expirationMs) != expirationMs;
    }

    long expirationMs() {
        return expirationMs.get();
    }

    /** The number of tasks linked here. */
    synchronized int size() {
        return taskCount;
    }

    /** For tests: whether no task is linked. */
    synchronized boolean isEmpty() {
        return root.next == root;
    }

    @Override
    public long getDelay(TimeUnit unit) {
        long delayMs = Math.max(expirationMs.get() - time.hiResClockMs(), 0);
        return unit.convert(delayMs, TimeUnit.MILLISECONDS);
    }

    /** Orders by expiration; only ever compared with other buckets of the same timer. */
    @Override
    public int compareTo(Delayed other) {
        return Long.compare(expirationMs.get(), ((TimerTaskList) other).expirationMs.get());
    }

    @Override
    public String toString() {
        return "TimerTaskList[expirationMs=" + expirationMs.get() + "]";
    }

    /** The list's anchor: never added to a timer, never run. */
    private static final class Sentinel extends TimerTask {
        Sentinel() {
            super(0);
        }

        @Override
        public void run() {
        }
    }
}
