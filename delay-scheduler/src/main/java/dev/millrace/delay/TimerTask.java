package dev.millrace.delay;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * An action that a {@link Timer} runs once its delay has passed: subclass it, implement {@link
 * #run()}, and {@link Timer#add add} it to a timer. The delay is fixed at construction; adding the
 * task starts it, and adding it again restarts it from that moment.
 *
 * <pre>
 *           add              due               executor
 *   NEW ─────────▶ PENDING ───────▶ EXPIRED ──────────────▶ FIRED (run() is called)
 *                   │   ▲             │
 *            cancel │   │ add         │ cancel
 *                   ▼   │             ▼
 *                 CANCELLED ◀─────────┘          add, from any state: back to PENDING
 * </pre>
 *
 * <p>Invariants: a task is linked into at most one bucket of one timer, and only while it is
 * {@code PENDING} (or for a moment after a concurrent cancel, which unlinks it). {@link #run()} is
 * called at most once per add, never before the delay has passed and never after a {@link
 * #cancel()} that returned true. It runs on the timer's executor, never on the thread that adds
 * the task; an exception it throws is logged (through {@link System.Logger}) and dropped. Adding a
 * task that is pending moves it: it leaves its bucket in O(1) and gets a new due time; a run
 * already handed to the executor for the earlier add is then skipped, unless the new due time has
 * also passed by the time it starts. One race is left to the caller: a re-add that lands while the
 * timer is expiring the earlier add (at the earlier due time itself) may be too late to postpone
 * it, and the task then runs once, at the earlier due time. Callers that need an exact new
 * deadline cancel the task and add a new one, as the broker does everywhere.
 *
 * <p>Threading: {@link #cancel()} and {@link #isCancelled()} may be called from any thread at any
 * time, also while the timer is expiring the task. A cancel racing with an add of the same task
 * takes effect as if one of the two came first. The links ({@link #prev}, {@link #next}) are
 * guarded by the monitor of the bucket named by {@code list}; {@link #expirationMs} is written by
 * the adding thread before the task is linked and read under that bucket's monitor or by the thread
 * that flushed the bucket.
 */
public abstract class TimerTask implements Runnable {

    /** The longest delay accepted, about 73 million years: effectively unbounded, yet now + delay cannot overflow. */
    public static final long MAX_DELAY_MS = Long.MAX_VALUE / 4;

    static final int NEW = 0;
    static final int PENDING = 1;
    static final int EXPIRED = 2;
    static final int FIRED = 3;
    static final int CANCELLED = 4;

    private static final System.Logger LOG = System.getLogger(TimerTask.class.getName());
    private static final VarHandle STATE;
    private static final VarHandle LIST;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            STATE = lookup.findVarHandle(TimerTask.class, "state", int.class);
            LIST = lookup.findVarHandle(TimerTask.class, "list", TimerTaskList.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final long delayMs;
    private volatile int state; // NEW, without a volatile write in the constructor
    private volatile TimerTaskList list;

    /** When the task is due, on the timer's monotonic clock, rounded up to the timer's tick. */
    long expirationMs;
    TimerTask prev;
    TimerTask next;

    /**
     * @param delayMs how long after each {@link Timer#add} the task runs; zero or negative means as
     *                soon as possible, on the timer's executor
     * @throws IllegalArgumentException if {@code delayMs} exceeds {@link #MAX_DELAY_MS}
     */
    protected TimerTask(long delayMs) {
        if (delayMs > MAX_DELAY_MS) {
            throw new IllegalArgumentException("delayMs must be at most " + MAX_DELAY_MS + ", got " + delayMs);
        }
        this.delayMs = delayMs;
    }

    public final long delayMs() {
        return delayMs;
    }

    /**
     * Stops the task from running, in O(1): it leaves its bucket at once. Idempotent.
     *
     * @return true if this call stopped a pending or expired task (it will not run), false if the task
     *         was never added, already cancelled, or already started running
     */
    public final boolean cancel() {
        int current;
        do {
            current = state;
            if (current != PENDING && current != EXPIRED) {
                return false;
            }
        } while (!STATE.compareAndSet(this, current, CANCELLED));
        unlink(true);
        return true;
    }

    public final boolean isCancelled() {
        return state == CANCELLED;
    }

    /** Leaves the current bucket, if any, and becomes pending until {@code expirationMs}. */
    final void arm(long expirationMs) {
        unlink(false);
        this.expirationMs = expirationMs;
        state = PENDING;
    }

    /** Pending to expired: the caller then hands {@link #fire()} to the executor. False if cancelled. */
    final boolean tryExpire() {
        return STATE.compareAndSet(this, PENDING, EXPIRED);
    }

    /** What the executor runs: {@link #run()}, unless the task was cancelled or re-added meanwhile. */
    final void fire() {
        if (!STATE.compareAndSet(this, EXPIRED, FIRED)) {
            return;
        }
        try {
            run();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "Timer task " + this + " failed", e);
        }
    }

    final int state() {
        return state;
    }

    final TimerTaskList list() {
        return list;
    }

    /** Claims the task for {@code bucket}; fails if it is linked elsewhere. Call under the bucket's monitor. */
    final boolean tryClaimList(TimerTaskList bucket) {
        return LIST.compareAndSet(this, null, bucket);
    }

    /** Marks the task as in no bucket. Call under the monitor of the bucket it leaves. */
    final void releaseList() {
        list = null;
    }

    /**
     * Removes the task from whichever bucket holds it, following it if it moves meanwhile. With
     * {@code onlyIfCancelled}, stops as soon as the task is no longer cancelled (re-added by another
     * thread), so that a cancel never unlinks the newer add.
     */
    private void unlink(boolean onlyIfCancelled) {
        TimerTaskList current = list;
        while (current != null && (!onlyIfCancelled || state == CANCELLED)) {
            current.remove(this, onlyIfCancelled);
            current = list;
        }
    }

    @Override
    public String toString() {
        return getClass().getName() + "[delayMs=" + delayMs + ", state=" + stateName(state) + "]";
    }

    private static String stateName(int state) {
        return switch (state) {
            case NEW -> "NEW";
            case PENDING -> "PENDING";
            case EXPIRED -> "EXPIRED";
            case FIRED -> "FIRED";
            default -> "CANCELLED";
        };
    }
}
