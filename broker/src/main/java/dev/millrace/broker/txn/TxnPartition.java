package dev.millrace.broker.txn;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One partition of {@code __transaction_state} that this broker leads, in one leader epoch: the transactional ids
 * that hash to it, once loaded from its log. A new election makes a new instance, so a task that began in an older
 * epoch can tell, by identity, that its partition moved on ({@link TxnPartitions#isServed}).
 *
 * <p>Threading: {@link #txns} changes only on the coordinator thread and is read from request threads (describe,
 * produce verification); {@link #loaded} completes on the coordinator thread.
 */
final class TxnPartition {

    final int partition;
    final int leaderEpoch;
    final Map<String, TransactionMetadata> txns = new ConcurrentHashMap<>();
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
