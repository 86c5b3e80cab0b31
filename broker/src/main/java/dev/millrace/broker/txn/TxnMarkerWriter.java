package dev.millrace.broker.txn;

import java.util.Collection;

import org.apache.kafka.common.TopicPartition;

/**
 * Writes the commit or abort marker of one transaction to each of its partitions. On a single
 * broker every partition is local and the markers are plain local appends; in a cluster this is
 * where WriteTxnMarkers requests to the partition leaders go.
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
}
