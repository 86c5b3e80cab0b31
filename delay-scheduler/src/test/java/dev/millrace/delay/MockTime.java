package dev.millrace.delay;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link Time} that moves only when a test calls {@link #advanceMs}. Both clocks move together;
 * the monotonic one starts at an arbitrary non-zero origin so that no code can rely on it starting
 * at zero. Thread-safe: one thread may advance it while others read it.
 */
final class MockTime implements Time {

    private static final long WALL_CLOCK_START_MS = 1_767_225_600_000L; // 2026-01-01T00:00:00Z

    private final AtomicLong nanos;
    private final long originNanos;

    MockTime() {
        this(TimeUnit.DAYS.toNanos(3) + 123_456_789L);
    }

    MockTime(long startNanos) {
        this.nanos = new AtomicLong(startNanos);
        this.originNanos = startNanos;
    }

    void advanceMs(long ms) {
        if (ms < 0) {
            throw new IllegalArgumentException("time cannot go backwards: " + ms);
        }
        nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(ms));
    }

    @Override
    public long milliseconds() {
        return WALL_CLOCK_START_MS + TimeUnit.NANOSECONDS.toMillis(nanos.get() - originNanos);
    }

    @Override
    public long nanoseconds() {
        return nanos.get();
    }
}
