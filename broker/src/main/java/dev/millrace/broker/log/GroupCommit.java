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
 * themselves, so each caller sees either durability or an exception.
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

    public GroupCommit(Flusher flusher, long durableOffset) {
        this.flusher = flusher;
        this.durableOffset = durableOffset;
    }

    /** Blocks until every offset below {@code endOffset} is durable, flushing if no one else is. */
    public void awaitDurable(long endOffset) throws IOException, InterruptedException {
        synchronized (this) {
            while (durableOffset < endOffset && flushing) {
                wait();
            }
            if (durableOffset >= endOffset) {
                return;
            }
            flushing = true;
        }
        long flushed = -1;
        try {
            flushed = flusher.flushAll();
        } finally {
            synchronized (this) {
                flushing = false;
                flushes++;
                durableOffset = Math.max(durableOffset, flushed);
                notifyAll();
            }
        }
        if (flushed < endOffset) {
            awaitDurable(endOffset);
        }
    }

    /** Records durability achieved outside this class (a periodic or explicit flush). */
    public synchronized void markDurable(long offset) {
        durableOffset = Math.max(durableOffset, offset);
        notifyAll();
    }

    /** Lowers the durable offset after the log was truncated below it. */
    public synchronized void truncateTo(long offset) {
        durableOffset = Math.min(durableOffset, offset);
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
