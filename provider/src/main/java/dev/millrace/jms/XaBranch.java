package dev.millrace.jms;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import javax.transaction.xa.XAException;
import javax.transaction.xa.XAResource;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;

import dev.millrace.jms.wire.Delivery;
import dev.millrace.jms.wire.XaRequests;
import dev.millrace.protocol.ext.XaCodes;
import dev.millrace.protocol.ext.XaPrepare;
import dev.millrace.protocol.ext.XaXid;
import jakarta.jms.JMSException;

/**
 * The client side of one XA transaction branch: the work of the sessions associated with it, until it is prepared
 * or completed. Registered in its {@link XaResourceManager} by Xid, so that the sessions of several XAResources of
 * one cluster can join it ({@code TMJOIN}).
 *
 * <h2>States (client side)</h2>
 * <pre>
 *          start(TMNOFLAGS)                 end(TMSUCCESS)
 *  (none) -----------------> ASSOCIATED ------------------------> IDLE --prepare--> PREPARED --commit/rollback--> (none)
 *                             |   ^  ^ start(TMJOIN)          |    |                (XaPrepare   (XaComplete to the
 *              end(TMSUSPEND) |   |  +-----------------------+    |                 XA_OK)       coordinator)
 *                             v   | start(TMRESUME)                |--prepare, nothing done: XA_RDONLY --> (none)
 *                           SUSPENDED                              |--commit(onePhase): EndTxn commit --> (none)
 *                                                                  |--rollback: EndTxn abort, redeliver --> (none)
 *   end(TMFAIL) from ASSOCIATED or SUSPENDED: ROLLBACK_ONLY; prepare or commit then roll back and throw XA_RBROLLBACK
 * </pre>
 * ASSOCIATED and SUSPENDED are counted per XAResource ({@link #associated}, {@link #suspended}): the branch is IDLE
 * when no resource has it associated or suspended. prepare and commit need it IDLE (else XAER_PROTO).
 An XaPrepare that got no answer (the broker unreachable for the failover window) leaves the branch
 * PREPARE_UNKNOWN ({@link Phase}): prepare throws XAER_RMFAIL, and the transaction manager's rollback then sends
 * XaComplete ROLLBACK (XAER_NOTA from the broker means it was never prepared) and ends the branch here. A PREPARED
 * branch keeps the topic deliveries it consumed until XaComplete's answer: committed, or delivered again on rollback.
 *
 * <h2>What goes to the broker when</h2>
 * <ul>
 *   <li>The branch runs as a broker transaction of a transactional id leased from its connection's
 *       {@link XaProducers} (one id per branch, reused for later branches), on that id's own KafkaProducer. The
 *       first send initialises the producer (InitProducerId) and begins the transaction; sends are checked at
 *       prepare or commit.</li>
 *   <li>Messages consumed by an associated session are handed to the branch when the association ends (end with
 *       any flag). At prepare (or one-phase commit) queue messages are held for the transaction on their
 *       share-partition leaders (TxnShareAcknowledge: the commit marker accepts them, the abort releases them) and
 *       durable-subscription offsets are added to it (AddOffsetsToTxn + TxnOffsetCommit), as a transacted session
 *       does at commit.</li>
 *   <li>prepare: holds and offsets, flush and check the sends (they travelled meanwhile), then {@link XaPrepare}
 *       (producer id -1: kafka-clients does not expose it) to the id's coordinator. On XA_OK the producer id belongs to the branch on the broker;
 *       the branch keeps its transactional id and producer until it completes. A branch that did nothing on the
 *       broker answers XA_RDONLY without a request.</li>
 *   <li>commit after prepare, from this JVM: the producer's own EndTxn commit if it began the transaction itself
 *       ({@link #commitPrepared}: kafka-clients' commitTransaction, one round trip; the broker commits the branch
 *       and frees the producer); otherwise, or if that is refused, XaComplete COMMIT. After an XaComplete (commit
 *       or rollback) that the broker completed other than by hand, the producer is kept too, brought in step by an
 *       EndTxn of the same outcome if it began the transaction ({@link #completedOnBroker}). So one producer and
 *       its connections serve a connection's successive branches; a producer is given up (and the id's next one
 *       made in the background, {@link XaProducers#retire}) only after a lost prepare, a refused EndTxn or a
 *       heuristic outcome. A kept producer is only ever closed with a zero timeout: a graceful close would send an
 *       abort (which the broker refuses for a prepared branch anyway).</li>
 *   <li>commit(onePhase): the same steps, then EndTxn commit (kafka-clients commitTransaction); a branch that only
 *       consumed acknowledges its messages as a transacted session's commit does. The producer goes back to the
 *       pool for the next branch.</li>
 *   <li>rollback before prepare: EndTxn abort (kafka-clients abortTransaction) and the consumed messages are
 *       delivered again. After prepare, commit and rollback are {@code XaComplete} requests
 *       ({@link MillraceXAResource}).</li>
 * </ul>
 *
 * <p>Thread-safe: every method synchronizes on the branch (a transaction manager may prepare on another thread than
 * the application's).
 */
