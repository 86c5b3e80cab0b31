package dev.millrace.broker.txn;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.delay.Time;
import dev.millrace.delay.Timer;
import dev.millrace.delay.TimerTask;

/**
 * The transaction coordinator: owns every transactional id's {@link TransactionMetadata}, keeps it
 * in {@code __transaction_state} ({@link TxnLogRecordSerde}), and drives transactions through the
 * states of {@link TransactionState} with Kafka's semantics (transaction version 1: partitions are
 * added with AddPartitionsToTxn, sequences continue across transactions of one epoch).
 *
 * <ul>
 *   <li>InitProducerId with a transactional id: a new id gets a producer id from
 *       {@link ProducerIdSource} (the quorum's blocks) and epoch 0; a known one gets its epoch bumped, which fences the
 *       previous producer with that id (a zombie). An open transaction of the old producer is first
 *       aborted with a bumped epoch, so the zombie's markers and writes are refused everywhere.</li>
 *   <li>AddPartitionsToTxn / AddOffsetsToTxn put partitions into the transaction (state Ongoing).</li>
 *   <li>EndTxn writes PrepareCommit/PrepareAbort, then the markers to every partition of the
 *       transaction ({@link TxnMarkerWriter}), then CompleteCommit/CompleteAbort, and answers the
 *       client after the markers: once {@code commitTransaction()} returns, read-committed consumers
 *       can see the data. If markers fail, the client still succeeds (the Prepare state is durable)
 *       and the coordinator retries them every second until they are written.</li>
 *   <li>A transaction open longer than its timeout is aborted by the coordinator, with a bumped
 *       epoch (the producer is fenced and must re-initialise), checked every
 *       {@code abortScanIntervalMs}.</li>
 *   <li>At start the state is rebuilt from the log; Prepare states are finished (markers, then
 *       Complete), Ongoing ones stay open until their timeout.</li>
 * </ul>
 *
 * <p>Decisions where Kafka leaves room: producer epochs are not bumped at every commit (that is
 * transaction version 2, not advertised); an epoch that would reach {@code Short.MAX_VALUE} moves
 * the transactional id to a new producer id at InitProducerId. Transactional ids do not expire.
 *
 * <p>Threading: every state change runs on the coordinator's single thread, so the state needs no
 * locks; it is published in a concurrent map for {@link #isPartitionInTransaction} and describes.
 */
