package dev.millrace.broker.share;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.protocol.ext.TxnAddSharePartition;
import dev.millrace.protocol.ext.TxnShareAcknowledge;

/**
 * Share acknowledgements inside producer transactions (the TxnShareAcknowledge extension,
 * {@link TxnShareAcknowledge}), served by the leader of the share-partition: holds a member's acquired records for an
 * Ongoing transaction and settles them when the transaction's marker reaches the partition, accepting on commit and
 * releasing on abort.
 *
 * <p>How a hold works on a cluster, where the transaction's coordinator is usually another broker:
 * <ol>
 *   <li>the partition's records must be acquired by the member (checked by member id, which the share-partition
 *       knows from its acquisitions: the share group's coordinator is not asked);</li>
 *   <li>the transaction's coordinator adds the share-partition's topic partition to the Ongoing transaction
 *       ({@link TransactionJoin}, the TxnAddSharePartition extension) and names its producer id: from then on the
 *       transaction's end writes a marker to this partition, on whichever broker leads it then;</li>
 *   <li>the records are held under that producer id; a marker that reached the partition while the coordinator was
 *       being asked (the transaction timed out in between) is noticed and settles them at once.</li>
 * </ol>
 * A failure at any step holds nothing and answers the error; the partition may stay in the transaction (its marker
 * then settles nothing here).
 *
 * <p>Durable: a hold is saved with the share-partition's state before it is answered ({@link TransactionHolds}). If
 * the share-partition's leader dies before the transaction's marker, the new leader keeps the records held: the
 * marker settles them there when the coordinator writes it (again) to the new leader, or, if the old leader had
 * appended it already, when the new leader finds it in the log as it loads the state. So a consumption that a
 * committed transaction included is never delivered again, and one an aborted transaction included is released with
 * its delivery counted. A crash of the consumer, or the transaction's abort, loses nothing.
 *
 * <p>Thread-safe.
 */
public final class ShareTransactions {

    /** What the share side needs of the transaction coordinators. */
    @FunctionalInterface
    public interface TransactionJoin {
        /**
         * Asks the coordinator of {@code transactionalId} to add {@code tp} to its Ongoing transaction; completes
         * with the coordinator's answer (its producer id on NONE). May complete exceptionally when the coordinator
         * could not be reached.
         */
        CompletableFuture<TxnAddSharePartition.Response> addPartition(String transactionalId, TopicPartition tp);
    }

    /** The markers that reached one partition while a hold for it was asking the coordinator. */
    private static final class MarkerWatch {
        private final Map<Long, Boolean> seen = new ConcurrentHashMap<>();
    }

    private static final Logger log = LoggerFactory.getLogger(ShareTransactions.class);

    private final ShareTopics topics;
    private final SharePartitionManager partitions;
    private final ExecutorService settler = Executors.newSingleThreadExecutor(r -> {
        Thread thread = new Thread(r, "millrace-share-txn-settle");
        thread.setDaemon(true);
        return thread;
    });
    /**
     * Where holds are made once the coordinator answered: a hold saves the share-partition's state and waits for it,
     * which must not happen on the network thread that completed the coordinator's answer (the save's own answer
     * comes in on such a thread: waiting there stalled every hold for the save's whole timeout).
     */
    private final java.util.concurrent.ThreadPoolExecutor holder = new java.util.concurrent.ThreadPoolExecutor(4, 4,
            30, java.util.concurrent.TimeUnit.SECONDS, new java.util.concurrent.LinkedBlockingQueue<>(), r -> {
                Thread thread = new Thread(r, "millrace-share-txn-hold");
                thread.setDaemon(true);
                return thread;
            });
    /** Guarded by {@code this}. */
    private final Map<TopicPartition, Set<MarkerWatch>> watches = new HashMap<>();
    private volatile TransactionJoin join = (id, tp) -> CompletableFuture.completedFuture(
            TxnAddSharePartition.Response.error(Errors.COORDINATOR_NOT_AVAILABLE.code(),
                    "this broker has no transaction coordinator connected yet"));

    ShareTransactions(ShareTopics topics, SharePartitionManager partitions) {
        this.topics = Objects.requireNonNull(topics, "topics");
        this.partitions = Objects.requireNonNull(partitions, "partitions");
        holder.allowCoreThreadTimeOut(true);
    }