final class XaBranch {

    /** Where the branch is in its life on the client. */
    enum Phase {
        /** Work may still join it. */
        OPEN,
        /** XaPrepare was sent and its answer was lost: the broker may hold it prepared. */
        PREPARE_UNKNOWN,
        /** The broker holds it prepared under {@link #transactionalId}. */
        PREPARED
    }

    private final XaXid xid;
    private final XaResourceManager manager;
    private final MillraceXAConnection connection;
    private final int timeoutMs;
    private final Set<MillraceXAResource> associated = new HashSet<>();
    private final Set<MillraceXAResource> suspended = new HashSet<>();
    private final Map<MillraceMessageConsumer, List<Delivery>> consumed = new LinkedHashMap<>();
    private final List<Future<RecordMetadata>> sends = new ArrayList<>();
    private Phase phase = Phase.OPEN;
    private boolean rollbackOnly;
    private XaProducers.Lease lease;
    private boolean began;
    /**
     * The producer's own requests began the broker transaction (a send that succeeded, or offsets), so that its
     * EndTxn reaches the broker: kafka-clients sends none for a transaction it added no partition to.
     */
    private boolean producerStarted;
    /** Queue messages were held for the broker transaction (which that began it, if nothing else had). */
    private boolean held;
    /** The transactional id the broker holds the branch under, once XaPrepare was sent. */
    private String preparedId;

    XaBranch(XaXid xid, XaResourceManager manager, MillraceXAConnection connection, int timeoutMs) {
        this.xid = xid;
        this.manager = manager;
        this.connection = connection;
        this.timeoutMs = timeoutMs;
    }

    XaXid xid() {
        return xid;
    }

    synchronized Phase phase() {
        return phase;
    }

    /** The transactional id of a prepared branch (or one whose prepare got no answer); null before. */
    synchronized String transactionalId() {
        return preparedId;
    }

    // ---- associations (start / end)

    synchronized void associate(MillraceXAResource resource, int flags) throws XAException {
        if (phase != Phase.OPEN) {
            throw MillraceXAResource.xa(XAException.XAER_PROTO, "branch " + xid + " is " + phase
                    + ": no work can join it");
        }
        if (flags == XAResource.TMRESUME) {
            if (!suspended.remove(resource)) {
                throw MillraceXAResource.xa(XAException.XAER_PROTO, "branch " + xid
                        + " is not suspended by this XAResource: TMRESUME resumes a branch it suspended");
            }
        } else if (flags == XAResource.TMJOIN) {
            if (rollbackOnly) {
                throw MillraceXAResource.xa(XAException.XA_RBROLLBACK, "branch " + xid
                        + " was marked rollback-only (end with TMFAIL)");
            }
            if (associated.contains(resource) || suspended.contains(resource)) {
                throw MillraceXAResource.xa(XAException.XAER_PROTO, "this XAResource already works on branch "
                        + xid + (suspended.contains(resource) ? " (suspended: resume it with TMRESUME)" : ""));
            }
        }
        associated.add(resource);
    }

