package dev.millrace.broker.share;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.millrace.delay.Time;

/** A {@link Time} that moves only when a test calls {@link #advanceMs}. */
final class ManualClock implements Time {

    private final AtomicLong elapsedNanos = new AtomicLong(TimeUnit.DAYS.toNanos(1));

    void advanceMs(long ms) {
        elapsedNanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(ms));
    }

    @Override
    public long milliseconds() {
        return 1_767_225_600_000L + TimeUnit.NANOSECONDS.toMillis(elapsedNanos.get());
    }

    @Override
    public long nanoseconds() {
        return elapsedNanos.get();
    }
}
