package dev.millrace.broker.controller;

import java.util.function.LongSupplier;

/**
 * The deadline of a metadata quorum node's start, stretched while the node makes progress: a restarted node applies
 * the metadata log it missed, and applying an entry may load partition logs (a log recovered after a SIGKILL is
 * read from its recovery point, which can take seconds per partition). A fixed start timeout failed such a node while
 * it was still applying, entry after entry (the failover chaos suite's 100-kill run lost a node that way at its 20th
 * restart, its logs having grown). <b>Decision:</b> once the window runs out, the deadline moves one more window ahead
 * if the applied index moved since the window began, up to {@code maxWindows} windows in all; a node that applies
 * nothing for a whole window still fails after it, naming what it waited for.
 *
 * <p>Not thread-safe: the starting thread's.
 */
final class ProgressDeadline {

    private final LongSupplier nanoClock;
    private final LongSupplier progress;
    private final long windowNs;
    private final long capNs;
    private long deadlineNs;
    private long seen;

    /**
     * @param progress  the applied index (any number that grows while the node makes progress)
     * @param nanoClock {@code System::nanoTime} outside tests
     */
    ProgressDeadline(long windowNs, int maxWindows, LongSupplier progress, LongSupplier nanoClock) {
        if (windowNs <= 0 || maxWindows < 1) {
            throw new IllegalArgumentException("window " + windowNs + " ns and " + maxWindows
                    + " windows: both must be positive");
        }
        this.nanoClock = nanoClock;
        this.progress = progress;
        this.windowNs = windowNs;
        long now = nanoClock.getAsLong();
        this.deadlineNs = now + windowNs;
        this.capNs = now + windowNs * maxWindows;
        this.seen = progress.getAsLong();
    }

    /** Nanoseconds left, the deadline moved on if the node progressed; 0 once it ran out without progress. */
    long remainingNs() {
        long now = nanoClock.getAsLong();
        if (now - deadlineNs < 0) {
            return deadlineNs - now;
        }
        long current = progress.getAsLong();
        if (current != seen && now - capNs < 0) {
            seen = current;
            deadlineNs = Math.min(now + windowNs, capNs);
            return deadlineNs - now;
        }
        return 0;
    }
}
