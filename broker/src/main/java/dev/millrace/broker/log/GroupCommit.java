package dev.millrace.broker.log;

import java.io.IOException;

/**
 * Lets concurrent appenders share fsyncs. An appender that needs its data durable calls {@link
 * #awaitDurable(long)} with the offset after its last record. If no flush is running it becomes the
 * flusher and fsyncs everything appended so far; if one is running it waits, and the next flush
 * (run by one of the waiters) covers every append made in the meantime. With N appenders, an fsync
 * therefore costs each of them about 1/N of a flush instead of a whole one.
 *
 * <pre>
 *   A: append ─ flush(→A) ────────┐
 *   B:   append ─ wait ───────────┴─ flush(→D) ─┐   one fsync for B, C and D
 *   C:     append ─ wait ───────────────────────┤
 *   D:       append ─ wait ─────────────────────┘
 * </pre>
 *
 * <p>Thread-safe. A flush that fails throws to the thread that ran it; waiters then try again
 * themselves, so each caller sees either durability or an exception. A flush that was running when
 * the log was truncated ({@link #truncateTo}) does not count: it may have flushed up to an end that
 * no longer exists, and offsets below that end may since have been rewritten and not flushed.
 */
public final class GroupCommit {

    /** Makes everything appended so far durable. */
    @FunctionalInterface
    public interface Flusher {
        /** @return the offset up to which (exclusive) data is now durable */
        long flushAll() throws IOException;
    }

    private final Flusher flusher;
    private volatile long durableOffset;
    private boolean flushing;
    private long flushes;
    /** Bumped by {@link #truncateTo}; a flush started under an older generation is not counted. */
    private long generation;

    public GroupCommit(Flusher flusher, long durableOffset) {
        this.flusher = flusher;
        this.durableOffset = durableOffset;
    }

    /**
     * Blocks until every offset below {@code endOffset} is durable, flushing if no one else is.
     *
     * @return true once durable; false if the log was truncated ({@link #truncateTo}) while waiting, in
     *         which case the offsets waited for may no longer hold what the caller wrote
     */
    public boolean awaitDurable(long endOffset) throws IOException, InterruptedException {
        long callGeneration;
        synchronized (this) {
            callGeneration = generation;
        }
        while (true) {
            long startedIn;
            synchronized (this) {
                while (durableOffset < endOffset && flushing && generation == callGeneration) {
                    wait();
                }
                if (generation != callGeneration) {
                    return false;
                }
                if (durableOffset >= endOffset) {
                    return true;
                }
                flushing = true;
                startedIn = generation;
            }
            long flushed = -1;
            try {
                flushed = flusher.flushAll();
            } finally {
                synchronized (this) {
                    flushing = false;
                    flushes++;
                    if (startedIn == generation) {
                        durableOffset = Math.max(durableOffset, flushed);
                    }
                    notifyAll();
                }
            }
        }
    }

    /** Records durability achieved outside this class (a periodic or explicit flush). */
    public synchronized void markDurable(long offset) {
        durableOffset = Math.max(durableOffset, offset);
        notifyAll();
    }

    /**
     * Lowers the durable offset after the log was truncated below it, and discounts a flush in progress
     * (the caller must have published the new log end first, so that later flushes see it).
     */
    public synchronized void truncateTo(long offset) {
        durableOffset = Math.min(durableOffset, offset);
        generation++;
        notifyAll();
    }

    /** Lock-free, so appenders that need no flush can check cheaply. */
    public long durableOffset() {
        return durableOffset;
    }

    /** Number of flushes run through {@link #awaitDurable(long)}, for tests and metrics. */
    public synchronized long flushCount() {
        return flushes;
    }
}