    /** Connects the transaction coordinators; until then every request fails with COORDINATOR_NOT_AVAILABLE. */
    public void setTransactions(TransactionJoin join) {
        this.join = Objects.requireNonNull(join, "join");
    }

    /** Serves one request; never completes exceptionally. */
    public CompletableFuture<TxnShareAcknowledge.Response> acknowledge(TxnShareAcknowledge.Request request) {
        if (request.offsets().isEmpty()) {
            return done(error(Errors.INVALID_REQUEST, "offsets must not be empty"));
        }
        if (request.transactionalId().isEmpty()) {
            return done(error(Errors.INVALID_REQUEST, "transactional_id must not be empty"));
        }
        if (request.memberId().isEmpty()) {
            return done(error(Errors.INVALID_REQUEST, "member_id must not be empty"));
        }
        Optional<Uuid> topicId = topics.idOf(request.topic());
        if (topicId.isEmpty() || request.partition() < 0
                || request.partition() >= topics.partitionCount(request.topic())) {
            return done(error(Errors.UNKNOWN_TOPIC_OR_PARTITION, "no partition " + request.partition() + " of topic "
                    + request.topic()));
        }
        TopicPartition tp = new TopicPartition(request.topic(), request.partition());
        Optional<SharePartition> partition = partitions.get(request.groupId(), tp);
        if (partition.isEmpty()) {
            // a broker that does not lead tp (any more) says so, so that the client looks the leader up again and
            // sends there: INVALID_RECORD_STATE here failed every transacted commit of a client that kept sending
            // to the old leader after a failover (the failover chaos suite's consume-transform-produce flow)
            if (partitions.notLeader(tp)) {
                return done(error(Errors.NOT_LEADER_OR_FOLLOWER, "this broker does not lead " + tp));
            }
            return done(error(Errors.INVALID_RECORD_STATE, "share group " + request.groupId()
                    + " has acquired nothing of " + tp));
        }
        SharePartition sp = partition.get();
        if (!sp.acquiredBy(request.memberId(), request.offsets())) {
            // checked before the transaction is asked, so that a stale hold adds nothing to it
            return done(notAcquired(request, tp));
        }
        MarkerWatch watch = watch(tp);
        CompletableFuture<TxnAddSharePartition.Response> joined;
        try {
            joined = join.addPartition(request.transactionalId(), tp);
        } catch (RuntimeException e) {
            joined = CompletableFuture.failedFuture(e);
        }
        return joined.handleAsync((answer, failure) -> {
            try {
                return hold(request, tp, sp, answer, failure, watch);
            } catch (RuntimeException e) {
                return done(error(Errors.UNKNOWN_SERVER_ERROR, "holding " + request.offsets() + " of " + tp
                        + " failed: " + e));
            } finally {
                unwatch(tp, watch);
            }
        }, holder).thenCompose(response -> response);
    }

    private CompletableFuture<TxnShareAcknowledge.Response> hold(TxnShareAcknowledge.Request request,
                                                                 TopicPartition tp, SharePartition sp,
                                                                 TxnAddSharePartition.Response answer,
                                                                 Throwable failure, MarkerWatch watch) {
        if (failure != null) {
            return done(error(Errors.COORDINATOR_NOT_AVAILABLE, "the coordinator of transactional id "
                    + request.transactionalId() + " could not be asked: " + failure.getMessage()));
        }
        Errors coordinatorError = Errors.forCode(answer.errorCode());
        if (coordinatorError != Errors.NONE) {
            return done(error(coordinatorError, coordinatorError == Errors.INVALID_TXN_STATE
                    ? "transactional id " + request.transactionalId() + " has no ongoing transaction"
                    : "the coordinator of transactional id " + request.transactionalId() + " answered "
                    + coordinatorError.name() + (answer.errorMessage() == null ? "" : ": " + answer.errorMessage())));
        }
        long producerId = answer.producerId();
        Errors holdError;
        try {
            holdError = sp.holdForTransaction(request.memberId(), request.offsets(), producerId);
        } catch (org.apache.kafka.common.errors.ApiException e) {
            // the hold could not be saved (the partition moved, the share-state coordinator is unreachable): the
            // client's commit fails and its transaction aborts, which releases what is held here
            return done(error(Errors.forException(e), "holding " + request.offsets() + " of " + tp
                    + " could not be saved: " + e.getMessage()));
        }
        if (holdError != Errors.NONE) {
            return done(notAcquired(request, tp));
        }
        Boolean ended = watch.seen.get(producerId);
        if (ended == null) {
            return done(new TxnShareAcknowledge.Response(Errors.NONE.code(), null));
        }
        // the transaction's marker reached tp while the coordinator was asked: it settled nothing held then
        TxnShareAcknowledge.Response response = ended ? new TxnShareAcknowledge.Response(Errors.NONE.code(), null)
                : error(Errors.INVALID_TXN_STATE, "the transaction of " + request.transactionalId()
                        + " was aborted while its acknowledgements were added");
        return onTransactionMarkers(producerId, ended, List.of(tp)).thenApply(v -> response);
    }

