package dev.millrace.broker.log;

import java.io.IOException;
import java.util.HashSet;
import java.util.Set;

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
 * no longer exists, and offsets below that end may since have been rewritten and not flushed. A
 * caller waiting for offsets that a truncation cut is released with {@code false}; one whose offsets
 * all lie below the cut keeps waiting for a flush that started after it.
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
    /** The callers blocked in {@link #awaitDurable}, so that a truncation can tell those it cut. */
    private final Set<Waiter> waiters = new HashSet<>();

    /** One blocked caller; {@code cut} is set when a truncation removed offsets it waits for. */
    private static final class Waiter {
        final long endOffset;
        boolean cut;

        Waiter(long endOffset) {
            this.endOffset = endOffset;
        }
    }

    public GroupCommit(Flusher flusher, long durableOffset) {
        this.flusher = flusher;
        this.durableOffset = durableOffset;
    }

    /**
     * Blocks until every offset below {@code endOffset} is durable, flushing if no one else is.
     *
     * @return true once durable; false if the log was truncated ({@link #truncateTo}) below
     *         {@code endOffset} while waiting: the offsets waited for may no longer hold what the caller wrote
     */
    public boolean awaitDurable(long endOffset) throws IOException, InterruptedException {
        Waiter waiter = new Waiter(endOffset);
        synchronized (this) {
            if (durableOffset >= endOffset) {
                return true;
            }
            waiters.add(waiter);
        }
        try {
            return awaitDurable(waiter);
        } finally {
            synchronized (this) {
                waiters.remove(waiter);
            }
        }
    }

    private boolean awaitDurable(Waiter waiter) throws IOException, InterruptedException {
        long endOffset = waiter.endOffset;
        while (true) {
            long startedIn;
            synchronized (this) {
                while (durableOffset < endOffset && flushing && !waiter.cut) {
                    wait();
                }
                if (waiter.cut) {
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
        for (Waiter waiter : waiters) {
            if (waiter.endOffset > offset) {
                waiter.cut = true;
            }
        }
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
