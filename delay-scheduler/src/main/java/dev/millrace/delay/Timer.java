package dev.millrace.delay;

/**
 * Runs {@link TimerTask}s after their delay. Every broker timeout goes through one: long-poll
 * fetches, {@code acks=all} waits, record-lock expiry, redelivery delay, delayed messages.
 *
 * <p>Contract: a task never runs before its delay has passed on the timer's clock, runs at most once
 * per {@link #add}, and never runs once {@link TimerTask#cancel()} returned true. (One exception, for a
 * task added again while the timer is expiring its earlier add: see {@link TimerTask}.) Tasks run on the
 * timer's executor, never on the thread that calls {@link #add}. Implementations are thread-safe.
 */
public interface Timer extends AutoCloseable {

    /**
     * Schedules the task to run {@link TimerTask#delayMs()} from now; a task already scheduled is
     * moved to the new time. A delay of zero or less hands the task to the executor at once.
     *
     * @throws IllegalStateException if the timer is closed
     */
    void add(TimerTask task);

    /**
     * Waits up to {@code timeoutMs} for the earliest bucket to come due, then moves the clock to it
     * and expires every bucket due by then. The clock never moves otherwise: an idle timer does no
     * work. Zero or less does not wait.
     *
     * @return true if at least one task was handed to the executor
     * @throws java.util.concurrent.RejectedExecutionException if the executor refused a due task;
     *         every due task is still offered to it, and those refused are cancelled
     */
    boolean advanceClock(long timeoutMs) throws InterruptedException;

    /**
     * The number of tasks waiting: added, not yet due, not cancelled. Exact when nothing runs
     * concurrently; meant for metrics and tests, not for hot paths.
     */
    int size();

    /**
     * Stops the timer: tasks still waiting are cancelled, {@link #add} then throws, and tasks already
     * handed to the executor still run. Idempotent.
     */
    @Override
    void close();
}
