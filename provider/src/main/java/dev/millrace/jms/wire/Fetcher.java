package dev.millrace.jms.wire;

import java.util.List;

/**
 * What a JMS consumer reads its records from: a buffer filled ahead of the application by a topic fetcher
 * ({@link TopicFetcher}, on a thread of its own) or a queue's share-group client ({@link ShareFetcher}, on the shared
 * event loops). Implementations are thread-safe.
 */
public interface Fetcher extends AutoCloseable {

    /** Called (on a client thread) when records arrive in the buffer. */
    void onArrival(Runnable onArrival);

    /** The next buffered record, waiting up to {@code timeoutMs} (0 = no wait, negative = forever), or null. */
    Delivery take(long timeoutMs) throws InterruptedException;

    /** Puts records back at the front of the buffer, in their order (delivery was refused or stopped). */
    void putBack(List<Delivery> deliveries);

    boolean hasBuffered();

    /** The failure that stops this fetcher from fetching, or null. */
    Throwable failure();

    /** Stops fetching and closes the client, settling what it must. Idempotent. */
    @Override
    void close();
}
