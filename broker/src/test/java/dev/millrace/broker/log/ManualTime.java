package dev.millrace.broker.log;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import org.apache.kafka.common.utils.Time;

/**
 * A clock that moves only when a test says so; {@link #sleep} advances it instead of blocking, and
 * {@link #waitObject} refuses (a wait on a clock nobody moves would never end). Shared by the broker's tests of
 * every package. Thread-safe.
 */
public final class ManualTime implements Time {
    private final AtomicLong nowMs;

    public ManualTime(long startMs) {
        this.nowMs = new AtomicLong(startMs);
    }

    public void advance(long ms) {
        nowMs.addAndGet(ms);
    }

    @Override
    public long milliseconds() {
        return nowMs.get();
    }

    @Override
    public long nanoseconds() {
        return nowMs.get() * 1_000_000L;
    }

    @Override
    public void sleep(long ms) {
        advance(ms);
    }

    @Override
    public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) {
        throw new UnsupportedOperationException("ManualTime does not wait");
    }
}
