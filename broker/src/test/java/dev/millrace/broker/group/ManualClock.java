package dev.millrace.broker.group;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.millrace.delay.Time;

/** A {@link Time} that moves only when a test calls {@link #advanceMs}; both clocks move together. */
public final class ManualClock implements Time {

    private static final long WALL_CLOCK_START_MS = 1_767_225_600_000L;
    private static final long MONOTONIC_START_NANOS = TimeUnit.DAYS.toNanos(2) + 987_654_321L;

    private final AtomicLong elapsedNanos = new AtomicLong();

    public void advanceMs(long ms) {
        if (ms < 0) {
            throw new IllegalArgumentException("time cannot go backwards: " + ms);
        }
        elapsedNanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(ms));
    }

    @Override
    public long milliseconds() {
        return WALL_CLOCK_START_MS + TimeUnit.NANOSECONDS.toMillis(elapsedNanos.get());
    }

    @Override
    public long nanoseconds() {
        return MONOTONIC_START_NANOS + elapsedNanos.get();
    }
}