    /** Ends {@code resource}'s association ({@code flags}: TMSUCCESS, TMFAIL or TMSUSPEND), taking its consumed work. */
    synchronized void dissociate(MillraceXAResource resource, int flags,
                                 Map<MillraceMessageConsumer, List<Delivery>> work) throws XAException {
        boolean wasAssociated = associated.remove(resource);
        if (!wasAssociated && (flags == XAResource.TMSUSPEND || !suspended.remove(resource))) {
            throw MillraceXAResource.xa(XAException.XAER_PROTO, "this XAResource is not "
                    + (flags == XAResource.TMSUSPEND ? "associated with" : "associated with nor suspended on")
                    + " branch " + xid);
        }
        work.forEach((consumer, deliveries) -> consumed.computeIfAbsent(consumer, c -> new ArrayList<>())
                .addAll(deliveries));
        if (flags == XAResource.TMSUSPEND) {
            suspended.add(resource);
        } else if (flags == XAResource.TMFAIL) {
            rollbackOnly = true;
        }
    }

    synchronized boolean isAssociatedWith(MillraceXAResource resource) {
        return associated.contains(resource);
    }

    // ---- work

    /** The producer for a send in this branch; the broker transaction begins here if it has not yet. */
    synchronized KafkaProducer<byte[], byte[]> producerForSend() throws JMSException {
        if (phase != Phase.OPEN) {
            throw new jakarta.jms.IllegalStateException("XA branch " + xid + " is " + phase + ": no more sends");
        }
        try {
            beginIfNeeded();
        } catch (KafkaException e) {
            discardProducer();
            throw JmsExceptions.fromClient("begin the transaction of XA branch " + xid, e);
        }
        return lease.producer();
    }

    synchronized void sent(Future<RecordMetadata> send) {
        sends.add(send);
    }

    private void initIfNeeded() {
        if (lease == null) {
            lease = connection.producers().take(timeoutMs);
        } else if (lease.producer() == null) {
            lease = connection.producers().withProducer(lease);
        }
    }

    private void beginIfNeeded() {
        initIfNeeded();
        if (!began) {
            lease.producer().beginTransaction();
            began = true;
        }
    }

    // ---- completion

    /** XA prepare: see the class comment. Returns XA_OK or XA_RDONLY. */
    synchronized int prepare(XaRequests requests) throws XAException {
        checkIdle("prepare");
        if (rollbackOnly) {
            rollback();
            throw MillraceXAResource.xa(XAException.XA_RBROLLBACK, "branch " + xid
                    + " was marked rollback-only (end with TMFAIL): rolled back");
        }
        if (!began && !hasBrokerWork()) {
            finishConsumedOutsideBroker();
            endLocally();
            return XAResource.XA_RDONLY;
        }
        List<MillraceMessageConsumer> topicConsumers = addWorkToTransaction();
        XaPrepare.Response r;
        phase = Phase.PREPARE_UNKNOWN;
        preparedId = lease.transactionalId();
        try {
            r = requests.prepare(new XaPrepare.Request(lease.transactionalId(), -1, (short) -1, xid));
        } catch (JMSException e) {
            throw MillraceXAResource.xa(XAException.XAER_RMFAIL, "prepare of branch " + xid
                    + " got no answer; its outcome is unknown until it is rolled back: " + e.getMessage(), e);
        }
        if (r.xaCode() != XaCodes.XA_OK) {
            boolean rolledBack = r.xaCode() >= XAException.XA_RBBASE && r.xaCode() <= XAException.XA_RBEND;
            phase = Phase.OPEN;
            preparedId = null;
            if (rolledBack) {
                rollback();
            }
            throw MillraceXAResource.xa(r.xaCode(), "prepare of branch " + xid + ": " + XaCodes.name(r.xaCode())
                    + " " + r.errorMessage());
        }
        phase = Phase.PREPARED;
        // the producer id now belongs to the branch: the producer stays with it until it completes (commit: its own
        // EndTxn, commitPrepared; else XaComplete, after which the broker lets the producer go on: completedOnBroker)
        // the queue messages are the broker's now (its markers accept or release them); topic messages stay here
        // until the outcome is known: committed, or delivered again (completedOnBroker)
        consumed.keySet().retainAll(topicConsumers);
        return XAResource.XA_OK;
    }

