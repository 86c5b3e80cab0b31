package dev.millrace.broker.coordinator;

import java.util.concurrent.CompletableFuture;

/**
 * Waits until a coordinator's appends to a partition of its internal topic are on every in-sync replica.
 *
 * <p>Use: append, then {@code awaitLogEnd(partition)} and answer the client when it completes. The future completes
 * once the partition's high watermark reaches the log end offset as of the call (so it covers every append made
 * before the call); it fails with {@link org.apache.kafka.common.errors.NotCoordinatorException} when this broker
 * stops leading the partition first, or with {@link org.apache.kafka.common.errors.CoordinatorNotAvailableException}
 * when the replicas do not catch up within the broker's bound (a follower that lags that long leaves the ISR first,
 * so this is rare). A client that gets either retries, and finds the coordinator again.
 *
 * <p>Thread-safe; never blocks; the future may complete on the calling thread (at once when the in-sync replicas are
 * the leader alone, as on a single node) or on a replication thread.
 */
@FunctionalInterface
public interface ReplicationAwaiter {

    /** Completes at once: for a coordinator whose log is not replicated (tests, single-node tools). */
    ReplicationAwaiter IMMEDIATE = partition -> CompletableFuture.completedFuture(null);

    CompletableFuture<Void> awaitLogEnd(int partition);
}
