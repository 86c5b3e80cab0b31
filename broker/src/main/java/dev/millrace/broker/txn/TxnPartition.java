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
    /**
     * The XA branches prepared under this partition's transactional ids, by Xid ({@link XaBranches}); completed ones
     * stay until their retention ends. Changed through {@link #putBranch} and {@link #removeBranch} (and by the log
     * replay, after which {@link #reindexBranches} runs), which keep {@link #openBranches} in step.
     */
    final Map<XaXid, XaBranch> branches = new ConcurrentHashMap<>();
    /**
     * The branch of each transactional id that is not completed: at most one, since the id's producer is held until
     * its branch completes. Lets EndTxn find the branch its producer prepared without scanning every remembered one.
     */
    private final Map<String, XaBranch> openBranches = new ConcurrentHashMap<>();
    /** Completes once the partition's state is loaded; fails if its log cannot be read. */
    final CompletableFuture<Void> loaded = new CompletableFuture<>();

    TxnPartition(int partition, int leaderEpoch) {
        this.partition = partition;
        this.leaderEpoch = leaderEpoch;
    }

    /** Makes {@code branch} its Xid's current state. */
    void putBranch(XaBranch branch) {
        XaBranch previous = branches.put(branch.xid(), branch);
        if (previous != null) {
            openBranches.remove(previous.transactionalId(), previous);
        }
        if (!branch.state().isCompleted()) {
            openBranches.put(branch.transactionalId(), branch);
        }
    }

    /** Forgets the branch {@code xid}. */
    void removeBranch(XaXid xid) {
        XaBranch previous = branches.remove(xid);
        if (previous != null) {
            openBranches.remove(previous.transactionalId(), previous);
        }
    }

    /** The branch of {@code transactionalId} that is not completed, or null. */
    XaBranch openBranch(String transactionalId) {
        return openBranches.get(transactionalId);
    }

    /** Rebuilds {@link #openBranches} from {@link #branches}, after the log replay filled them. */
    void reindexBranches() {
        openBranches.clear();
        for (XaBranch branch : branches.values()) {
            if (!branch.state().isCompleted()) {
                openBranches.put(branch.transactionalId(), branch);
            }
        }
    }

    boolean isLoaded() {
        return loaded.isDone() && !loaded.isCompletedExceptionally();
    }

    @Override
    public String toString() {
        return TransactionStateTopic.NAME + "-" + partition + " (leader epoch " + leaderEpoch + ")";
    }
}
