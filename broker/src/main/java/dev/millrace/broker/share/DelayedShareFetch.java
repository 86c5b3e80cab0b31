package dev.millrace.broker.share;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import org.apache.kafka.common.requests.ShareFetchResponse;

import dev.millrace.delay.TimerTask;

/**
 * A ShareFetch that found nothing to acquire and waits, up to its {@code MaxWaitMs}, for records to
 * become acquirable. Each {@link #tryComplete} re-runs the acquisition; the first attempt that
 * acquires something completes the fetch, and the timeout completes it with whatever the last
 * attempt finds (usually nothing). Completes exactly once.
 *
 * <p>Thread-safe: attempts are serialized on this object, because acquiring has side effects.
 */
final class DelayedShareFetch extends TimerTask {

    private final Supplier<Optional<ShareFetchResponse>> attempt;
    private final Supplier<ShareFetchResponse> lastAttempt;
    private final CompletableFuture<ShareFetchResponse> result;
    private boolean completed;

    /**
     * @param attempt     acquires and returns a response if it acquired anything
     * @param lastAttempt acquires and returns a response in any case
     */
    DelayedShareFetch(long maxWaitMs, Supplier<Optional<ShareFetchResponse>> attempt,
                      Supplier<ShareFetchResponse> lastAttempt, CompletableFuture<ShareFetchResponse> result) {
        super(maxWaitMs);
        this.attempt = attempt;
        this.lastAttempt = lastAttempt;
        this.result = result;
    }

    /** Tries once more; true if the fetch is (now or already) completed. */
    synchronized boolean tryComplete() {
        if (completed) {
            return true;
        }
        try {
            Optional<ShareFetchResponse> response = attempt.get();
            if (response.isEmpty()) {
                return false;
            }
            complete(response.get());
        } catch (RuntimeException e) {
            completed = true;
            result.completeExceptionally(e);
        }
        cancel();
        return true;
    }

    synchronized boolean isCompleted() {
        return completed;
    }

    @Override
    public synchronized void run() {
        if (completed) {
            return;
        }
        try {
            complete(lastAttempt.get());
        } catch (RuntimeException e) {
            completed = true;
            result.completeExceptionally(e);
        }
    }

    private void complete(ShareFetchResponse response) {
        completed = true;
        result.complete(response);
    }
}
