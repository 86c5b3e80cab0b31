package dev.millrace.broker.quota;

/**
 * The rate of one client's usage (bytes, or request-thread milliseconds) over a sliding window of
 * {@code samples} samples of {@code windowMs} each, and the throttle time that brings it back to a quota.
 *
 * <pre>
 *   time ──────────────────────────────────────────────────────────▶ now
 *        | sample i-2 | sample i-1 |  ...  | sample i (current) |
 *        ^ oldest start                                         ^
 *        └──────────────── elapsed = now - oldest start ────────┘
 *   rate     = (sum of the samples' values) / elapsed
 *   throttle = sum / quota - elapsed      (how long until the rate is back at the quota)
 * </pre>
 *
 * A sample starts with the first value recorded after the previous one has lasted {@code windowMs}; the ring
 * holds {@code samples} of them, so a new sample replaces the oldest, and a sample that started
 * {@code samples * windowMs} ago or more no longer counts. As in Kafka's sampled rate, usage is forgotten one
 * sample at a time. Unlike Kafka's {@code Rate}, which divides by at least {@code samples - 1} whole windows and so
 * lets a new (or long idle) client burst a window's worth of quota before it is throttled, the elapsed time here is
 * the real time since the oldest kept sample started: a client never gets more than its quota plus one request
 * over any stretch of time, which is what "throttled to the quota" promises. The throttle time is bounded by
 * {@code maxThrottleMs}.
 *
 * <p>Not thread-safe: the owner synchronizes.
 */
final class SampledRate {

    private static final long NONE = Long.MIN_VALUE;

    private final long windowMs;
    private final long spanMs;
    private final long[] starts;
    private final double[] values;
    private int current;
    private long lastRecordMs;

    SampledRate(int samples, long windowMs) {
        if (samples < 2) {
            throw new IllegalArgumentException("samples must be at least 2, not " + samples);
        }
        if (windowMs <= 0) {
            throw new IllegalArgumentException("windowMs must be positive, not " + windowMs);
        }
        this.windowMs = windowMs;
        this.spanMs = samples * windowMs;
        this.starts = new long[samples];
        this.values = new double[samples];
        java.util.Arrays.fill(starts, NONE);
        this.current = 0;
    }

    /** Adds {@code value} to the current sample, starting a new one when the current one has lasted a window. */
    void record(double value, long nowMs) {
        purge(nowMs);
        if (starts[current] == NONE) {
            starts[current] = nowMs;
            values[current] = 0;
        } else if (nowMs - starts[current] >= windowMs) {
            current = (current + 1) % starts.length;
            starts[current] = nowMs;
            values[current] = 0;
        }
        values[current] += value;
        lastRecordMs = nowMs;
    }

    /** Takes back a value {@link #record}ed into the current sample (a response that was not sent after all). */
    void unrecord(double value, long nowMs) {
        if (starts[current] != NONE) {
            values[current] = Math.max(0, values[current] - value);
        }
    }

    /** The rate per second over the kept samples at {@code nowMs} (0 with none). */
    double ratePerSecond(long nowMs) {
        purge(nowMs);
        long oldest = oldestStart();
        if (oldest == NONE) {
            return 0;
        }
        return sum() * 1000.0 / Math.max(1, nowMs - oldest);
    }

    /**
     * How long, in ms, the client must wait before its rate is back at {@code quotaPerSecond}: 0 when it is at or
     * under it, at most {@code maxThrottleMs}.
     */
    long throttleMs(double quotaPerSecond, long nowMs, long maxThrottleMs) {
        purge(nowMs);
        long oldest = oldestStart();
        if (oldest == NONE) {
            return 0;
        }
        double neededMs = sum() / quotaPerSecond * 1000.0;
        double waitMs = neededMs - (nowMs - oldest);
        if (waitMs <= 0) {
            return 0;
        }
        return Math.min(maxThrottleMs, (long) Math.ceil(waitMs));
    }

    /** Whether nothing was recorded for a whole span, so this rate holds no sample any more. */
    boolean isIdle(long nowMs) {
        return nowMs - lastRecordMs >= spanMs;
    }

    private void purge(long nowMs) {
        for (int i = 0; i < starts.length; i++) {
            if (starts[i] != NONE && nowMs - starts[i] >= spanMs) {
                starts[i] = NONE;
                values[i] = 0;
            }
        }
    }

    private long oldestStart() {
        long oldest = NONE;
        for (long start : starts) {
            if (start != NONE && (oldest == NONE || start < oldest)) {
                oldest = start;
            }
        }
        return oldest;
    }

    private double sum() {
        double sum = 0;
        for (int i = 0; i < starts.length; i++) {
            if (starts[i] != NONE) {
                sum += values[i];
            }
        }
        return sum;
    }
}
