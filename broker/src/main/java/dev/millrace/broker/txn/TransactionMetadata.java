package dev.millrace.broker.txn;

import java.util.Set;
import java.util.TreeSet;

import org.apache.kafka.common.TopicPartition;

/**
 * What the coordinator knows of one transactional id: the producer id and epoch it hands out, the
 * timeout, the state and the partitions of the current transaction. Immutable: each change makes
 * a new value, which is written to the log before it replaces the old one in memory.
 *
 * @param txnStartMs when the current transaction began (its first AddPartitions), -1 if none
 */
public record TransactionMetadata(String transactionalId, long producerId, short producerEpoch, int timeoutMs,
                                  TransactionState state, Set<TopicPartition> partitions, long txnStartMs,
                                  long lastUpdateMs) {

    public TransactionMetadata {
        TreeSet<TopicPartition> sorted = new TreeSet<>(
                java.util.Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
        sorted.addAll(partitions);
        partitions = java.util.Collections.unmodifiableSet(sorted);
    }

    TransactionMetadata with(TransactionState newState, Set<TopicPartition> newPartitions, long newTxnStartMs,
                             long nowMs) {
        return new TransactionMetadata(transactionalId, producerId, producerEpoch, timeoutMs, newState, newPartitions,
                newTxnStartMs, nowMs);
    }

    TransactionMetadata withProducer(long newProducerId, short newEpoch, int newTimeoutMs, long nowMs) {
        return new TransactionMetadata(transactionalId, newProducerId, newEpoch, newTimeoutMs, state, partitions,
                txnStartMs, nowMs);
    }
}
