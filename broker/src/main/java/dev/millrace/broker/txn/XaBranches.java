package dev.millrace.broker.txn;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.coordinator.ReplicationAwaiter;
import dev.millrace.delay.Time;
import dev.millrace.protocol.ext.XaCodes;
import dev.millrace.protocol.ext.XaComplete;
import dev.millrace.protocol.ext.XaPrepare;
import dev.millrace.protocol.ext.XaRecover;
import dev.millrace.protocol.ext.XaXid;

/**
 * XA two-phase commit on the coordinator's transactions: prepared branches, their completion by Xid, recovery. The
 * {@link TransactionCoordinator} routes the XA extension requests here, on its thread, for the partitions it serves.
 *
 * <h2>Design</h2>
 * <ul>
 *   <li><b>A branch is a broker transaction.</b> A client runs an XA branch as an ordinary transaction of a
 *       transactional id: its records (Produce), queue acknowledgements (TxnShareAcknowledge) and durable
 *       subscription offsets (AddOffsetsToTxn + TxnOffsetCommit) all join it as for a local transaction. Instead of
 *       EndTxn it sends {@link XaPrepare} with the branch's Xid. A branch that only consumed from queues has its
 *       transaction begun by the coordinator at its first TxnShareAcknowledge (TxnAddSharePartition on an idle
 *       producer, {@link TransactionCoordinator#addSharePartition}).</li>
 *   <li><b>Prepare moves the transaction to its own record.</b> The Ongoing transaction (producer id, epoch,
 *       partitions, start) becomes an {@link XaBranch} in state PREPARED, keyed by its Xid, in the
 *       {@code __transaction_state} partition of its transactional id; in the same batch the id moves to
 *       {@link TransactionState#PREPARED_XA}. The client is answered once the batch is on the partition's in-sync
 *       replicas: from then on the branch is durable, survives restarts and failovers (the partition's next leader
 *       loads it, {@link TxnLogLoader}), and never times out (the timeout scan looks at Ongoing transactions only).
 *       Until it completes, its partitions' last stable offset stays before its first record (read-committed
 *       consumers of those partitions wait, as for any open transaction: an in-doubt branch left alone holds them
 *       up, which is why administrators can list and resolve branches), and its queue records stay held (below).</li>
 *   <li><b>The producer id belongs to the branch.</b> The branch's markers carry the producer id and epoch its
 *       records were written with, so that id must write nothing else until they are written. The id's producer
 *       can start nothing new until then (AddPartitionsToTxn, transactional batches at a coordinator-local
 *       partition and its EndTxn abort: INVALID_TXN_STATE; its EndTxn commit commits the branch, below), and the
 *       id's next InitProducerId gets a new producer id with epoch 0, leaving the branch
 *       alone. This is this coordinator's answer to KIP-939's keepPreparedTxn: a new producer for the id neither
 *       fences nor aborts a prepared branch, and it need not wait for it: one transactional id can serve a session's
 *       successive branches while earlier ones are still in doubt.</li>
 *   <li><b>Finding a branch by Xid.</b> A branch lives with its transactional id, so {@link XaComplete} names both:
 *       it is routed like EndTxn (FindCoordinator for the transactional id). A client that knows only the Xid
 *       (a transaction manager recovering after a crash) first lists the branches with {@link XaRecover}, which
 *       gives each branch's transactional id. Decision: no Xid-to-partition hashing, so a client may choose its
 *       transactional ids freely (one per session, reused; or one derived from the Xid), at the price of the
 *       recover list being the lookup for a client that has lost the mapping. A Xid is unique per coordinator
 *       partition (XAER_DUPID otherwise); two branches with one Xid under ids of different partitions are not
 *       detected (a transaction manager never issues one Xid twice).</li>
 *   <li><b>Commit by the producer that prepared it.</b> A client that still holds the producer of a branch it
 *       prepared may commit the branch with that producer's EndTxn instead of XaComplete ({@link #commitByProducer}):
 *       one round trip. Once a branch's markers are written by any completion but a heuristic one, the id's
 *       producer is free again (PREPARED_XA moves to CompleteCommit/CompleteAbort with the same producer id and
 *       epoch): the client keeps its producer and its connections across branches (after XaComplete it brings the
 *       producer back in step with an EndTxn of the same outcome, answered at once).</li>
 *   <li><b>Completion</b> is EndTxn's: the decision (COMMITTING or ROLLING_BACK) is written and replicated before
 *       any marker, the markers go to every partition of the branch, then COMMITTED or ROLLED_BACK is written; the
 *       client is answered after the markers (or once the decision is durable, if markers fail: they are retried
 *       every second, and after a failover the new leader writes them). A completed branch is remembered for
 *       {@link TransactionCoordinator.Config#xaCompletedRetentionMs} (a repeated commit is XA_OK, a commit after a
 *       rollback XA_RBROLLBACK), then removed by a tombstone; a branch an administrator completed (heuristic) is
 *       remembered until it is forgotten (XaComplete FORGET), and the transaction manager's commit or rollback of it
 *       is answered XA_HEURCOM or XA_HEURRB.</li>
 *   <li><b>Recover</b> is answered by every broker for the partitions it leads and has loaded; the client merges
 *       the answers and checks that every partition was covered (see {@link XaRecover}).</li>
 * </ul>
 *
 * <h2>Queue acknowledgements</h2>
 * Records a branch acknowledged with TxnShareAcknowledge are held by their share-partition's leader under the
 * branch's producer id until its marker arrives, so they stay locked to it while it is prepared, and are accepted by
 * its commit marker or released by its rollback marker. The holds are saved with the share-partition's state before
 * TxnShareAcknowledge is answered ({@code dev.millrace.broker.share.TransactionHolds}), so they outlive a restart of
 * that broker or a move of the share-partition's leadership while the branch is in doubt: the new leader keeps the
 * records held and settles them by the branch's marker (XaShareIntegrationTest restarts the broker between prepare
 * and commit).
 *
 * <p>Threading: every method but {@link #recover} runs on the coordinator thread (the maps it changes are only
 * changed there); {@link #recover} reads the published maps from a request thread.
 */