    /**
     * The markers of producer {@code producerId}'s transaction are written to {@code written} (the partitions of the
     * transaction this broker leads): settles what was held for it on those partitions, on this class's own thread
     * (accepting or releasing saves share-partition state, which waits for the share-state partition's replicas: the
     * caller is often the thread that serves follower fetches, which must not wait for them). Completes once every
     * settled share-partition's state is saved, so that the marker's write, and the transaction's commit, is answered
     * after the acceptance is durable. Never completes exceptionally (a failed save is logged; the records stay
     * accepted here and the share-partition saves them with its next change).
     */
    public CompletableFuture<Void> onTransactionMarkers(long producerId, boolean commit,
                                                        Collection<TopicPartition> written) {
        List<SharePartition> settle = new ArrayList<>();
        synchronized (this) {
            for (TopicPartition tp : written) {
                Set<MarkerWatch> w = watches.get(tp);
                if (w != null) {
                    w.forEach(watch -> watch.seen.put(producerId, commit));
                }
            }
        }
        for (TopicPartition tp : written) {
            // the partitions know their holds, restored ones included (a hold made on a broker since lost)
            partitions.partitionsOn(tp).stream().filter(p -> p.holdsFor(producerId)).forEach(settle::add);
        }
        if (settle.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> settled = new CompletableFuture<>();
        try {
            settler.execute(() -> {
                for (SharePartition partition : settle) {
                    try {
                        partition.completeTransaction(producerId, commit);
                    } catch (RuntimeException e) {
                        log.warn("Settling the share acknowledgements of producer {} ({}) failed: {}", producerId,
                                commit ? "commit" : "abort", e.toString());
                    }
                }
                settled.complete(null);
            });
        } catch (RejectedExecutionException closing) {
            settled.complete(null);
        }
        return settled;
    }

    /** Stops the settling thread (the broker is closing). */
    public void close() {
        settler.shutdownNow();
        holder.shutdownNow();
    }

    private synchronized MarkerWatch watch(TopicPartition tp) {
        MarkerWatch watch = new MarkerWatch();
        watches.computeIfAbsent(tp, k -> new HashSet<>()).add(watch);
        return watch;
    }

    private synchronized void unwatch(TopicPartition tp, MarkerWatch watch) {
        Set<MarkerWatch> w = watches.get(tp);
        if (w != null && w.remove(watch) && w.isEmpty()) {
            watches.remove(tp);
        }
    }

    private static TxnShareAcknowledge.Response notAcquired(TxnShareAcknowledge.Request request, TopicPartition tp) {
        return error(Errors.INVALID_RECORD_STATE, "an offset of " + request.offsets() + " in " + tp + " of share group "
                + request.groupId() + " is not acquired by member " + request.memberId()
                + " (its lock may have expired, the member may be unknown here, or the partition's leader moved)");
    }

    private static CompletableFuture<TxnShareAcknowledge.Response> done(TxnShareAcknowledge.Response response) {
        return CompletableFuture.completedFuture(response);
    }

    private static TxnShareAcknowledge.Response error(Errors error, String message) {
        return new TxnShareAcknowledge.Response(error.code(), message);
    }
}
