package dev.millrace.broker.controller;

import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.common.utils.Time;

/** A clock that moves only when a test says so; {@link #sleep} advances it instead of blocking. Thread-safe. */
final class ManualTime implements Time {

    private final AtomicLong nowMs;

    ManualTime(long startMs) {
        this.nowMs = new AtomicLong(startMs);
    }

    void advance(long ms) {
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
}
