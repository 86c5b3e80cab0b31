package dev.millrace.delay;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A task for tests that records, when it runs, the time on the test clock and its own name into a
 * shared log. Not thread-safe on its own; give each thread its own log or a synchronized one.
 */
class RecordingTask extends TimerTask {

    final String name;
    private final Time time;
    private final List<String> log;
    final AtomicInteger runs = new AtomicInteger();
    volatile long ranAtMs = -1;

    RecordingTask(String name, long delayMs, Time time, List<String> log) {
        super(delayMs);
        this.name = name;
        this.time = time;
        this.log = log;
    }

    @Override
    public void run() {
        ranAtMs = time.hiResClockMs();
        runs.incrementAndGet();
        log.add(name);
    }
}