final class XaBranches {

    private static final Logger log = LoggerFactory.getLogger(XaBranches.class);

    private final TransactionStateTopic topic;
    private final TxnPartitions partitions;
    private final MarkerCompletion completion;
    private final BranchDecision branchDecision = new BranchDecision();
    private final ReplicationAwaiter replication;
    private final Time time;

    XaBranches(TransactionStateTopic topic, TxnPartitions partitions, MarkerCompletion completion,
               ReplicationAwaiter replication, Time time) {
        this.topic = topic;
        this.partitions = partitions;
        this.completion = completion;
        this.replication = replication;
        this.time = time;
    }

    // ---- XaPrepare

    CompletableFuture<XaPrepare.Response> prepare(TxnPartition p, XaPrepare.Request request) {
        String id = request.transactionalId();
        XaXid xid = request.xid();
        XaBranch existing = p.branches.get(xid);
        TransactionMetadata current = p.txns.get(id);
        if (existing != null) {
            // a retry, if the id's producer is still the branch's and did nothing since (else a reused Xid)
            boolean sameProducer = request.producerId() == -1
                    ? current != null && current.state() == TransactionState.PREPARED_XA
                            && current.producerId() == existing.producerId()
                    : request.producerId() == existing.producerId()
                            && request.producerEpoch() == existing.producerEpoch();
            if (existing.state() == XaBranchState.PREPARED && existing.transactionalId().equals(id) && sameProducer) {
                // a retry whose answer was lost: answered once the branch is replicated
                return replication.awaitLogEnd(p.partition).thenApply(v -> prepared(existing));
            }
            return done(prepareError(Errors.INVALID_TXN_STATE, XaCodes.XAER_DUPID, "Xid " + xid
                    + " already names a branch of " + existing.transactionalId() + " (" + existing.state() + ")"));
        }
        if (current == null) {
            return done(prepareError(Errors.INVALID_TXN_STATE, XaCodes.XAER_PROTO, "transactional id " + id
                    + " has no transaction to prepare (InitProducerId was never sent for it)"));
        }
        if (request.producerId() != -1 && (current.producerId() != request.producerId()
                || current.producerEpoch() != request.producerEpoch())) {
            Errors error = current.producerId() != request.producerId() ? Errors.INVALID_PRODUCER_ID_MAPPING
                    : Errors.PRODUCER_FENCED;
            return done(prepareError(error, XaCodes.XA_RBROLLBACK, "producer " + request.producerId() + " epoch "
                    + request.producerEpoch() + " is not the current producer of " + id + " (" + current.producerId()
                    + " epoch " + current.producerEpoch() + "): its transaction was aborted (its timeout, or a newer"
                    + " producer fenced it)"));
        }
        switch (current.state()) {
            case ONGOING:
                break;
            case PREPARE_ABORT:
            case COMPLETE_ABORT:
                return done(prepareError(Errors.INVALID_TXN_STATE, XaCodes.XA_RBROLLBACK, "the transaction of " + id
                        + " was aborted (its timeout, a fencing, or an abort) before it was prepared"));
            default:
                return done(prepareError(Errors.INVALID_TXN_STATE, XaCodes.XAER_PROTO, "transactional id " + id
                        + " has no Ongoing transaction to prepare (state " + current.state().kafkaName() + ")"));
        }
        long now = time.milliseconds();
        XaBranch branch = new XaBranch(xid, id, current.producerId(), current.producerEpoch(),
                XaBranchState.PREPARED, false, current.partitions(), current.txnStartMs(), now, now);
        partitions.appendBranch(p, branch, current.with(TransactionState.PREPARED_XA, Set.of(), -1, now));
        log.info("Prepared XA branch {} of {} (producer {}, epoch {}, {} partitions)", xid, id, branch.producerId(),
                branch.producerEpoch(), branch.partitions().size());
        return replication.awaitLogEnd(p.partition).thenApply(v -> prepared(branch));
    }

