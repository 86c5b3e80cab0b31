package dev.millrace.broker.txn;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.CoordinatorNotAvailableException;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.coordinator.CoordinatorElection;
import dev.millrace.broker.coordinator.ReplicationAwaiter;
import dev.millrace.delay.Time;
import dev.millrace.delay.Timer;
import dev.millrace.delay.TimerTask;
import dev.millrace.protocol.ext.XaCodes;
import dev.millrace.protocol.ext.XaComplete;
import dev.millrace.protocol.ext.XaPrepare;
import dev.millrace.protocol.ext.XaRecover;

/**
 * The transaction coordinator: owns the {@link TransactionMetadata} of the transactional ids whose
 * {@code __transaction_state} partition this broker leads, keeps it in that partition ({@link TxnLogRecordSerde}),
 * and drives transactions through the states of {@link TransactionState} with Kafka's semantics (transaction version
 * 1: partitions are added with AddPartitionsToTxn, sequences continue across transactions of one epoch).
 *
 * <ul>
 *   <li>InitProducerId with a transactional id: a new id gets a producer id from
 *       {@link ProducerIdSource} (the quorum's blocks) and epoch 0; a known one gets its epoch bumped, which fences the
 *       previous producer with that id (a zombie). An open transaction of the old producer is first
 *       aborted with a bumped epoch, so the zombie's markers and writes are refused everywhere.</li>
 *   <li>AddPartitionsToTxn / AddOffsetsToTxn put partitions into the transaction (state Ongoing).</li>
 *   <li>EndTxn writes PrepareCommit/PrepareAbort, waits until it is on the partition's in-sync replicas, then writes
 *       the markers to every partition of the transaction ({@link TxnMarkerWriter}: locally or to the partitions'
 *       leaders), then CompleteCommit/CompleteAbort, and answers the client after the markers: once
 *       {@code commitTransaction()} returns, read-committed consumers can see the data. If markers fail, the client
 *       still succeeds (the Prepare state is durable) and the coordinator retries them every second until they are
 *       written.</li>
 *   <li>A transaction open longer than its timeout is aborted by the coordinator, with a bumped
 *       epoch (the producer is fenced and must re-initialise), checked every
 *       {@code abortScanIntervalMs}.</li>
 *   <li>XA (XaPrepare, XaComplete, XaRecover): a transaction can be prepared as an XA branch, then committed or
 *       rolled back by Xid from any connection; the design is in {@link XaBranches}.</li>
 * </ul>
 *
 * <h2>Leadership</h2>
 * The coordinator serves exactly the partitions of {@code __transaction_state} this broker leads
 * ({@link CoordinatorElection}: the broker registers it with its partition manager; {@link #load} elects every
 * partition, for a broker or test that runs alone). On {@link #onElected} the partition's state is loaded from the
 * local log, then its Prepare states are finished (markers, then Complete) and its Ongoing ones stay open until their
 * timeout (their producer may still be alive and commit); on {@link #onResigned} its ids are answered
 * NOT_COORDINATOR at once and its state is dropped, and work in flight for it (marker retries, answers waiting for
 * the replicas) stops or fails with NOT_COORDINATOR. Ids of a partition led elsewhere get NOT_COORDINATOR, of one still
 * loading COORDINATOR_LOAD_IN_PROGRESS (the clients find the coordinator again, or retry). Every append is fenced by
 * the leader epoch the partition was loaded in: once the partition's current epoch differs, the coordinator answers
 * NOT_COORDINATOR and writes nothing.
 *
 * <p>Every answer that depends on an append to {@code __transaction_state} (InitProducerId, AddPartitionsToTxn,
 * AddOffsetsToTxn, and the Prepare state of EndTxn, before any marker) is given only once the append is on the
 * partition's in-sync replicas ({@link ReplicationAwaiter}, as Kafka's coordinator writes with acks=all). So what
 * survives a failover: every state a client was answered for, in particular an acknowledged commit, which the new
 * leader finds in PrepareCommit (and completes: markers on every partition) or CompleteCommit. What does not: an
 * append that was not yet replicated when the leader died (its client got an error or no answer and retries), and
 * the timers (a new leader's timeout scan starts afresh; an Ongoing transaction's start time is in its state, so it is
 * still aborted at its timeout).
 *
 * <p>Decisions where Kafka leaves room: producer epochs are not bumped at every commit (that is
 * transaction version 2, not advertised); an epoch that would reach {@code Short.MAX_VALUE} moves
 * the transactional id to a new producer id at InitProducerId. Transactional ids do not expire. Markers carry the
 * coordinator epoch, but partitions do not refuse markers of an older coordinator epoch (Kafka's
 * TRANSACTION_COORDINATOR_FENCED): a coordinator stops sending markers for a partition it resigned, so only a request
 * already in flight at the hand-over could arrive late, and it carries the same decision the new leader writes.
 *
 * <p>Threading: every state change runs on the coordinator's single thread, so the state needs no
 * locks; it is published in concurrent maps for {@link #verifyTransactionalBatch} and describes. Leadership events
 * arrive on the metadata thread and only hand work to the coordinator thread (a resignation takes effect at once).
 */
