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
 * <p>A fetch whose connection closed is {@link #abandon abandoned}: its next attempt, or its timeout, completes it
 * with the answer it had before it parked, acquiring nothing (a response nobody reads would leave what it acquired
 * locked to a consumer that never sees it, until the acquisition lock expires).
 *
 * <p>Thread-safe: attempts are serialized on this object, because acquiring has side effects; {@link #abandon} only
 * sets a flag, so that a network thread may call it.
 */
final class DelayedShareFetch extends TimerTask {

    private final Supplier<Optional<ShareFetchResponse>> attempt;
    private final Supplier<ShareFetchResponse> lastAttempt;
    private final Supplier<ShareFetchResponse> nothing;
    private final CompletableFuture<ShareFetchResponse> result;
    private boolean completed;
    private volatile boolean abandoned;

    /**
     * @param attempt     acquires and returns a response if it acquired anything
     * @param lastAttempt acquires and returns a response in any case
     * @param nothing     the response of an abandoned fetch, which acquires nothing
     */
    DelayedShareFetch(long maxWaitMs, Supplier<Optional<ShareFetchResponse>> attempt,
                      Supplier<ShareFetchResponse> lastAttempt, Supplier<ShareFetchResponse> nothing,
                      CompletableFuture<ShareFetchResponse> result) {
        super(maxWaitMs);
        this.attempt = attempt;
        this.lastAttempt = lastAttempt;
        this.nothing = nothing;
        this.result = result;
    }

    /** Its connection closed: it acquires nothing more, and completes at its next attempt or its timeout. */
    void abandon() {
        abandoned = true;
    }

    /** Tries once more; true if the fetch is (now or already) completed. */
    synchronized boolean tryComplete() {
        if (completed) {
            return true;
        }
        try {
            Optional<ShareFetchResponse> response = abandoned ? Optional.of(nothing.get()) : attempt.get();
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
            complete(abandoned ? nothing.get() : lastAttempt.get());
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