    private static XaPrepare.Response prepared(XaBranch branch) {
        return new XaPrepare.Response(Errors.NONE.code(), null, XaCodes.XA_OK, branch.producerId(),
                branch.producerEpoch());
    }

    static XaPrepare.Response prepareError(Errors error, int xaCode, String message) {
        return XaPrepare.Response.error(error.code(), xaCode, message);
    }

    // ---- XaComplete

    CompletableFuture<XaComplete.Response> complete(TxnPartition p, XaComplete.Request request) {
        XaXid xid = request.xid();
        XaBranch branch = p.branches.get(xid);
        if (branch == null) {
            return done(completeAnswer(Errors.TRANSACTIONAL_ID_NOT_FOUND, XaCodes.XAER_NOTA, "no XA branch " + xid
                    + " at the coordinator of " + request.transactionalId()
                    + " (never prepared under that id, or completed and forgotten)"));
        }
        if (request.action() == XaComplete.Action.FORGET) {
            return forget(p, branch);
        }
        boolean commit = request.action() == XaComplete.Action.COMMIT;
        XaBranchState state = branch.state();
        if (state == XaBranchState.PREPARED) {
            XaBranch deciding = branch.with(commit ? XaBranchState.COMMITTING : XaBranchState.ROLLING_BACK,
                    request.heuristic(), time.milliseconds());
            partitions.appendBranch(p, deciding, null);
            log.info("{} XA branch {} of {}{}", commit ? "Committing" : "Rolling back", xid,
                    branch.transactionalId(), request.heuristic() ? " by hand (heuristic)" : "");
            return completeWithMarkers(p, deciding).thenApply(b -> completeAnswer(Errors.NONE, XaCodes.XA_OK, null));
        }
        boolean committed = state == XaBranchState.COMMITTING || state == XaBranchState.COMMITTED;
        String outcome = (state.isCompleting() ? "is being " : "was ") + (committed ? "committed" : "rolled back")
                + (branch.heuristic() ? " by hand (heuristic)" : "");
        if (branch.heuristic() && !request.heuristic()) {
            return done(completeAnswer(Errors.NONE, committed ? XaCodes.XA_HEURCOM : XaCodes.XA_HEURRB,
                    "XA branch " + xid + " " + outcome + " before the transaction manager decided"));
        }
        if (committed != commit) {
            return done(commit
                    ? completeAnswer(Errors.NONE, XaCodes.XA_RBROLLBACK, "XA branch " + xid + " " + outcome)
                    : completeAnswer(Errors.INVALID_TXN_STATE, XaCodes.XAER_PROTO, "XA branch " + xid + " " + outcome
                            + ": it cannot be rolled back"));
        }
        if (state.isCompleting()) {
            return done(completeAnswer(Errors.CONCURRENT_TRANSACTIONS, XaCodes.XA_RETRY, "XA branch " + xid + " "
                    + outcome + ": its markers are being written, ask again"));
        }
        return done(completeAnswer(Errors.NONE, XaCodes.XA_OK, null));
    }

