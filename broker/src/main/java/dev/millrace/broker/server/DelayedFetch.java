package dev.millrace.broker.server;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import org.apache.kafka.common.requests.FetchResponse;

import dev.millrace.delay.TimerTask;

/**
 * A fetch that returned less than {@code fetch.min.bytes} and waits: it completes when a re-read
 * has enough bytes ({@link #tryComplete}) or when its timer fires, whichever is first, and exactly
 * once.
 *
 * <p>Thread-safe.
 */
final class DelayedFetch extends TimerTask {

    private final Supplier<FetchHandler.Read> read;
    private final int minBytes;
    private final CompletableFuture<FetchResponse> result;
    private final AtomicBoolean completed = new AtomicBoolean();

    DelayedFetch(long delayMs, int minBytes, Supplier<FetchHandler.Read> read, CompletableFuture<FetchResponse> result) {
        super(delayMs);
        this.read = read;
        this.minBytes = minBytes;
        this.result = result;
    }

    boolean isCompleted() {
        return completed.get();
    }

    /** Re-reads; completes the fetch if it now has enough bytes or an error to report. */
    boolean tryComplete() {
        if (completed.get()) {
            return true;
        }
        FetchHandler.Read current = read.get();
        if (current.bytes() >= minBytes || current.hasError()) {
            return complete(current);
        }
        return false;
    }

    private boolean complete(FetchHandler.Read current) {
        if (!completed.compareAndSet(false, true)) {
            return true;
        }
        cancel();
        result.complete(current.response());
        return true;
    }

    /** The timeout: answer with whatever is there now. */
    @Override
    public void run() {
        if (!completed.get()) {
            complete(read.get());
        }
    }
}