    /** XA commit with onePhase: see the class comment. */
    synchronized void commitOnePhase() throws XAException {
        checkIdle("commit (one phase)");
        if (rollbackOnly) {
            rollback();
            throw MillraceXAResource.xa(XAException.XA_RBROLLBACK, "branch " + xid
                    + " was marked rollback-only (end with TMFAIL): rolled back");
        }
        if (!began) {
            acknowledgeConsumed();
            endLocally();
            return;
        }
        List<MillraceMessageConsumer> topicConsumers = addWorkToTransaction();
        try {
            lease.producer().commitTransaction();
        } catch (KafkaException e) {
            if (e instanceof org.apache.kafka.common.errors.TimeoutException) {
                discardProducer();
                throw MillraceXAResource.xa(XAException.XAER_RMFAIL, "the commit of branch " + xid
                        + " got no answer: the broker commits or aborts all of it", e);
            }
            rollback();
            throw MillraceXAResource.xa(XAException.XA_RBROLLBACK, "branch " + xid + " was rolled back instead of"
                    + " committed: " + e, e);
        }
        began = false;
        producerStarted = false;
        for (MillraceMessageConsumer c : topicConsumers) {
            committedQuietly(c);
        }
        consumed.clear();
        endLocally();
    }

    /**
     * Commits a branch prepared here whose producer began its transaction, with that producer's EndTxn commit (one
     * round trip, and the producer stays usable for the next branch: the broker commits the branch and frees the
     * producer, see the broker's XaBranches). Returns false, having given up the producer, when that is not possible
     * or the broker refused it: the caller then commits by Xid (XaComplete), which answers with the XA code (a
     * branch completed by hand, rolled back, unknown) or fails when the broker is unreachable. Throws XAER_RMFAIL
     * when the EndTxn got no answer within the connection's blocking timeout (its request timeout plus failover
     * window): the outcome is unknown until the transaction manager commits again, then by Xid.
     */
    synchronized boolean commitPrepared() throws XAException {
        if (phase != Phase.PREPARED || lease == null || lease.producer() == null || !producerStarted) {
            return false;
        }
        try {
            lease.producer().commitTransaction();
        } catch (org.apache.kafka.common.errors.TimeoutException e) {
            retireProducer();
            throw MillraceXAResource.xa(XAException.XAER_RMFAIL, "the commit of branch " + xid + " got no answer"
                    + " in time; commit it again", e);
        } catch (KafkaException | IllegalStateException e) {
            // refused, unreachable, or closed with its connection (a branch outlives the connection it ran on)
            retireProducer();
            return false;
        }
        began = false;
        producerStarted = false;
        completedOnBroker(true, true);
        return true;
    }

