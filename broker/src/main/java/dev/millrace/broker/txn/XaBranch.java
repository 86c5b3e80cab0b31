package dev.millrace.broker.txn;

import java.util.Collections;
import java.util.Comparator;
import java.util.Set;
import java.util.TreeSet;

import org.apache.kafka.common.TopicPartition;

import dev.millrace.protocol.ext.XaXid;

/**
 * A prepared XA transaction branch: the transaction a producer of {@code transactionalId} had Ongoing when it was
 * prepared as {@code xid}, with the producer id and epoch its markers carry and the partitions they go to. Lives in
 * the {@code __transaction_state} partition of its transactional id, under its Xid (record layout in
 * {@link TxnLogRecordSerde}). Immutable: each change is written to the log before it replaces the old value.
 *
 * @param heuristic  whether an administrator decided its outcome (XaComplete with heuristic), rather than the
 *                   transaction manager
 * @param txnStartMs when the transaction began
 * @param preparedMs when it was prepared
 */
public record XaBranch(XaXid xid, String transactionalId, long producerId, short producerEpoch, XaBranchState state,
                       boolean heuristic, Set<TopicPartition> partitions, long txnStartMs, long preparedMs,
                       long lastUpdateMs) {

    public XaBranch {
        TreeSet<TopicPartition> sorted = new TreeSet<>(
                Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
        sorted.addAll(partitions);
        partitions = Collections.unmodifiableSet(sorted);
    }

    XaBranch with(XaBranchState newState, boolean newHeuristic, long nowMs) {
        return new XaBranch(xid, transactionalId, producerId, producerEpoch, newState, newHeuristic, partitions,
                txnStartMs, preparedMs, nowMs);
    }
}
