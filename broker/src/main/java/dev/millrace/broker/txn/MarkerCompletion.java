package dev.millrace.broker.txn;

import java.util.Collection;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.coordinator.ReplicationAwaiter;
import dev.millrace.delay.Time;

/**
 * The second half of ending a transaction, once its decision (commit or abort) is written to
 * {@code __transaction_state}: wait until the decision is on the partition's in-sync replicas, write the markers to
 * every partition of the transaction ({@link TxnMarkerWriter}), then write the completed state. Shared by a
 * transactional id's transaction (PrepareCommit/PrepareAbort to CompleteCommit/CompleteAbort: EndTxn, timeouts,
 * fencing) and an XA branch (Committing/RollingBack to Committed/RolledBack, {@link XaBranches}); what differs is
 * told by a {@link Decision}.
 *
 * <p>Failures: if the decision does not reach the replicas, or the markers or the completed state cannot be
 * written, the whole step is retried every second while the decision is still current (the partition still served
 * here in the same epoch, the state unchanged); after a resignation the partition's new leader, which loads the
 * decision, finishes it.
 *
 * <p>Threading: {@link #complete} runs on the coordinator thread and continues there ({@code coordinatorThread}).
 */
final class MarkerCompletion {

    private static final Logger log = LoggerFactory.getLogger(MarkerCompletion.class);
    static final long MARKER_RETRY_MS = 1000;

    /** Runs a task on the coordinator thread after a delay. */
    @FunctionalInterface
    interface Scheduler {
        void schedule(long delayMs, Runnable task);
    }

    /** How to complete a decided state {@code S}. */
    interface Decision<S> {
        long producerId(S decided);

        short producerEpoch(S decided);

        boolean isCommit(S decided);

        Collection<TopicPartition> partitions(S decided);

        /** Whether {@code p} is still served here and {@code decided} is still the current state. */
        boolean isCurrent(TxnPartition p, S decided);

        /** The completed state that follows {@code decided}. */
        S completed(S decided, long nowMs);

        /** Writes {@code completed} to {@code p} and makes it current (throws if it cannot). */
        void append(TxnPartition p, S completed);

        /** Names the transaction in log messages. */
        String describe(S decided);
    }

    private final TxnMarkerWriter markers;
    private final ReplicationAwaiter replication;
    private final Time time;
    private final Executor coordinatorThread;
    private final Scheduler scheduler;

    MarkerCompletion(TxnMarkerWriter markers, ReplicationAwaiter replication, Time time, Executor coordinatorThread,
                     Scheduler scheduler) {
        this.markers = markers;
        this.replication = replication;
        this.time = time;
        this.coordinatorThread = coordinatorThread;
        this.scheduler = scheduler;
    }

    /**
     * Completes {@code decided}: with the completed state, or with {@code decided} if the markers failed (they are
     * retried every second); fails if the decision did not reach the replicas (retried too, while current) or the
     * partition moved before the markers.
     */
    <S> CompletableFuture<S> complete(TxnPartition p, S decided, Decision<S> how) {
        CompletableFuture<S> result = new CompletableFuture<>();
        whenDone(replication.awaitLogEnd(p.partition), result, replicationError -> {
            if (replicationError != null) {
                result.completeExceptionally(replicationError);
                retryLater(p, decided, how);
            } else {
                writeMarkersThenComplete(p, decided, how, result);
            }
        });
        return result;
    }

    private <S> void writeMarkersThenComplete(TxnPartition p, S decided, Decision<S> how,
                                              CompletableFuture<S> result) {
        if (!how.isCurrent(p, decided)) {
            result.completeExceptionally(new NotCoordinatorException(p + " moved before the markers of "
                    + how.describe(decided) + " were written"));
            return;
        }
        boolean commit = how.isCommit(decided);
        CompletableFuture<Void> written;
        try {
            written = markers.writeMarkers(how.producerId(decided), how.producerEpoch(decided), p.leaderEpoch, commit,
                    how.partitions(decided));
        } catch (RuntimeException e) {
            written = CompletableFuture.failedFuture(e);
        }
        whenDone(written, result, markerError -> {
            if (markerError != null) {
                log.warn("Could not write the {} markers of {} (producer {}); retrying in {} ms: {}",
                        commit ? "commit" : "abort", how.describe(decided), how.producerId(decided), MARKER_RETRY_MS,
                        unwrap(markerError).toString());
                retryLater(p, decided, how);
                result.complete(decided);
                return;
            }
            if (!how.isCurrent(p, decided)) {
                result.complete(decided); // resigned meanwhile: the new leader writes the markers again
                return;
            }
            S completed = how.completed(decided, time.milliseconds());
            try {
                how.append(p, completed);
            } catch (RuntimeException e) {
                log.warn("Could not write the completed state of {}: {}", how.describe(decided), e.toString());
                retryLater(p, decided, how);
                result.complete(decided);
                return;
            }
            result.complete(completed);
        });
    }

    private <S> void retryLater(TxnPartition p, S decided, Decision<S> how) {
        scheduler.schedule(MARKER_RETRY_MS, () -> {
            if (how.isCurrent(p, decided)) {
                complete(p, decided, how);
            }
        });
    }

    /**
     * Runs {@code next} with the failure of {@code future} (null on success) on the coordinator thread: at once when
     * it is done already (the caller is on the coordinator thread), else when it completes.
     */
    private void whenDone(CompletableFuture<?> future, CompletableFuture<?> result, Consumer<Throwable> next) {
        if (future.isDone()) {
            next.accept(future.isCompletedExceptionally() ? failureOf(future) : null);
            return;
        }
        future.whenComplete((v, error) -> {
            try {
                coordinatorThread.execute(() -> {
                    try {
                        next.accept(error);
                    } catch (RuntimeException e) {
                        result.completeExceptionally(e);
                    }
                });
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
            }
        });
    }

    private static Throwable failureOf(CompletableFuture<?> future) {
        try {
            future.join();
            return null;
        } catch (CompletionException | CancellationException e) {
            return e;
        }
    }

    static Throwable unwrap(Throwable error) {
        Throwable cause = error;
        while (cause instanceof CompletionException && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }
}
