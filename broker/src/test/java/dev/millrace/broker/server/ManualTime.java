package dev.millrace.broker.server;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import org.apache.kafka.common.utils.Time;

/** A clock that moves only when a test moves it. Thread-safe. */
public final class ManualTime implements Time {

    private final AtomicLong nowMs = new AtomicLong(1_000_000L);

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
        nowMs.addAndGet(ms);
    }

    @Override
    public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) {
        throw new UnsupportedOperationException("ManualTime does not wait");
    }

    public void advance(long ms) {
        nowMs.addAndGet(ms);
    }
}
