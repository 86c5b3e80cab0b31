package dev.millrace.delay;

import java.util.concurrent.TimeUnit;

/**
 * The clocks the timer reads, injected so that tests can drive time by hand.
 *
 * <p>{@link #milliseconds()} is wall-clock time, for timestamps shown to people or written to disk.
 * {@link #nanoseconds()} is a monotonic clock with an arbitrary origin, for measuring delays; it
 * never goes backwards. Timers use only {@link #hiResClockMs()}, the monotonic clock in
 * milliseconds, so a wall-clock step (NTP, a changed time zone) never fires or holds back a task.
 *
 * <p>Implementations are thread-safe. {@link #SYSTEM} reads the JVM's clocks.
 */
public interface Time {

    /** The JVM's clocks: {@link System#currentTimeMillis()} and {@link System#nanoTime()}. */
    Time SYSTEM = new SystemTime();

    /** Wall-clock time in milliseconds since the epoch. */
    long milliseconds();

    /** Monotonic time in nanoseconds from an arbitrary origin. */
    long nanoseconds();

    /** Monotonic time in milliseconds, from the same origin as {@link #nanoseconds()}. */
    default long hiResClockMs() {
        return TimeUnit.NANOSECONDS.toMillis(nanoseconds());
    }
}