    /**
     * Rolls back a branch that was not prepared: the broker transaction aborts, consumed messages come again. A
     * branch whose connection closed (a container undeploying an application rolls back its in-flight branches after
     * closing their connections) has lost its producer: its transaction is aborted with a producer made for the id
     * ({@link XaProducers#abortOpenTransaction}), not left open until its timeout; if the broker cannot be reached
     * for that, the broker aborts it at the timeout, so the rollback holds either way and no exception escapes.
     */
    synchronized void rollback() {
        boolean open = began || held;
        boolean aborted = false;
        if (lease != null && lease.producer() != null && began) {
            try {
                lease.producer().abortTransaction();
                aborted = true;
            } catch (KafkaException | IllegalStateException e) {
                // fenced or failed (the broker aborts it, or did), or closed with its connection (IllegalState)
                discardProducer();
            }
        } else if (held) {
            // holds began the broker transaction without the producer knowing: a new producer's InitProducerId
            // for the id aborts it (the id's next take, or below when there will be none)
            discardProducer();
        }
        if (open && !aborted && lease != null && connection.producers().isClosed()) {
            try {
                connection.producers().abortOpenTransaction(lease);
            } catch (KafkaException | IllegalStateException e) {
                // unreachable: the broker aborts it at the transaction timeout
            }
        }
        began = false;
        producerStarted = false;
        held = false;
        for (Map.Entry<MillraceMessageConsumer, List<Delivery>> e : consumed.entrySet()) {
            try {
                e.getKey().redeliver(e.getValue());
            } catch (JMSException ignored) {
                // the consumer is gone: its messages come back when their locks expire
            }
        }
        consumed.clear();
        endLocally();
    }

    /**
     * The broker completed the branch (after prepare, or after a prepare whose answer was lost): the topic messages
     * it consumed are committed ({@code committed} true) or delivered again (false; null: the outcome is not known
     * here, they are left as they are). {@code producerFreed}: the broker completed it other than by hand, so it freed
     * the id's producer (the broker's XaBranches): a producer of a branch prepared here is kept for the next branch,
     * brought in step first if it began the transaction itself (an EndTxn of the outcome, answered at once); any
     * other producer (a lost prepare's, a branch completed by hand) is given up and the id gets a new one in the
     * background.
     */
    synchronized void completedOnBroker(Boolean committed, boolean producerFreed) {
        if (lease != null && lease.producer() != null) {
            boolean keep = phase == Phase.PREPARED && producerFreed && committed != null;
            if (keep && began) {
                // kafka-clients still has the transaction open: an EndTxn of the outcome (answered at once by the
                // broker, or not sent at all when the producer added no partition) brings it back to ready
                try {
                    if (committed) {
                        lease.producer().commitTransaction();
                    } else {
                        lease.producer().abortTransaction();
                    }
                } catch (KafkaException | IllegalStateException e) {
                    keep = false;
                }
            }
            if (!keep) {
                retireProducer();
            }
        }
        began = false;
        producerStarted = false;
        if (committed != null) {
            for (Map.Entry<MillraceMessageConsumer, List<Delivery>> e : consumed.entrySet()) {
                try {
                    if (committed) {
                        e.getKey().committedInTransaction(e.getValue());
                    } else {
                        e.getKey().redeliver(e.getValue());
                    }
                } catch (JMSException ignored) {
                    // the consumer is gone
                }
            }
        }
        consumed.clear();
        endLocally();
    }

    synchronized boolean isIdle() {
        return associated.isEmpty() && suspended.isEmpty();
    }

    private void checkIdle(String what) throws XAException {
        if (phase != Phase.OPEN) {
            throw MillraceXAResource.xa(XAException.XAER_PROTO, what + " of branch " + xid + ", which is " + phase);
        }
        if (!isIdle()) {
            throw MillraceXAResource.xa(XAException.XAER_PROTO, what + " of branch " + xid + " while "
                    + (associated.isEmpty() ? "suspended" : "associated") + ": end it first");
        }
    }

    /** Whether the consumed messages need the broker transaction (queues, durable subscriptions). */
    private boolean hasBrokerWork() {
        for (MillraceMessageConsumer c : consumed.keySet()) {
            if (c.isQueueConsumer() || c.transactionOffsets(consumed.get(c)) != null) {
                return true;
            }
        }
        return false;
    }