    private CompletableFuture<XaComplete.Response> forget(TxnPartition p, XaBranch branch) {
        if (branch.state().isCompleted() && branch.heuristic()) {
            partitions.removeBranch(p, branch.xid());
            log.info("Forgot the heuristically completed XA branch {} of {}", branch.xid(), branch.transactionalId());
            return replication.awaitLogEnd(p.partition).thenApply(v -> completeAnswer(Errors.NONE, XaCodes.XA_OK,
                    null));
        }
        if (branch.state().isCompleted()) {
            return done(completeAnswer(Errors.NONE, XaCodes.XAER_NOTA, "XA branch " + branch.xid()
                    + " was completed by its transaction manager, not heuristically: there is nothing to forget"));
        }
        return done(completeAnswer(Errors.INVALID_TXN_STATE, XaCodes.XAER_PROTO, "XA branch " + branch.xid()
                + " is " + branch.state() + ", not heuristically completed: commit or roll it back"));
    }

    static XaComplete.Response completeAnswer(Errors error, int xaCode, String message) {
        return new XaComplete.Response(error.code(), message, xaCode);
    }

    /**
     * Once the decision is on the in-sync replicas, writes the branch's markers and then its completed state
     * ({@link MarkerCompletion}, as for EndTxn). Completes with the completed branch, or with {@code deciding} if the
     * markers failed (retried every second); fails if the decision did not reach the replicas (retried too, while
     * this broker leads the partition).
     */
    private CompletableFuture<XaBranch> completeWithMarkers(TxnPartition p, XaBranch deciding) {
        return completion.complete(p, deciding, branchDecision);
    }

    /** How a branch's Committing/RollingBack is completed. */
    private final class BranchDecision implements MarkerCompletion.Decision<XaBranch> {
        @Override
        public long producerId(XaBranch decided) {
            return decided.producerId();
        }

        @Override
        public short producerEpoch(XaBranch decided) {
            return decided.producerEpoch();
        }

        @Override
        public boolean isCommit(XaBranch decided) {
            return decided.state() == XaBranchState.COMMITTING;
        }

        @Override
        public Collection<TopicPartition> partitions(XaBranch decided) {
            return decided.partitions();
        }

        @Override
        public boolean isCurrent(TxnPartition p, XaBranch decided) {
            return partitions.isCurrent(p, decided);
        }

        @Override
        public XaBranch completed(XaBranch decided, long nowMs) {
            return decided.with(isCommit(decided) ? XaBranchState.COMMITTED : XaBranchState.ROLLED_BACK,
                    decided.heuristic(), nowMs);
        }

        @Override
        public void append(TxnPartition p, XaBranch completed) {
            partitions.appendBranch(p, completed, releasedId(p, completed));
        }

        @Override
        public String describe(XaBranch decided) {
            return "XA branch " + decided.xid() + " of " + decided.transactionalId();
        }
    }

    /**
     * The id's state once {@code completed}'s markers are written: COMPLETE_COMMIT or COMPLETE_ABORT with the branch's
     * producer id and epoch, if the id is still PREPARED_XA with them (its producer may then begin its next
     * transaction: nothing of the branch is open on any partition any more); null to leave the id as it is (it has a
     * new producer id, or the branch was completed by hand: its producer's EndTxn must then be refused, so that the
     * client asks XaComplete and reports the heuristic outcome).
     */
    private static TransactionMetadata releasedId(TxnPartition p, XaBranch completed) {
        TransactionMetadata id = p.txns.get(completed.transactionalId());
        if (completed.heuristic() || id == null || id.state() != TransactionState.PREPARED_XA
                || id.producerId() != completed.producerId() || id.producerEpoch() != completed.producerEpoch()) {
            return null;
        }
        return id.with(completed.state() == XaBranchState.COMMITTED ? TransactionState.COMPLETE_COMMIT
                : TransactionState.COMPLETE_ABORT, Set.of(), -1, completed.lastUpdateMs());
    }

    // ---- EndTxn commit from the producer of a prepared branch

