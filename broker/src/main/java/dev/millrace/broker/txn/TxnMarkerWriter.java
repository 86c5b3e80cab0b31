package dev.millrace.broker.txn;

import java.util.Collection;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.TopicPartition;

/**
 * Writes the commit or abort marker of one transaction to each of its partitions. On a single broker every partition
 * is local and the markers are plain local appends; in a cluster the markers of partitions led elsewhere go to their
 * leaders as WriteTxnMarkers requests (the broker's {@code ClusterTxnMarkerWriter}).
 *
 * <p>The coordinator calls {@link #writeMarkers(long, short, int, boolean, Collection)}; the synchronous form is
 * what simple writers (tests, tools) implement, and the default asynchronous form runs it on the caller's thread.
 */
@FunctionalInterface
public interface TxnMarkerWriter {

    /**
     * Writes the markers; returns once every partition that still exists has its marker.
     *
     * @throws RuntimeException if a marker could not be written; the caller retries the whole set
     *         (a marker written twice is harmless: the second closes nothing)
     */
    void writeMarkers(long producerId, short producerEpoch, boolean commit, Collection<TopicPartition> partitions);

    /**
     * Writes the markers, stamped with {@code coordinatorEpoch} (the leader epoch of the coordinator's
     * {@code __transaction_state} partition); the future completes once every partition that still exists has its
     * marker on its in-sync replicas, and fails if one could not be written (the caller retries the whole set).
     */
    default CompletableFuture<Void> writeMarkers(long producerId, short producerEpoch, int coordinatorEpoch,
                                                 boolean commit, Collection<TopicPartition> partitions) {
        try {
            writeMarkers(producerId, producerEpoch, commit, partitions);
            return CompletableFuture.completedFuture(null);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