    /**
     * Flushes and checks the sends, holds the queue messages for the transaction and adds the durable offsets;
     * returns the topic consumers to tell after the commit. A failure rolls the branch back and throws XA_RBROLLBACK.
     */
    private List<MillraceMessageConsumer> addWorkToTransaction() throws XAException {
        List<MillraceMessageConsumer> topicConsumers = new ArrayList<>();
        try {
            initIfNeeded();
            KafkaProducer<byte[], byte[]> producer = lease.producer();
            // the holds before the flush: the sends are on their way already, so the holds' round trips overlap
            // theirs (the coordinator adds both kinds of partition to the one transaction, in whichever order)
            for (Map.Entry<MillraceMessageConsumer, List<Delivery>> e : consumed.entrySet()) {
                if (e.getKey().isQueueConsumer()) {
                    held = true;
                }
                if (e.getKey().acceptInTransaction(connection.extensions(), lease.transactionalId(), e.getValue())) {
                    continue;
                }
                var offsets = e.getKey().transactionOffsets(e.getValue());
                if (offsets != null && !offsets.getValue().isEmpty()) {
                    beginIfNeeded();
                    producerStarted = true;
                    producer.sendOffsetsToTransaction(offsets.getValue(), new ConsumerGroupMetadata(offsets.getKey()));
                }
                topicConsumers.add(e.getKey());
            }
            producer.flush();
            long waitMs = connection.settings().blockingTimeoutMs() + connection.settings().requestTimeoutMs();
            for (Future<RecordMetadata> send : sends) {
                send.get(waitMs, TimeUnit.MILLISECONDS);
            }
            if (!sends.isEmpty()) {
                producerStarted = true; // every send of the branch was written: its partitions are in the transaction
            }
            return topicConsumers;
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            rollback();
            throw MillraceXAResource.xa(XAException.XA_RBROLLBACK, "branch " + xid + " was rolled back: its work"
                    + " could not be added to its broker transaction: " + cause, cause);
        } finally {
            sends.clear();
        }
    }

    /** Non-durable topic messages only: nothing on the broker, acknowledged now. */
    private void finishConsumedOutsideBroker() {
        for (MillraceMessageConsumer c : consumed.keySet()) {
            committedQuietly(c);
        }
        consumed.clear();
    }

    private void acknowledgeConsumed() throws XAException {
        for (Map.Entry<MillraceMessageConsumer, List<Delivery>> e : consumed.entrySet()) {
            try {
                e.getKey().acknowledge(e.getValue(), true);
            } catch (JMSException failure) {
                rollback();
                throw MillraceXAResource.xa(XAException.XA_RBROLLBACK, "branch " + xid + " was rolled back: the"
                        + " messages it consumed could not be acknowledged: " + failure.getMessage(), failure);
            }
        }
        consumed.clear();
    }

    private void committedQuietly(MillraceMessageConsumer c) {
        try {
            c.committedInTransaction(consumed.getOrDefault(c, List.of()));
        } catch (JMSException ignored) {
            // bookkeeping of a consumer that is gone
        }
    }

    /** The branch is over on this client: its transactional id (and producer, if reusable) go back to the pool. */
    private void endLocally() {
        if (lease != null) {
            if (began) {
                discardProducer();
            }
            connection.producers().giveBack(lease);
            lease = null;
        }
        manager.forget(this);
    }

    /** Gives up the producer after a prepare: the id gets its next one in the background ({@link XaProducers}). */
    private void retireProducer() {
        if (lease != null) {
            connection.producers().retire(lease);
            lease = null;
        }
        began = false;
        producerStarted = false;
    }

    private void discardProducer() {
        if (lease != null && lease.producer() != null) {
            connection.producers().discard(lease.producer());
            lease = lease.withoutProducer();
        }
        began = false;
        producerStarted = false;
    }

    @Override
    public String toString() {
        return "XaBranch[" + xid + "]";
    }
}