public final class TransactionCoordinator implements CoordinatorElection, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(TransactionCoordinator.class);

    /**
     * Settings: the largest timeout a producer may ask for, how often timed-out transactions are aborted (and
     * completed XA branches past their retention removed), and how long an XA branch its transaction manager
     * completed is remembered ({@link XaBranches}).
     */
    public record Config(int maxTimeoutMs, long abortScanIntervalMs, long xaCompletedRetentionMs) {

        /** A day: a transaction manager retries a commit or rollback well within that. */
        public static final long DEFAULT_XA_COMPLETED_RETENTION_MS = 24 * 60 * 60 * 1000L;

        public Config(int maxTimeoutMs, long abortScanIntervalMs) {
            this(maxTimeoutMs, abortScanIntervalMs, DEFAULT_XA_COMPLETED_RETENTION_MS);
        }

        public static Config defaults() {
            return new Config(900_000, 10_000);
        }
    }

    /** The answer to InitProducerId. */
    public record InitResult(Errors error, long producerId, short producerEpoch) {
        static InitResult error(Errors error) {
            return new InitResult(error, RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH);
        }
    }

    private final Config config;
    private final TransactionStateTopic topic;
    private final ProducerIdSource producerIds;
    private final ReplicationAwaiter replication;
    private final Time time;
    private final Timer timer;
    private final ExecutorService executor;
    /** The partitions led here; a resignation takes effect there at once. */
    private final TxnPartitions partitions;
    private final MarkerCompletion completion;
    private final PrepareDecision prepareDecision = new PrepareDecision();
    private final XaBranches xa;
    private final AtomicBoolean scanStarted = new AtomicBoolean();
    private volatile boolean closed;

    /** A coordinator whose appends need no replication wait (tests, a log that is not replicated). */
    public TransactionCoordinator(Config config, TransactionStateTopic topic, ProducerIdSource producerIds,
                                  TxnMarkerWriter markers, Time time, Timer timer) {
        this(config, topic, producerIds, markers, ReplicationAwaiter.IMMEDIATE, time, timer);
    }

    /** @param replication waits until an append to a partition of the topic is on its in-sync replicas */
    public TransactionCoordinator(Config config, TransactionStateTopic topic, ProducerIdSource producerIds,
                                  TxnMarkerWriter markers, ReplicationAwaiter replication, Time time, Timer timer) {
        this.config = config;
        this.topic = topic;
        this.partitions = new TxnPartitions(topic, time);
        this.producerIds = producerIds;
        this.replication = replication;
        this.time = time;
        this.timer = timer;
        this.executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "millrace-txn-coordinator");
            t.setDaemon(true);
            return t;
        });
        this.completion = new MarkerCompletion(markers, replication, time, executor, this::scheduleOnCoordinator);
        this.xa = new XaBranches(topic, partitions, completion, replication, time);
    }

    // ---- leadership

    /**
     * Serves every partition of the topic, each in the epoch {@link TransactionStateTopic#leaderEpoch} gives now (a
     * coordinator that runs alone); completes once all are loaded, or fails with the first load that failed.
     */
    public CompletableFuture<Void> load() {
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (int p = 0; p < topic.partitionCount(); p++) {
            onElected(p, topic.leaderEpoch(p));
            all.add(whenLoaded(p));
        }
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new));
    }

    @Override
    public void onElected(int partition, int leaderEpoch) {
        TxnPartition elected = partitions.elect(partition, leaderEpoch);
        log.info("Loading the transactions of {}", elected);
        try {
            executor.execute(() -> loadPartition(elected));
        } catch (RejectedExecutionException e) {
            elected.loaded.completeExceptionally(new CoordinatorNotAvailableException("The coordinator is closed"));
        }
        if (scanStarted.compareAndSet(false, true)) {
            scheduleAbortScan();
        }
    }

    @Override
    public void onResigned(int partition, int leaderEpoch) {
        TxnPartition dropped = partitions.resign(partition, leaderEpoch);
        if (dropped != null) {
            log.info("No longer coordinating the {} transactional ids of {}", dropped.txns.size(), dropped);
        }
    }

    /**
     * Completes once {@code partition} is loaded here (in the epoch it is led in now); fails with
     * NotCoordinatorException if this broker does not lead it, or with the load's error.
     */
    public CompletableFuture<Void> whenLoaded(int partition) {
        return partitions.whenLoaded(partition);
    }

    private void loadPartition(TxnPartition p) {
        if (!partitions.isServed(p)) {
            return; // resigned before its turn
        }
        long start = time.hiResClockMs();
        long records;
        try {
            records = TxnLogLoader.replay(topic.log(p.partition), p.partition, p.txns, p.branches);
            p.reindexBranches();
        } catch (RuntimeException e) {
            log.error("Cannot load the transactions of {}", p, e);
            p.loaded.completeExceptionally(e);
            return;
        }
        p.loaded.complete(null);
        log.info("Loaded {} transactional ids from {} records of {} in {} ms", p.txns.size(), records, p,
                time.hiResClockMs() - start);
        for (TransactionMetadata txn : List.copyOf(p.txns.values())) {
            if (txn.state().isPrepare()) {
                log.info("Completing transaction of {} (producer {}, epoch {}) found in state {}",
                        txn.transactionalId(), txn.producerId(), txn.producerEpoch(), txn.state());
                completeWithMarkers(p, txn);
            }
        }
        xa.resume(p);
    }

    @Override
    public void close() {
        closed = true;
        executor.shutdown();
        try {
            executor.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---- requests

    /** InitProducerId with a transactional id. {@code expectedProducerId}/{@code Epoch} are -1 unless the producer retries with its own (KIP-360). */
    public CompletableFuture<InitResult> initProducerId(String transactionalId, int timeoutMs, long expectedProducerId,
                                                        short expectedEpoch) {
        if (transactionalId.isEmpty()) {
            return CompletableFuture.completedFuture(InitResult.error(Errors.INVALID_REQUEST));
        }
        if (timeoutMs <= 0 || timeoutMs > config.maxTimeoutMs()) {
            log.debug("InitProducerId of {}: timeout {} ms outside 1..{}", transactionalId, timeoutMs,
                    config.maxTimeoutMs());
            return CompletableFuture.completedFuture(InitResult.error(Errors.INVALID_TRANSACTION_TIMEOUT));
        }
        return call(transactionalId, InitResult::error, p -> {
            TransactionMetadata current = p.txns.get(transactionalId);
            if (canBumpEpoch(current)) {
                return bumpEpoch(p, current, timeoutMs, expectedProducerId, expectedEpoch);
            }
            return producerIds.nextProducerId().thenComposeAsync(id -> onOwned(p,
                    () -> initWithNewProducerId(p, transactionalId, timeoutMs, id)), executor);
        });
    }

    private CompletableFuture<InitResult> initWithNewProducerId(TxnPartition p, String transactionalId,
                                                                int timeoutMs, long producerId) {
        TransactionMetadata current = p.txns.get(transactionalId);
        if (canBumpEpoch(current)) {
            // another InitProducerId for the same id created it meanwhile
            return bumpEpoch(p, current, timeoutMs, RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH);
        }
        if (current != null && current.state().isPrepare()) {
            return done(InitResult.error(Errors.CONCURRENT_TRANSACTIONS));
        }
        if (current != null && current.state() == TransactionState.ONGOING) {
            return afterAbort(p, current, "its epoch is exhausted and the producer re-initialised",
                    () -> initWithNewProducerId(p, transactionalId, timeoutMs, producerId));
        }
        long now = time.milliseconds();
        TransactionMetadata fresh = new TransactionMetadata(transactionalId, producerId, (short) 0, timeoutMs,
                TransactionState.EMPTY, Set.of(), -1, now);
        return persist(p, fresh).thenApply(v -> {
            log.info("Transactional id {} now has producer id {} epoch 0", transactionalId, producerId);
            return new InitResult(Errors.NONE, producerId, (short) 0);
        });
    }

    /**
     * Whether InitProducerId keeps the id's producer id and bumps its epoch; otherwise it takes a new producer id:
     * for a new id, an exhausted epoch, or an id whose producer id belongs to a prepared XA branch now (PREPARED_XA,
     * see {@link XaBranches}: the branch is kept, not aborted).
     */
    private static boolean canBumpEpoch(TransactionMetadata current) {
        return current != null && current.producerEpoch() < Short.MAX_VALUE - 2
                && current.state() != TransactionState.PREPARED_XA;
    }

    private CompletableFuture<InitResult> bumpEpoch(TxnPartition p, TransactionMetadata current, int timeoutMs,
                                                    long expectedProducerId, short expectedEpoch) {
        if (current.state().isPrepare()) {
            return done(InitResult.error(Errors.CONCURRENT_TRANSACTIONS));
        }
        if (expectedProducerId != RecordBatch.NO_PRODUCER_ID
                && (expectedProducerId != current.producerId() || expectedEpoch != current.producerEpoch())) {
            return done(InitResult.error(Errors.PRODUCER_FENCED));
        }
        if (current.state() == TransactionState.ONGOING) {
            return afterAbort(p, current, "a new producer initialised with its transactional id",
                    () -> bumpEpoch(p, p.txns.get(current.transactionalId()), timeoutMs, RecordBatch.NO_PRODUCER_ID,
                            RecordBatch.NO_PRODUCER_EPOCH));
        }
        short epoch = (short) (current.producerEpoch() + 1);
        TransactionMetadata next = current.withProducer(current.producerId(), epoch, timeoutMs, time.milliseconds())
                .with(TransactionState.EMPTY, Set.of(), -1, time.milliseconds());
        return persist(p, next).thenApply(v -> {
            log.debug("Transactional id {} (producer {}) bumped to epoch {}", current.transactionalId(),
                    current.producerId(), epoch);
            return new InitResult(Errors.NONE, current.producerId(), epoch);
        });
    }

    /**
     * Aborts the open transaction of {@code ongoing}'s producer, then goes on with {@code next} once the abort is
     * complete; CONCURRENT_TRANSACTIONS while its markers are still being written (they are retried, and the producer
     * retries too).
     */
    private CompletableFuture<InitResult> afterAbort(TxnPartition p, TransactionMetadata ongoing, String reason,
                                                     Supplier<CompletableFuture<InitResult>> next) {
        return abort(p, ongoing, reason).thenComposeAsync(aborted -> onOwned(p, () -> {
            TransactionMetadata now = p.txns.get(ongoing.transactionalId());
            return aborted.state().isPrepare() || !aborted.equals(now)
                    ? done(InitResult.error(Errors.CONCURRENT_TRANSACTIONS)) : next.get();
        }), executor);
    }

    /** AddPartitionsToTxn (and AddOffsetsToTxn with the group's offsets partition). */
    public CompletableFuture<Errors> addPartitions(String transactionalId, long producerId, short epoch,
                                                   Collection<TopicPartition> partitions) {
        return call(transactionalId, e -> e, p -> {
            TransactionMetadata current = p.txns.get(transactionalId);
            Errors error = validate(current, transactionalId, producerId, epoch);
            if (error != Errors.NONE) {
                return done(error);
            }
            if (current.state().isPrepare()) {
                return done(Errors.CONCURRENT_TRANSACTIONS);
            }
            if (current.state() == TransactionState.PREPARED_XA) {
                // its producer id belongs to a prepared XA branch: this producer is done
                return done(Errors.INVALID_TXN_STATE);
            }
            boolean ongoing = current.state() == TransactionState.ONGOING;
            if (ongoing && current.partitions().containsAll(partitions)) {
                // already in the log; answered once that is replicated (a retry after an answer that got lost)
                return replication.awaitLogEnd(p.partition).thenApply(v -> Errors.NONE);
            }
            Set<TopicPartition> all = new HashSet<>(ongoing ? current.partitions() : Set.of());
            all.addAll(partitions);
            long now = time.milliseconds();
            return persist(p, current.with(TransactionState.ONGOING, all, ongoing ? current.txnStartMs() : now, now))
                    .thenApply(v -> Errors.NONE);
        });
    }

    /**
     * TxnAddSharePartition: adds {@code tp} to the Ongoing transaction of {@code transactionalId}, whatever its
     * producer's id and epoch, and answers them (a share-partition leader holding records for the transaction must
     * receive its markers; the client that consumed cannot name the producer's id). An id whose producer is idle
     * (Empty, CompleteCommit, CompleteAbort) begins a transaction with {@code tp} as its first partition: an XA branch
     * that only consumed from queues has queue acknowledgements to prepare and nothing else (its producer sent
     * nothing, so it never began a transaction itself; a producer that sends later joins the same transaction).
     * CONCURRENT_TRANSACTIONS while the id's previous transaction is completing (PrepareCommit/PrepareAbort: its
     * markers are still being written; the holder retries, as a producer's AddPartitionsToTxn does, since a client may
     * hold for its next transaction before its producer sends anything). INVALID_TXN_STATE when the id has no
     * producer, or its transaction is prepared as an XA branch.
     */
    public CompletableFuture<InitResult> addSharePartition(String transactionalId, TopicPartition tp) {
        return call(transactionalId, InitResult::error, p -> {
            TransactionMetadata current = p.txns.get(transactionalId);
            if (current != null && current.state().isPrepare()) {
                return done(InitResult.error(Errors.CONCURRENT_TRANSACTIONS));
            }
            if (current == null || !(current.state() == TransactionState.ONGOING || isIdle(current.state()))) {
                return done(InitResult.error(Errors.INVALID_TXN_STATE));
            }
            InitResult joined = new InitResult(Errors.NONE, current.producerId(), current.producerEpoch());
            boolean ongoing = current.state() == TransactionState.ONGOING;
            if (ongoing && current.partitions().contains(tp)) {
                return replication.awaitLogEnd(p.partition).thenApply(v -> joined);
            }
            Set<TopicPartition> all = new HashSet<>(ongoing ? current.partitions() : Set.of());
            all.add(tp);
            long now = time.milliseconds();
            return persist(p, current.with(TransactionState.ONGOING, all, ongoing ? current.txnStartMs() : now, now))
                    .thenApply(v -> joined);
        });
    }

    private static boolean isIdle(TransactionState state) {
        return state == TransactionState.EMPTY || state == TransactionState.COMPLETE_COMMIT
                || state == TransactionState.COMPLETE_ABORT;
    }

    /**
     * EndTxn: commits or aborts the producer's open transaction; answers after the markers are written. From the
     * producer whose transaction was prepared as an XA branch (PREPARED_XA, same producer id and epoch), a commit
     * commits that branch and leaves the producer free for its next transaction ({@link XaBranches}); an abort is
     * refused (INVALID_TXN_STATE).
     */
    public CompletableFuture<Errors> endTransaction(String transactionalId, long producerId, short epoch,
                                                    boolean commit) {
        return call(transactionalId, e -> e, p -> {
            TransactionMetadata current = p.txns.get(transactionalId);
            Errors error = validate(current, transactionalId, producerId, epoch);
            if (error != Errors.NONE) {
                return done(error);
            }
            TransactionState state = current.state();
            if (state == TransactionState.ONGOING) {
                return endOngoing(p, current, commit, current.producerEpoch()).thenApply(t -> Errors.NONE);
            }
            if (state == (commit ? TransactionState.COMPLETE_COMMIT : TransactionState.COMPLETE_ABORT)) {
                return done(Errors.NONE);
            }
            if (state == (commit ? TransactionState.PREPARE_COMMIT : TransactionState.PREPARE_ABORT)) {
                return done(Errors.CONCURRENT_TRANSACTIONS);
            }
            if (state == TransactionState.PREPARED_XA && commit) {
                // the producer that prepared an XA branch commits it (XaBranches#commitByProducer); its abort is
                // refused below: a closing kafka-clients producer sends one, and a branch is rolled back by Xid only
                return xa.commitByProducer(p, current);
            }
            log.debug("EndTxn({}) of {} refused in state {}", commit ? "commit" : "abort", transactionalId, state);
            return done(Errors.INVALID_TXN_STATE);
        });
    }

    /**
     * XaPrepare ({@link XaPrepare}, {@link XaBranches}): makes the Ongoing transaction of the request's
     * transactional id a prepared XA branch; answers once it is on the in-sync replicas.
     */
    public CompletableFuture<XaPrepare.Response> xaPrepare(XaPrepare.Request request) {
        return call(request.transactionalId(), e -> XaBranches.prepareError(e, XaCodes.XAER_RMFAIL, e.message()),
                p -> xa.prepare(p, request));
    }

    /** XaComplete ({@link XaComplete}, {@link XaBranches}): commits, rolls back or forgets a branch by Xid. */
    public CompletableFuture<XaComplete.Response> xaComplete(XaComplete.Request request) {
        return call(request.transactionalId(), e -> XaBranches.completeAnswer(e, XaCodes.XAER_RMFAIL, e.message()),
                p -> xa.complete(p, request));
    }

    /**
     * XaRecover ({@link XaRecover}): the XA branches of the partitions led and loaded here whose transactional id
     * starts with {@code transactionalIdPrefix} (null: all).
     */
    public XaRecover.Response xaRecover(String transactionalIdPrefix) {
        return xa.recover(transactionalIdPrefix == null || transactionalIdPrefix.isEmpty() ? null
                : transactionalIdPrefix);
    }

    /**
     * Checks a transactional batch for {@code tp}: NONE if the partition is part of the open
     * transaction of this producer id and epoch; PRODUCER_FENCED if the transactional id has moved
     * to a newer epoch (a zombie); INVALID_TXN_STATE otherwise; NOT_COORDINATOR when this broker does not coordinate
     * {@code transactionalId}, COORDINATOR_LOAD_IN_PROGRESS while its partition loads here. The partition's leader
     * asks before it appends a batch that would open a transaction there (Produce, directly when it coordinates the
     * id and with AddPartitionsToTxn {@code verifyOnly} otherwise; see {@code ProduceHandler}), because a batch for a
     * partition the producer did not add, or one that arrives after its transaction's marker, would open a
     * transaction no coordinator closes, holding back the last stable offset for good.
     */
    public Errors verifyTransactionalBatch(String transactionalId, long producerId, short epoch, TopicPartition tp) {
        if (transactionalId == null) {
            return Errors.INVALID_TXN_STATE;
        }
        TxnPartition p = partitions.of(transactionalId);
        if (p == null) {
            return Errors.NOT_COORDINATOR;
        }
        if (!p.isLoaded()) {
            return Errors.COORDINATOR_LOAD_IN_PROGRESS;
        }
        TransactionMetadata current = p.txns.get(transactionalId);
        if (current != null && current.producerId() == producerId && epoch < current.producerEpoch()) {
            return Errors.PRODUCER_FENCED;
        }
        boolean ok = current != null && current.producerId() == producerId && current.producerEpoch() == epoch
                && current.state() == TransactionState.ONGOING && current.partitions().contains(tp);
        return ok ? Errors.NONE : Errors.INVALID_TXN_STATE;
    }

    /**
     * Whether this broker can answer for {@code transactionalId} now: NONE, NOT_COORDINATOR (its partition is led
     * elsewhere), COORDINATOR_LOAD_IN_PROGRESS or COORDINATOR_NOT_AVAILABLE (its partition failed to load).
     */
    public Errors coordinatorError(String transactionalId) {
        return partitions.refusal(partitions.of(transactionalId));
    }

    /** The current state of the given ids coordinated here (absent ones are missing from the map). */
    public Map<String, TransactionMetadata> describe(Collection<String> transactionalIds) {
        return partitions.describe(transactionalIds);
    }

    /** Every transactional id's state, of the partitions led and loaded here. */
    public List<TransactionMetadata> list() {
        return partitions.list();
    }

    /** Whether every partition led here is loaded. */
    public boolean isLoaded() {
        return partitions.allLoaded();
    }

    // ---- internals, on the coordinator thread

    private static Errors validate(TransactionMetadata current, String transactionalId, long producerId, short epoch) {
        if (current == null || current.producerId() != producerId) {
            log.debug("Transactional id {} does not map to producer id {}", transactionalId, producerId);
            return Errors.INVALID_PRODUCER_ID_MAPPING;
        }
        if (current.producerEpoch() != epoch) {
            log.debug("Producer {} of {} sent epoch {}, current is {}: fenced", producerId, transactionalId, epoch,
                    current.producerEpoch());
            return Errors.PRODUCER_FENCED;
        }
        return Errors.NONE;
    }

    /** Aborts an open transaction with a bumped epoch (fencing its producer); completes with the state reached. */
    private CompletableFuture<TransactionMetadata> abort(TxnPartition p, TransactionMetadata ongoing, String reason) {
        log.info("Aborting the transaction of {} (producer {}, epoch {}, {} partitions): {}",
                ongoing.transactionalId(), ongoing.producerId(), ongoing.producerEpoch(),
                ongoing.partitions().size(), reason);
        return endOngoing(p, ongoing, false, (short) (ongoing.producerEpoch() + 1));
    }

    private CompletableFuture<TransactionMetadata> endOngoing(TxnPartition p, TransactionMetadata ongoing,
                                                              boolean commit, short markerEpoch) {
        long now = time.milliseconds();
        TransactionMetadata prepared = ongoing.withProducer(ongoing.producerId(), markerEpoch, ongoing.timeoutMs(), now)
                .with(commit ? TransactionState.PREPARE_COMMIT : TransactionState.PREPARE_ABORT, ongoing.partitions(),
                        ongoing.txnStartMs(), now);
        partitions.append(p, prepared);
        return completeWithMarkers(p, prepared);
    }

    /**
     * Once the Prepare state is on the in-sync replicas, writes the transaction's markers and then its Complete
     * state ({@link MarkerCompletion}). Completes with the Complete state, or with the Prepare state if the markers
     * failed (they are retried every second); fails if the Prepare state did not reach the replicas (retried too while
     * this broker still leads the partition; after a resignation the new leader finishes it).
     */
    private CompletableFuture<TransactionMetadata> completeWithMarkers(TxnPartition p, TransactionMetadata prepared) {
        return completion.complete(p, prepared, prepareDecision);
    }

    /** How a transactional id's PrepareCommit/PrepareAbort is completed. */
    private final class PrepareDecision implements MarkerCompletion.Decision<TransactionMetadata> {
        @Override
        public long producerId(TransactionMetadata decided) {
            return decided.producerId();
        }

        @Override
        public short producerEpoch(TransactionMetadata decided) {
            return decided.producerEpoch();
        }

        @Override
        public boolean isCommit(TransactionMetadata decided) {
            return decided.state() == TransactionState.PREPARE_COMMIT;
        }

        @Override
        public Collection<TopicPartition> partitions(TransactionMetadata decided) {
            return decided.partitions();
        }

        @Override
        public boolean isCurrent(TxnPartition p, TransactionMetadata decided) {
            return partitions.isCurrent(p, decided);
        }

        @Override
        public TransactionMetadata completed(TransactionMetadata decided, long nowMs) {
            return decided.with(isCommit(decided) ? TransactionState.COMPLETE_COMMIT
                    : TransactionState.COMPLETE_ABORT, Set.of(), -1, nowMs);
        }

        @Override
        public void append(TxnPartition p, TransactionMetadata completed) {
            partitions.append(p, completed);
        }

        @Override
        public String describe(TransactionMetadata decided) {
            return "the transaction of " + decided.transactionalId();
        }
    }

    private void abortTimedOut() {
        long now = time.milliseconds();
        for (TxnPartition p : partitions.all()) {
            if (partitions.refusal(p) != Errors.NONE) {
                continue;
            }
            xa.expireCompleted(p, config.xaCompletedRetentionMs());
            for (TransactionMetadata txn : List.copyOf(p.txns.values())) {
                if (txn.state() == TransactionState.ONGOING && now - txn.txnStartMs() > txn.timeoutMs()) {
                    try {
                        abort(p, txn, "it has been open " + (now - txn.txnStartMs())
                                + " ms, longer than its timeout of " + txn.timeoutMs() + " ms")
                                .exceptionally(e -> {
                                    log.warn("Could not abort the timed-out transaction of {}: {}",
                                            txn.transactionalId(), MarkerCompletion.unwrap(e).toString());
                                    return null;
                                });
                    } catch (RuntimeException e) {
                        log.warn("Could not abort the timed-out transaction of {}: {}", txn.transactionalId(),
                                e.toString());
                    }
                }
            }
        }
    }

    private void scheduleAbortScan() {
        scheduleOnCoordinator(config.abortScanIntervalMs(), () -> {
            abortTimedOut();
            scheduleAbortScan();
        });
    }

    private void scheduleOnCoordinator(long delayMs, Runnable action) {
        if (closed) {
            return;
        }
        timer.add(new TimerTask(delayMs) {
            @Override
            public void run() {
                try {
                    executor.execute(action);
                } catch (RejectedExecutionException e) {
                    // shutting down
                }
            }
        });
    }

    /** Writes the new state to the transactional id's partition and makes it current; then waits for the ISR. */
    private CompletableFuture<Void> persist(TxnPartition p, TransactionMetadata txn) {
        partitions.append(p, txn);
        return replication.awaitLogEnd(p.partition);
    }

    /**
     * Runs {@code task} on the coordinator thread for the partition of {@code transactionalId} and answers with what
     * it completes with. The partition must be led and loaded here: otherwise NOT_COORDINATOR or
     * COORDINATOR_LOAD_IN_PROGRESS, answered at once on the calling thread (and checked again on the coordinator
     * thread); losing it on the way is NOT_COORDINATOR; a failed log write or replication wait
     * is COORDINATOR_NOT_AVAILABLE (retriable).
     */
    private <T> CompletableFuture<T> call(String transactionalId, Function<Errors, T> onError,
                                          Function<TxnPartition, CompletableFuture<T>> task) {
        Errors early = partitions.refusal(partitions.of(transactionalId));
        if (early != Errors.NONE) {
            // at once, not behind a load running on the coordinator thread
            return CompletableFuture.completedFuture(onError.apply(early));
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        onCoordinator(result, () -> {
            TxnPartition p = partitions.of(transactionalId);
            Errors refused = partitions.refusal(p);
            if (refused != Errors.NONE) {
                result.complete(onError.apply(refused));
                return;
            }
            CompletableFuture<T> answer;
            try {
                answer = task.apply(p);
            } catch (RuntimeException e) {
                answer = CompletableFuture.failedFuture(e);
            }
            answer.whenComplete((value, error) -> {
                if (error == null) {
                    result.complete(value);
                } else {
                    result.complete(onError.apply(errorFor(error)));
                }
            });
        });
        return result.exceptionally(e -> onError.apply(errorFor(e)));
    }

    /** Runs {@code next} if {@code p} is still led here; otherwise fails with NotCoordinatorException. */
    private <T> CompletableFuture<T> onOwned(TxnPartition p, Supplier<CompletableFuture<T>> next) {
        if (!partitions.isServed(p)) {
            return CompletableFuture.failedFuture(new NotCoordinatorException(p + " moved to another broker"));
        }
        return next.get();
    }

    /** Runs {@code action} on the coordinator thread; fails {@code result} if the coordinator is closed. */
    private void onCoordinator(CompletableFuture<?> result, Runnable action) {
        try {
            executor.execute(() -> {
                try {
                    action.run();
                } catch (RuntimeException e) {
                    result.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) {
            result.completeExceptionally(new CoordinatorNotAvailableException("The transaction coordinator is closed"));
        }
    }

    private static Errors errorFor(Throwable error) {
        Throwable cause = MarkerCompletion.unwrap(error);
        if (cause instanceof NotCoordinatorException || cause instanceof NotLeaderOrFollowerException) {
            return Errors.NOT_COORDINATOR;
        }
        if (!(cause instanceof CoordinatorNotAvailableException) && !(cause instanceof RejectedExecutionException)) {
            log.warn("Transaction coordinator request failed", cause);
        }
        return Errors.COORDINATOR_NOT_AVAILABLE;
    }


    private static <T> CompletableFuture<T> done(T value) {
        return CompletableFuture.completedFuture(value);
    }
}
