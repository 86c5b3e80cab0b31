package dev.millrace.jms.wire.failover;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Whether a connection's cluster has been unreachable for longer than the failover window, from the results of its
 * periodic liveness checks: the ExceptionListener is to be called once per outage, when the window is exceeded, and
 * never for an outage the window covers.
 *
 * <pre>
 *   ok ---failure---> failing since t0 ---failure, now - t0 &gt; window---> reported (report() true, once)
 *    ^                      |                                                  |
 *    +-------success--------+--------------------------success----------------+
 * </pre>
 *
 * {@code t0} is when the first failing check started (the cluster answered the check before it). With a window of 0,
 * the first failure is reported, as before failover existed.
 *
 * <p>Time comes from an injected nanosecond clock. Thread-safe (synchronized; checks come from one thread anyway).
 */
public final class Outage {

    private final long windowNanos;
    private final LongSupplier nanoClock;
    private boolean failing;
    private boolean reported;
    private long failingSinceNanos;
    private long failedChecks;
    private long succeededChecks;

    public Outage(long windowMs, LongSupplier nanoClock) {
        this.windowNanos = TimeUnit.MILLISECONDS.toNanos(windowMs);
        this.nanoClock = nanoClock;
    }

    /** The time to pass as a check's start to {@link #onFailure}. */
    public long now() {
        return nanoClock.getAsLong();
    }

    /** A check succeeded: the outage, if any, is over. */
    public synchronized void onSuccess() {
        failing = false;
        reported = false;
        succeededChecks++;
        notifyAll();
    }

    /**
     * A check that started at {@code checkStartNanos} (from {@link #now}) failed.
     *
     * @return true exactly once per outage: when it has now lasted longer than the window
     */
    public synchronized boolean onFailure(long checkStartNanos) {
        failedChecks++;
        notifyAll();
        if (!failing) {
            failing = true;
            failingSinceNanos = checkStartNanos;
        }
        if (reported || nanoClock.getAsLong() - failingSinceNanos <= windowNanos && windowNanos > 0) {
            return false;
        }
        reported = true;
        return true;
    }

    /** How many checks failed ({@code failed}) or succeeded so far. */
    public synchronized long checks(boolean failed) {
        return failed ? failedChecks : succeededChecks;
    }

    /**
     * Waits until at least {@code atLeast} checks have failed ({@code failed}) or succeeded, for up to
     * {@code timeoutMs} of the real clock (tests and monitoring); false when they did not.
     */
    public synchronized boolean awaitChecks(boolean failed, long atLeast, long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (checks(failed) < atLeast) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        return true;
    }

    /** Whether the current outage was reported (the connection counts as broken until a check succeeds). */
    public synchronized boolean isReported() {
        return reported;
    }
}
