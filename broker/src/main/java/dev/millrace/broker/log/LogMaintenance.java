package dev.millrace.broker.log;

import java.io.IOException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The background work every open log needs: flushing by {@code flush.ms}, a flush that keeps the work of
 * recovery after a crash bounded ({@link PartitionLog#maybeFlushForRecovery}, every
 * {@code log.recovery.flush.interval.ms}), retention, compaction and writing the recovery-point and log-start
 * checkpoints.
 *
 * <p>{@link #runOnce()} does one round over every registered log and is what tests call on a
 * controlled clock; {@link #start} runs rounds periodically on an executor. A failure on one log
 * is logged at ERROR, counted ({@link #failureCount()}) and does not stop the others.
 *
 * <p>Logs leave while rounds run (a deleted topic, e.g. a temporary queue whose connection closed):
 * {@link #unregister} waits until a round working on that log has finished with it, and a round
 * skips a log that was unregistered or closed since it started, so the owner may close the log and
 * delete its directory as soon as {@code unregister} returns, without maintenance failing on the
 * closed log or writing files into the directory being deleted. A compaction pass stops between
 * segment groups once its log is unregistered, so the wait stays short. A failure of a log that was
 * closed or unregistered meanwhile is not an error (DEBUG); one of a log still open and registered
 * is.
 *
 * <p>Thread-safe registration; rounds must not overlap (the executor runs them on one thread).
 */
public final class LogMaintenance {

    private static final Logger log = LoggerFactory.getLogger(LogMaintenance.class);

    /** {@code log.recovery.flush.interval.ms}'s default: recovery after a crash reads about a minute of appends. */
    public static final long DEFAULT_RECOVERY_FLUSH_INTERVAL_MS = 60_000;

    private final Set<PartitionLog> logs = ConcurrentHashMap.newKeySet();
    private final LogCleaner cleaner = new LogCleaner();
    private final AtomicLong failures = new AtomicLong();
    /** Guards {@link #inProgress}; {@link #unregister} waits on it. */
    private final Object monitor = new Object();
    /** The log a round is working on, or null. */
    private PartitionLog inProgress;
    private final long recoveryFlushIntervalMs;

    /** With the default recovery flush interval ({@link #DEFAULT_RECOVERY_FLUSH_INTERVAL_MS}). */
    public LogMaintenance() {
        this(DEFAULT_RECOVERY_FLUSH_INTERVAL_MS);
    }

    /** @param recoveryFlushIntervalMs see {@link PartitionLog#maybeFlushForRecovery} */
    public LogMaintenance(long recoveryFlushIntervalMs) {
        if (recoveryFlushIntervalMs < 1) {
            throw new IllegalArgumentException("log.recovery.flush.interval.ms must be at least 1, was "
                    + recoveryFlushIntervalMs);
        }
        this.recoveryFlushIntervalMs = recoveryFlushIntervalMs;
    }

    public void register(PartitionLog partitionLog) {
        logs.add(partitionLog);
    }

    /**
     * Removes {@code partitionLog} from the rounds, waiting while a round is working on it, so that
     * no maintenance touches it once this returns. Must not be called from a round.
     */
    public void unregister(PartitionLog partitionLog) {
        boolean interrupted = false;
        synchronized (monitor) {
            logs.remove(partitionLog);
            while (inProgress == partitionLog) {
                try {
                    monitor.wait();
                } catch (InterruptedException e) {
                    interrupted = true; // still wait: the caller is about to close the log
                }
            }
        }
        cleaner.forget(partitionLog);
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** One round: for every log, flush if due ({@code flush.ms}, recovery), apply retention, compact, checkpoint. */
    public void runOnce() {
        for (PartitionLog partitionLog : logs) {
            synchronized (monitor) {
                if (!logs.contains(partitionLog) || partitionLog.isClosed()) {
                    continue; // unregistered or closed since the round began
                }
                inProgress = partitionLog;
            }
            try {
                partitionLog.maybeFlushByTime();
                partitionLog.maybeFlushForRecovery(recoveryFlushIntervalMs);
                partitionLog.deleteOldSegments();
                cleaner.clean(partitionLog, () -> !logs.contains(partitionLog));
                partitionLog.checkpoint();
            } catch (IOException | RuntimeException e) {
                // one log's failure must not stop the others, nor cancel the periodic schedule
                report(partitionLog, e);
            } finally {
                synchronized (monitor) {
                    inProgress = null;
                    monitor.notifyAll();
                }
            }
        }
    }

    private void report(PartitionLog partitionLog, Exception e) {
        if (partitionLog.isClosed() || !logs.contains(partitionLog)) {
            log.debug("Maintenance of {} stopped: the log was closed or removed meanwhile ({})", partitionLog.dir(),
                    e.toString());
            return;
        }
        failures.incrementAndGet();
        log.error("Maintenance of {} failed", partitionLog.dir(), e);
    }

    /** How many times the maintenance of an open, registered log failed since this was created. */
    public long failureCount() {
        return failures.get();
    }

    /** Runs {@link #runOnce()} every {@code intervalMs} on {@code executor}. */
    public void start(ScheduledExecutorService executor, long intervalMs) {
        executor.scheduleWithFixedDelay(this::runOnce, intervalMs, intervalMs, TimeUnit.MILLISECONDS);
    }
}
