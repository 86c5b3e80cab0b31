package dev.millrace.broker.share;

/**
 * Group commit of one share-partition's saves: one writer at a time, and the callers that arrive while it writes are
 * served together by one later write.
 *
 * <p>A save writes a snapshot of the partition as it stands when the save is taken, so one write taken after several
 * changes records all of them. Callers that find a write in progress join the next <em>round</em>; when the write ends,
 * one of that round's callers is woken to write it, taking the snapshot then (after every change of its round's
 * callers, each of which changed the partition before it called), and the others wait for that write's outcome:
 *
 * <pre>
 *   caller A  save ─ leads round 1: snapshot, write ────────────── done(1), promotes round 2 ─ returns
 *   caller B  save ─ round 1 is writing: joins round 2 ── waits ── promoted: leads round 2: snapshot, write ── done(2)
 *   caller C  save ─ joins round 2 ─────────────────────── waits ───────────────────────────────────────── returns
 * </pre>
 *
 * Without it every caller wrote on its own, one after the other, and on a busy machine each hand-over of the lock
 * cost a thread wake-up: fifteen MDB sessions settling on one queue waited 2-3 ms per acknowledgement for each
 * other. A failed write fails every caller of its round (the same exception); the next round still runs.
 *
 * <p>A save asked for on the thread that is writing, from inside its write, runs at once (the per-partition lock this
 * replaced was re-entrant, and waiting for a round there would wait for that very write). A write that fails with an
 * {@code Error} still ends its round and hands on the next.
 *
 * <p>Waits are not interruptible: a promoted round must be written by one of its callers, or the partition's saves
 * would stop; a caller interrupted while waiting keeps waiting (each write is bounded by the store's timeout) and
 * returns with its interrupt status set.
 *
 * <p>Thread-safe.
 */
final class SaveRounds {

    /** The round not yet being written that new callers join; null when none is open. Under this object. */
    private Round open;
    /** A round is being written. Under this object. */
    private boolean writing;
    /** The thread writing a round, while it does: a save it asks for from inside the write runs at once. */
    private volatile Thread writer;

    /** Runs {@code write} for this caller's round (in this thread or another) and returns once it was written. */
    void save(Runnable write) {
        if (writer == Thread.currentThread()) {
            // a save asked for from inside this thread's own write (as the lock it replaced was re-entrant): waiting
            // for a round would wait for this very write to end
            write.run();
            return;
        }
        Round mine;
        boolean lead;
        synchronized (this) {
            if (open == null) {
                open = new Round();
            }
            mine = open;
            lead = !writing;
            if (lead) {
                writing = true;
                open = null;
            }
        }
        if (!lead && !mine.awaitTurn()) {
            mine.rethrowIfFailed();
            return;
        }
        RuntimeException failure = null;
        writer = Thread.currentThread();
        try {
            write.run();
        } catch (RuntimeException e) {
            failure = e;
        } catch (Error e) {
            failure = new IllegalStateException("the save failed: " + e, e);
            throw e;
        } finally {
            writer = null;
            // whatever happened, the round ends and the next is handed on: else this partition's saves would stop
            Round next;
            synchronized (this) {
                next = open;
                open = null;
                writing = next != null;
            }
            mine.finish(failure);
            if (next != null) {
                next.promote();
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** One round of callers, written by one of them. */
    private static final class Round {
        private boolean promoted;
        private boolean claimed;
        private boolean done;
        private RuntimeException failure;

        /** Waits until this caller is to write the round (true) or another wrote it (false). */
        synchronized boolean awaitTurn() {
            boolean interrupted = false;
            try {
                while (!done && !(promoted && !claimed)) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
            if (done) {
                return false;
            }
            claimed = true;
            return true;
        }

        synchronized void promote() {
            promoted = true;
            notifyAll();
        }

        synchronized void finish(RuntimeException outcome) {
            done = true;
            failure = outcome;
            notifyAll();
        }

        synchronized void rethrowIfFailed() {
            if (failure != null) {
                throw failure;
            }
        }
    }
}