    /**
     * EndTxn commit from the producer that prepared a branch ({@code id} is PREPARED_XA with the request's producer id
     * and epoch): commits that branch as XaComplete COMMIT does, and answers once its markers are written (the id is
     * then COMPLETE_COMMIT, {@link #releasedId}). So a client that prepared a branch and kept its producer commits it
     * in the one round trip of kafka-clients' commitTransaction, and keeps that producer (and its connections) for
     * its next branch. Answers CONCURRENT_TRANSACTIONS (retriable) while the branch's commit markers are being
     * written, and INVALID_TXN_STATE when the branch is gone, was completed by hand, or was rolled back: the client
     * then asks XaComplete, which answers with the XA code. There is no abort counterpart: kafka-clients sends an
     * abort when it closes a producer gracefully, and a prepared branch is rolled back by its Xid only.
     */
    CompletableFuture<Errors> commitByProducer(TxnPartition p, TransactionMetadata id) {
        // the id's earlier branches of the same producer id and epoch are completed (they freed the producer)
        XaBranch branch = p.openBranch(id.transactionalId());
        if (branch != null && (branch.producerId() != id.producerId() || branch.producerEpoch() != id.producerEpoch())) {
            branch = null;
        }
        if (branch == null || branch.heuristic()) {
            return done(Errors.INVALID_TXN_STATE);
        }
        if (branch.state() != XaBranchState.PREPARED) {
            return done(branch.state() == XaBranchState.COMMITTING ? Errors.CONCURRENT_TRANSACTIONS
                    : Errors.INVALID_TXN_STATE);
        }
        XaBranch deciding = branch.with(XaBranchState.COMMITTING, false, time.milliseconds());
        partitions.appendBranch(p, deciding, null);
        log.debug("Committing XA branch {} of {} on its producer's EndTxn", branch.xid(), branch.transactionalId());
        return completeWithMarkers(p, deciding).thenApply(b -> b.state().isCompleted() ? Errors.NONE
                : Errors.CONCURRENT_TRANSACTIONS);
    }

    // ---- leadership, expiry, recover

    /** After {@code p} was loaded: finishes the markers of its branches found committing or rolling back. */
    void resume(TxnPartition p) {
        for (XaBranch branch : List.copyOf(p.branches.values())) {
            if (branch.state().isCompleting()) {
                log.info("Completing XA branch {} of {} found in state {}", branch.xid(), branch.transactionalId(),
                        branch.state());
                completeWithMarkers(p, branch);
            }
        }
        long prepared = p.branches.values().stream().filter(b -> b.state() == XaBranchState.PREPARED).count();
        if (prepared > 0) {
            log.info("{} holds {} prepared XA branches, in doubt until their transaction manager or an "
                    + "administrator completes them", p, prepared);
        }
    }

    /**
     * Removes the branches of {@code p} that their transaction manager completed longer than {@code retentionMs}
     * ago (tombstones). Heuristically completed ones stay until they are forgotten.
     */
    void expireCompleted(TxnPartition p, long retentionMs) {
        long now = time.milliseconds();
        for (XaBranch branch : List.copyOf(p.branches.values())) {
            if (branch.state().isCompleted() && !branch.heuristic() && now - branch.lastUpdateMs() > retentionMs) {
                try {
                    partitions.removeBranch(p, branch.xid());
                } catch (RuntimeException e) {
                    log.warn("Could not remove the completed XA branch {}: {}", branch.xid(), e.toString());
                    return;
                }
            }
        }
    }

    /** The branches of the partitions served and loaded here, whose transactional id starts with {@code prefix}. */
    XaRecover.Response recover(String prefix) {
        long now = time.milliseconds();
        Set<Integer> covered = new TreeSet<>();
        List<XaRecover.Branch> listed = new ArrayList<>();
        for (TxnPartition p : partitions.all()) {
            if (partitions.refusal(p) != Errors.NONE) {
                continue;
            }
            covered.add(p.partition);
            for (XaBranch b : p.branches.values()) {
                if (prefix == null || b.transactionalId().startsWith(prefix)) {
                    listed.add(new XaRecover.Branch(b.transactionalId(), b.xid(), wireState(b), b.producerId(),
                            b.producerEpoch(), b.preparedMs(), Math.max(0, now - b.preparedMs()),
                            b.partitions().size()));
                }
            }
        }
        return new XaRecover.Response(Errors.NONE.code(), null, topic.partitionCount(), List.copyOf(covered), listed);
    }

    private static XaRecover.BranchState wireState(XaBranch b) {
        return switch (b.state()) {
            case PREPARED -> XaRecover.BranchState.PREPARED;
            case COMMITTING -> XaRecover.BranchState.COMMITTING;
            case ROLLING_BACK -> XaRecover.BranchState.ROLLING_BACK;
            case COMMITTED -> b.heuristic() ? XaRecover.BranchState.HEURISTIC_COMMITTED
                    : XaRecover.BranchState.COMMITTED;
            case ROLLED_BACK -> b.heuristic() ? XaRecover.BranchState.HEURISTIC_ROLLED_BACK
                    : XaRecover.BranchState.ROLLED_BACK;
        };
    }


    private static <T> CompletableFuture<T> done(T value) {
        return CompletableFuture.completedFuture(value);
    }
}
