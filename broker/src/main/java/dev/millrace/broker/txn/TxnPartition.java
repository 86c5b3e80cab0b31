package dev.millrace.broker.txn;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import dev.millrace.protocol.ext.XaXid;

/**
 * One partition of {@code __transaction_state} that this broker leads, in one leader epoch: the transactional ids
 * that hash to it, once loaded from its log. A new election makes a new instance, so a task that began in an older
 * epoch can tell, by identity, that its partition moved on ({@link TxnPartitions#isServed}).
 *
 * <p>Threading: {@link #txns} and {@link #branches} change only on the coordinator thread and are read from request
 * threads (describe, produce verification, XA recover); {@link #loaded} completes on the coordinator thread.
 */
final class TxnPartition {

    final int partition;
    final int leaderEpoch;
    final Map<String, TransactionMetadata> txns = new ConcurrentHashMap<>();
    /** The XA branches prepared under this partition's transactional ids, by Xid ({@link XaBranches}). */
    final Map<XaXid, XaBranch> branches = new ConcurrentHashMap<>();
    /** Completes once the partition's state is loaded; fails if its log cannot be read. */
    final CompletableFuture<Void> loaded = new CompletableFuture<>();

    TxnPartition(int partition, int leaderEpoch) {
        this.partition = partition;
        this.leaderEpoch = leaderEpoch;
    }

    boolean isLoaded() {
        return loaded.isDone() && !loaded.isCompletedExceptionally();
    }

    @Override
    public String toString() {
        return TransactionStateTopic.NAME + "-" + partition + " (leader epoch " + leaderEpoch + ")";
    }
}
