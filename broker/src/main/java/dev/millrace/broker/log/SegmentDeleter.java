package dev.millrace.broker.log;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes the segments that left a log (retention, compaction swaps, truncation) once
 * {@code file.delete.delay.ms} has passed, so that a read which already holds one can finish. A
 * segment is renamed {@code .deleted} at once ({@link LogLoader} removes leftovers at the next open)
 * and closed and deleted when the scheduler runs the task, or at {@link #deleteAllNow()}.
 *
 * <p>A truncation can remove a segment whose base offset an earlier removed segment, still waiting, had
 * too (the log was cut, grew back and was cut again). Both would be named
 * {@code <baseOffset>.log.deleted}, so the older one is deleted at once to make room.
 *
 * <p>Thread-safe: scheduling comes from the log's lock; deletions run on the scheduler's thread.
 */
final class SegmentDeleter {

    private static final Logger log = LoggerFactory.getLogger(SegmentDeleter.class);

    private final Scheduler scheduler;
    private final List<LogSegment> pending = new ArrayList<>();

    SegmentDeleter(Scheduler scheduler) {
        this.scheduler = scheduler;
    }

    /** Renames the segment's files {@code .deleted} and schedules their deletion after {@code delayMs}. */
    void schedule(LogSegment segment, long delayMs) throws IOException {
        LogSegment clash = null;
        synchronized (pending) {
            for (LogSegment waiting : pending) {
                if (waiting.baseOffset() == segment.baseOffset()) {
                    clash = waiting;
                }
            }
        }
        if (clash != null) {
            log.info("Deleting {} before its delay is over: a newer segment with the same base offset leaves the log",
                    clash.file());
            deleteNow(clash);
        }
        segment.changeFileSuffixes("", LogFiles.DELETED_SUFFIX);
        synchronized (pending) {
            pending.add(segment);
        }
        scheduler.schedule("delete-" + segment.file().getName(), () -> deleteNow(segment), delayMs);
    }

    /** Deletes every segment still waiting (the log is closing). */
    void deleteAllNow() {
        List<LogSegment> all;
        synchronized (pending) {
            all = new ArrayList<>(pending);
        }
        all.forEach(this::deleteNow);
    }

    private void deleteNow(LogSegment segment) {
        synchronized (pending) {
            if (!pending.remove(segment)) {
                return;
            }
        }
        try {
            segment.closeAndDelete();
        } catch (IOException e) {
            log.warn("Could not delete {}: {}", segment.file(), e.toString());
        }
    }
}