public final class TransactionCoordinator implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(TransactionCoordinator.class);
    private static final int READ_MAX_BYTES = 1 << 20;
    private static final long MARKER_RETRY_MS = 1000;

    /** Settings: the largest timeout a producer may ask for, and how often timed-out transactions are aborted. */
    public record Config(int maxTimeoutMs, long abortScanIntervalMs) {
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
    private final TxnMarkerWriter markers;
    private final Time time;
    private final Timer timer;
    private final ExecutorService executor;
    private final Map<String, TransactionMetadata> txns = new ConcurrentHashMap<>();
    private volatile boolean loaded;
    private volatile boolean closed;

    public TransactionCoordinator(Config config, TransactionStateTopic topic, ProducerIdSource producerIds,
                                  TxnMarkerWriter markers, Time time, Timer timer) {
        this.config = config;
        this.topic = topic;
        this.producerIds = producerIds;
        this.markers = markers;
        this.time = time;
        this.timer = timer;
        this.executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "millrace-txn-coordinator");
            t.setDaemon(true);
            return t;
        });
    }

    // ---- lifecycle

    /** Rebuilds the state from the log, finishes Prepare states and starts the timeout scan. */
    public CompletableFuture<Void> load() {
        return CompletableFuture.runAsync(() -> {
            long start = time.hiResClockMs();
            long records = 0;
            for (int p = 0; p < topic.partitionCount(); p++) {
                records += replay(p);
            }
            loaded = true;
            log.info("Loaded {} transactional ids from {} records of {} in {} ms", txns.size(), records,
                    TransactionStateTopic.NAME, time.hiResClockMs() - start);
            for (TransactionMetadata txn : List.copyOf(txns.values())) {
                if (txn.state().isPrepare()) {
                    log.info("Completing transaction of {} (producer {}, epoch {}) found in state {}",
                            txn.transactionalId(), txn.producerId(), txn.producerEpoch(), txn.state());
                    completeWithMarkers(txn);
                }
            }
            scheduleAbortScan();
        }, executor);
    }

    private long replay(int partition) {
        var partitionLog = topic.log(partition);
        long end = partitionLog.logEndOffset();
        long next = partitionLog.logStartOffset();
        long count = 0;
        while (next < end) {
            long before = next;
            for (RecordBatch batch : partitionLog.read(next, READ_MAX_BYTES, true).records().batches()) {
                if (batch.lastOffset() < next) {
                    continue;
                }
                if (!batch.isControlBatch()) {
                    for (var record : batch) {
                        if (record.offset() < next || record.offset() >= end) {
                            continue;
                        }
                        try {
                            String id = TxnLogRecordSerde.deserializeKey(record.key());
                            if (record.hasValue()) {
                                txns.put(id, TxnLogRecordSerde.deserializeValue(id, record.value()));
                            } else {
                                txns.remove(id);
                            }
                            count++;
                        } catch (IllegalArgumentException e) {
                            throw new IllegalStateException("Corrupt record at offset " + record.offset() + " of "
                                    + TransactionStateTopic.NAME + "-" + partition + ": " + e.getMessage(), e);
                        }
                    }
                }
                next = batch.nextOffset();
            }
            if (next == before) {
                break;
            }
        }
        return count;
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
        CompletableFuture<InitResult> result = new CompletableFuture<>();
        call(InitResult::error, () -> {
            TransactionMetadata current = txns.get(transactionalId);
            if (current != null && current.producerEpoch() < Short.MAX_VALUE - 2) {
                return bumpEpoch(current, timeoutMs, expectedProducerId, expectedEpoch);
            }
            producerIds.nextProducerId().whenComplete((id, error) -> {
                if (error != null) {
                    log.warn("No producer id for {}: {}", transactionalId, error.toString());
                    result.complete(InitResult.error(Errors.COORDINATOR_NOT_AVAILABLE));
                } else {
                    call(InitResult::error, () -> initWithNewProducerId(transactionalId, timeoutMs, id))
                            .thenAccept(result::complete);
                }
            });
            return null;
        }).thenAccept(r -> {
            if (r != null) {
                result.complete(r);
            }
        });
        return result;
    }

    private InitResult initWithNewProducerId(String transactionalId, int timeoutMs, long producerId) {
        TransactionMetadata current = txns.get(transactionalId);
        if (current != null && current.producerEpoch() < Short.MAX_VALUE - 2) {
            // another InitProducerId for the same id created it meanwhile
            return bumpEpoch(current, timeoutMs, RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH);
        }
        if (current != null && current.state().isPrepare()) {
            return InitResult.error(Errors.CONCURRENT_TRANSACTIONS);
        }
        if (current != null && current.state() == TransactionState.ONGOING) {
            current = abort(current, "its epoch is exhausted and the producer re-initialised");
            if (current.state().isPrepare()) {
                return InitResult.error(Errors.CONCURRENT_TRANSACTIONS);
            }
        }
        long now = time.milliseconds();
        TransactionMetadata fresh = new TransactionMetadata(transactionalId, producerId, (short) 0, timeoutMs,
                TransactionState.EMPTY, Set.of(), -1, now);
        persist(fresh);
        log.info("Transactional id {} now has producer id {} epoch 0", transactionalId, producerId);
        return new InitResult(Errors.NONE, producerId, (short) 0);
    }

    private InitResult bumpEpoch(TransactionMetadata current, int timeoutMs, long expectedProducerId,
                                 short expectedEpoch) {
        if (current.state().isPrepare()) {
            return InitResult.error(Errors.CONCURRENT_TRANSACTIONS);
        }
        if (expectedProducerId != RecordBatch.NO_PRODUCER_ID
                && (expectedProducerId != current.producerId() || expectedEpoch != current.producerEpoch())) {
            return InitResult.error(Errors.PRODUCER_FENCED);
        }
        if (current.state() == TransactionState.ONGOING) {
            current = abort(current, "a new producer initialised with its transactional id");
            if (current.state().isPrepare()) {
                // the abort markers could not be written yet; they are retried, and the producer retries
                return InitResult.error(Errors.CONCURRENT_TRANSACTIONS);
            }
        }
        short epoch = (short) (current.producerEpoch() + 1);
        TransactionMetadata next = current.withProducer(current.producerId(), epoch, timeoutMs, time.milliseconds())
                .with(TransactionState.EMPTY, Set.of(), -1, time.milliseconds());
        persist(next);
        log.debug("Transactional id {} (producer {}) bumped to epoch {}", current.transactionalId(),
                current.producerId(), epoch);
        return new InitResult(Errors.NONE, current.producerId(), epoch);
    }

    /** AddPartitionsToTxn (and AddOffsetsToTxn with the group's offsets partition). */
    public CompletableFuture<Errors> addPartitions(String transactionalId, long producerId, short epoch,
                                                   Collection<TopicPartition> partitions) {
        return call(e -> e, () -> {
            TransactionMetadata current = txns.get(transactionalId);
            Errors error = validate(current, transactionalId, producerId, epoch);
            if (error != Errors.NONE) {
                return error;
            }
            if (current.state().isPrepare()) {
                return Errors.CONCURRENT_TRANSACTIONS;
            }
            boolean ongoing = current.state() == TransactionState.ONGOING;
            if (ongoing && current.partitions().containsAll(partitions)) {
                return Errors.NONE;
            }
            Set<TopicPartition> all = new HashSet<>(ongoing ? current.partitions() : Set.of());
            all.addAll(partitions);
            long now = time.milliseconds();
            persist(current.with(TransactionState.ONGOING, all, ongoing ? current.txnStartMs() : now, now));
            return Errors.NONE;
        });
    }

    /** EndTxn: commits or aborts the producer's open transaction; answers after the markers are written. */
    public CompletableFuture<Errors> endTransaction(String transactionalId, long producerId, short epoch,
                                                    boolean commit) {
        return call(e -> e, () -> {
            TransactionMetadata current = txns.get(transactionalId);
            Errors error = validate(current, transactionalId, producerId, epoch);
            if (error != Errors.NONE) {
                return error;
            }
            TransactionState state = current.state();
            if (state == TransactionState.ONGOING) {
                endOngoing(current, commit, current.producerEpoch());
                return Errors.NONE;
            }
            if (state == (commit ? TransactionState.COMPLETE_COMMIT : TransactionState.COMPLETE_ABORT)) {
                return Errors.NONE;
            }
            if (state == (commit ? TransactionState.PREPARE_COMMIT : TransactionState.PREPARE_ABORT)) {
                return Errors.CONCURRENT_TRANSACTIONS;
            }
            log.debug("EndTxn({}) of {} refused in state {}", commit ? "commit" : "abort", transactionalId, state);
            return Errors.INVALID_TXN_STATE;
        });
    }

    /**
     * Checks a transactional batch for {@code tp}: NONE if the partition is part of the open
     * transaction of this producer id and epoch; PRODUCER_FENCED if the transactional id has moved
     * to a newer epoch (a zombie); INVALID_TXN_STATE otherwise. Produce refuses batches that fail,
     * because a batch for a partition the producer did not add would open a transaction no
     * coordinator closes, holding back the last stable offset for good.
     */
    public Errors verifyTransactionalBatch(String transactionalId, long producerId, short epoch, TopicPartition tp) {
        TransactionMetadata current = transactionalId == null ? null : txns.get(transactionalId);
        if (current != null && current.producerId() == producerId && epoch < current.producerEpoch()) {
            return Errors.PRODUCER_FENCED;
        }
        boolean ok = current != null && current.producerId() == producerId && current.producerEpoch() == epoch
                && current.state() == TransactionState.ONGOING && current.partitions().contains(tp);
        return ok ? Errors.NONE : Errors.INVALID_TXN_STATE;
    }

    /** The current state of the given ids (absent ones are missing from the map). */
    public Map<String, TransactionMetadata> describe(Collection<String> transactionalIds) {
        Map<String, TransactionMetadata> out = new java.util.LinkedHashMap<>();
        for (String id : transactionalIds) {
            TransactionMetadata txn = txns.get(id);
            if (txn != null) {
                out.put(id, txn);
            }
        }
        return out;
    }

    /** Every transactional id's state. */
    public List<TransactionMetadata> list() {
        return new ArrayList<>(txns.values());
    }

    public boolean isLoaded() {
        return loaded;
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

    /** Aborts an open transaction with a bumped epoch (fencing its producer); returns the completed state. */
    private TransactionMetadata abort(TransactionMetadata ongoing, String reason) {
        log.info("Aborting the transaction of {} (producer {}, epoch {}, {} partitions): {}",
                ongoing.transactionalId(), ongoing.producerId(), ongoing.producerEpoch(),
                ongoing.partitions().size(), reason);
        return endOngoing(ongoing, false, (short) (ongoing.producerEpoch() + 1));
    }

    private TransactionMetadata endOngoing(TransactionMetadata ongoing, boolean commit, short markerEpoch) {
        long now = time.milliseconds();
        TransactionMetadata prepared = ongoing.withProducer(ongoing.producerId(), markerEpoch, ongoing.timeoutMs(), now)
                .with(commit ? TransactionState.PREPARE_COMMIT : TransactionState.PREPARE_ABORT, ongoing.partitions(),
                        ongoing.txnStartMs(), now);
        persist(prepared);
        return completeWithMarkers(prepared);
    }

    /** Writes the markers of a prepared transaction and then its Complete state; retries later on failure. */
    private TransactionMetadata completeWithMarkers(TransactionMetadata prepared) {
        boolean commit = prepared.state() == TransactionState.PREPARE_COMMIT;
        try {
            markers.writeMarkers(prepared.producerId(), prepared.producerEpoch(), commit, prepared.partitions());
        } catch (RuntimeException e) {
            log.warn("Could not write the {} markers of {} (producer {}); retrying in {} ms: {}",
                    commit ? "commit" : "abort", prepared.transactionalId(), prepared.producerId(), MARKER_RETRY_MS,
                    e.toString());
            scheduleOnCoordinator(MARKER_RETRY_MS, () -> {
                TransactionMetadata now = txns.get(prepared.transactionalId());
                if (now != null && now.equals(prepared)) {
                    completeWithMarkers(prepared);
                }
            });
            return prepared;
        }
        long now = time.milliseconds();
        TransactionMetadata complete = prepared.with(commit ? TransactionState.COMPLETE_COMMIT
                : TransactionState.COMPLETE_ABORT, Set.of(), -1, now);
        persist(complete);
        return complete;
    }

    private void abortTimedOut() {
        long now = time.milliseconds();
        for (TransactionMetadata txn : List.copyOf(txns.values())) {
            if (txn.state() == TransactionState.ONGOING && now - txn.txnStartMs() > txn.timeoutMs()) {
                try {
                    abort(txn, "it has been open " + (now - txn.txnStartMs()) + " ms, longer than its timeout of "
                            + txn.timeoutMs() + " ms");
                } catch (RuntimeException e) {
                    log.warn("Could not abort the timed-out transaction of {}: {}", txn.transactionalId(), e.toString());
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

    /** Writes the new state to the transactional id's partition, then makes it current. */
    private void persist(TransactionMetadata txn) {
        int partition = topic.partitionFor(txn.transactionalId());
        byte[] key = TxnLogRecordSerde.serializeKey(txn.transactionalId());
        byte[] value = TxnLogRecordSerde.serializeValue(txn);
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(key.length + value.length + 128),
                Compression.NONE, TimestampType.CREATE_TIME, 0L);
        builder.append(time.milliseconds(), key, value);
        topic.log(partition).appendAsLeader(builder.build(), topic.leaderEpoch(partition));
        txns.put(txn.transactionalId(), txn);
    }

    /**
     * Runs {@code task} on the coordinator thread. Before the state is loaded the answer is
     * COORDINATOR_LOAD_IN_PROGRESS; a failed log write is COORDINATOR_NOT_AVAILABLE (retriable).
     */
    private <T> CompletableFuture<T> call(java.util.function.Function<Errors, T> onError, Supplier<T> task) {
        CompletableFuture<T> result = new CompletableFuture<>();
        try {
            executor.execute(() -> {
                if (!loaded) {
                    result.complete(onError.apply(Errors.COORDINATOR_LOAD_IN_PROGRESS));
                    return;
                }
                try {
                    result.complete(task.get());
                } catch (RuntimeException e) {
                    log.warn("Transaction coordinator request failed", e);
                    result.complete(onError.apply(Errors.COORDINATOR_NOT_AVAILABLE));
                }
            });
        } catch (RejectedExecutionException e) {
            result.complete(onError.apply(Errors.COORDINATOR_NOT_AVAILABLE));
        }
        return result;
    }
}
