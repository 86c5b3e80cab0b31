package dev.millrace.jms.wire.share;

/**
 * How many records a queue consumer reads ahead of its application: the configured {@code prefetch}, less for an
 * application that takes records more slowly than the window could hold them under their locks.
 *
 * <p>A record read ahead is acquired, and its lock (the share group's record lock duration, 30 s by default) must be
 * renewed until the application takes it; everything read ahead is also what a failover, a rejoin or a lock expiry
 * takes away from the consumer at once. A window of 1,000 records in front of an application that takes 13 a second
 * (one per transaction, under load) holds each record 77 s: the failover chaos suite saw such a consumer's window
 * released again and again before the application reached it. So the window is what the application takes in a
 * quarter of the lock duration (renewals run every half), at least one record, at most {@code prefetch}:
 *
 * <pre>
 *   window = clamp(ceil(rate * lockDurationMs / 4 / 1000), 1, prefetch)
 *   rate   = takes per second while records were waiting in the buffer, over periods of at least one second,
 *            smoothed (each new period weighs one half); unknown (window = prefetch) until the first such period
 * </pre>
 *
 * Only takes made while other records were buffered count: an application that waits for records (an empty buffer)
 * is held back by the producers, not by itself, and its window stays where it is.
 *
 * <p>Thread-safe: {@link #taken} runs on application threads, {@link #window} on the consumer's event loop.
 */
public final class ReadAheadWindow {

    static final long PERIOD_NANOS = 1_000_000_000L;

    private final int prefetch;
    private long periodStartNanos;
    private int takesWhileBuffered;
    /** Takes per second while buffered; negative until measured. */
    private double rate = -1;

    /** @param nowNanos the monotonic clock now ({@link System#nanoTime()}) */
    public ReadAheadWindow(int prefetch, long nowNanos) {
        this.prefetch = prefetch;
        this.periodStartNanos = nowNanos;
    }

    /** The application took a record; {@code othersBuffered}: records were still waiting after it. */
    public synchronized void taken(boolean othersBuffered) {
        if (othersBuffered) {
            takesWhileBuffered++;
        }
    }

    /** The window now, for records whose locks last {@code lockDurationMs}. */
    public synchronized int window(long nowNanos, int lockDurationMs) {
        long elapsed = nowNanos - periodStartNanos;
        if (elapsed >= PERIOD_NANOS) {
            if (takesWhileBuffered > 0) {
                double measured = takesWhileBuffered * 1e9 / elapsed;
                rate = rate < 0 ? measured : (rate + measured) / 2;
            }
            takesWhileBuffered = 0;
            periodStartNanos = nowNanos;
        }
        if (rate < 0) {
            return prefetch;
        }
        double fits = Math.ceil(rate * lockDurationMs / 4 / 1000);
        return (int) Math.max(1, Math.min(prefetch, fits));
    }
}
