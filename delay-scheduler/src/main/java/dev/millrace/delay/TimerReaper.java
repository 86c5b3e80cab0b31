package dev.millrace.delay;

import java.util.Objects;

/**
 * A {@link Timer} that drives itself: it wraps another timer and owns a daemon thread that calls
 * {@link Timer#advanceClock advanceClock(reapIntervalMs)} in a loop. The thread sleeps in the delay
 * queue until the earliest bucket is due (or a new, earlier one is added), so it wakes only when
 * there is work, or once per {@code reapIntervalMs} at most when there is none.
 *
 * <p>Threading: thread-safe; {@link #add}, {@link #size} and {@link #advanceClock} go straight to
 * the wrapped timer. {@link #close()} stops the thread by interrupting it (a task that the wrapped
 * timer runs on this thread, with a {@code Runnable::run} executor, may see that interrupt), waits
 * for it to end unless called from it, then closes the wrapped timer. A failure of {@code
 * advanceClock} (such as a rejecting executor) is logged and the loop goes on.
 */
public final class TimerReaper implements Timer {

    public static final long DEFAULT_REAP_INTERVAL_MS = 200;

    private static final System.Logger LOG = System.getLogger(TimerReaper.class.getName());

    private final Timer timer;
    private final long reapIntervalMs;
    private final Thread thread;
    private volatile boolean running = true;

    private TimerReaper(String threadName, Timer timer, long reapIntervalMs) {
        this.timer = timer;
        this.reapIntervalMs = reapIntervalMs;
        this.thread = new Thread(this::reap, threadName);
        thread.setDaemon(true);
    }

    /** Starts a thread named {@code threadName} that advances {@code timer}, which the reaper then owns. */
    public static TimerReaper start(String threadName, Timer timer, long reapIntervalMs) {
        Objects.requireNonNull(threadName, "threadName");
        Objects.requireNonNull(timer, "timer");
        if (reapIntervalMs < 1) {
            throw new IllegalArgumentException("reapIntervalMs must be at least 1, got " + reapIntervalMs);
        }
        TimerReaper reaper = new TimerReaper(threadName, timer, reapIntervalMs);
        reaper.thread.start();
        return reaper;
    }

    private void reap() {
        while (running) {
            try {
                timer.advanceClock(reapIntervalMs);
            } catch (InterruptedException e) {
                // close() interrupts; any other interrupt is ignored while running
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.ERROR, "Advancing timer " + timer + " failed", e);
            }
        }
    }

    @Override
    public void add(TimerTask task) {
        timer.add(task);
    }

    @Override
    public boolean advanceClock(long timeoutMs) throws InterruptedException {
        return timer.advanceClock(timeoutMs);
    }

    @Override
    public int size() {
        return timer.size();
    }

    @Override
    public void close() {
        running = false;
        if (Thread.currentThread() != thread) {
            thread.interrupt();
            boolean interrupted = false;
            while (thread.isAlive()) {
                try {
                    thread.join();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        timer.close();
    }

    /** For tests: whether the reaper thread is still running. */
    boolean isAlive() {
        return thread.isAlive();
    }
}
