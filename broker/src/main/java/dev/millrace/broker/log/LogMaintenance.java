package dev.millrace.broker.log;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The background work every open log needs: flushing by {@code flush.ms}, retention, compaction and
 * writing the recovery-point and log-start checkpoints.
 *
 * <p>{@link #runOnce()} does one round over every registered log and is what tests call on a
 * controlled clock; {@link #start} runs rounds periodically on an executor. A failure on one log
 * is logged and does not stop the others.
 *
 * <p>Thread-safe registration; rounds must not overlap (the executor runs them on one thread).
 */
public final class LogMaintenance {

    private static final Logger log = LoggerFactory.getLogger(LogMaintenance.class);

    private final List<PartitionLog> logs = new CopyOnWriteArrayList<>();
    private final LogCleaner cleaner = new LogCleaner();

    public void register(PartitionLog partitionLog) {
        logs.add(partitionLog);
    }

    public void unregister(PartitionLog partitionLog) {
        logs.remove(partitionLog);
        cleaner.forget(partitionLog);
    }

    /** One round: for every log, flush if due, apply retention, compact, then checkpoint. */
    public void runOnce() {
        for (PartitionLog partitionLog : logs) {
            try {
                partitionLog.maybeFlushByTime();
                partitionLog.deleteOldSegments();
                cleaner.clean(partitionLog);
                partitionLog.checkpoint();
            } catch (IOException | RuntimeException e) {
                // one log's failure must not stop the others, nor cancel the periodic schedule
                log.error("Maintenance of {} failed", partitionLog.dir(), e);
            }
        }
    }

    /** Runs {@link #runOnce()} every {@code intervalMs} on {@code executor}. */
    public void start(ScheduledExecutorService executor, long intervalMs) {
        executor.scheduleWithFixedDelay(this::runOnce, intervalMs, intervalMs, TimeUnit.MILLISECONDS);
    }
}
