package dev.millrace.broker.delay;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.log.AbortedTxn;
import dev.millrace.broker.log.AppendOrigin;
import dev.millrace.broker.log.LogAppendInfo;
import dev.millrace.broker.log.OffsetCheckpointFile;
import dev.millrace.broker.log.PartitionLog;
import dev.millrace.broker.txn.TransactionCoordinator;
import dev.millrace.delay.Time;
import dev.millrace.delay.Timer;
import dev.millrace.delay.TimerTask;
import dev.millrace.protocol.delay.DelayedDelivery;

/**
 * Durable delayed delivery (record format in {@link DelayedDelivery}): producers write records to
 * the internal topic {@value DelayedDelivery#TOPIC}; this service indexes each pending one in memory
 * and, when it is due, appends a copy to its target.
 *
 * <p><b>Delivery rounds.</b> A round delivers everything due at that moment over all delay
 * partitions and all targets, earliest due first, up to {@value #MAX_RECORDS_PER_ROUND} records and
 * {@value #MAX_BYTES_PER_ROUND} bytes ({@link DueDelays}); what is left, and what fell due while the
 * round ran, goes in the next round; a round starts no sooner than {@value #ROUND_INTERVAL_MS} ms
 * after the previous one started unless it is full, so under load a round carries what fell due
 * over that interval instead of each record paying for a transaction of its own (a delivery is
 * never earlier for it, at most that much later). A round is one broker transaction under the
 * service's transactional id {@value #TRANSACTIONAL_ID}:
 * <pre>
 *   AddPartitions(targets of the copies + delay partitions with due records)
 *   append copies         target t: one batch per target partition, header delivered.ms = round start
 *   append marks          delay p:  one batch per delay partition, a mark (done.offset = o) per record
 *   EndTxn(commit)        commit markers on every partition above
 * </pre>
 * The per-round cost (two hops to the transaction coordinator, three {@code __transaction_state}
 * appends, one marker per partition) is paid once per moment rather than once per delay partition
 * and firing, so under load rounds grow instead of queueing. One round failing (a target offline,
 * a failed append) holds back all deliveries until its retry a second later.
 *
 * <p><b>Exactly once.</b> Read-committed consumers see a copy exactly when its mark is committed,
 * since both are in one transaction. After a crash, {@link #start} re-initialises the transactional
 * id, which aborts a round left open (and fences the per-partition ids {@code __millrace-delay-<p>}
 * of older versions), and then rebuilds the pending set from the committed records: delayed records
 * minus those with a committed mark. While running, the service applies a committed round's marks
 * itself and remembers the base offset of each mark batch; the scan skips those batches instead of
 * parsing the service's own marks again. Marks of a round that reported a failure are not
 * remembered: should its commit have gone through anyway, the scan reads them like any record and
 * drops the delivered records from the pending set; the retry scans every partition before it
 * delivers, and while that commit is still being completed the retry's AddPartitions is refused, so
 * nothing is delivered twice.
 *
 * <p><b>Restarts without rereading everything.</b> Every offset below a partition's low-water mark
 * (the smallest pending offset) is delivered; it is checkpointed in {@code <checkpointDir>/<p>} at
 * most once a second and at close, and the delay partition's log start is moved up to it so
 * retention can drop delivered segments. A start reads only from the checkpoint on.
 *
 * <p><b>Timing.</b> Records are read once they are below the partition's last stable offset (a
 * delayed record sent in a transaction waits for its commit); appends coalesce: while a scan of a
 * partition waits in the service's queue, further appends queue none. The service keeps a single
 * task in the broker's timing wheel, a wake-up at the earliest pending due time (or at the end of
 * the pacing interval), moved earlier when a scan finds an earlier record; when it fires the
 * service delivers every record that is due by the broker's clock, never one whose due time has
 * not come, and sets the next wake-up. Pending records keep a copy of their content within
 * {@code delay.cache.bytes}, so a round usually reads nothing.
 *
 * <p>Targets: the header's partition, else murmur2 of the key as Kafka's default partitioner, else
 * round robin. A record whose target topic or partition no longer exists is dropped with a warning
 * (its mark is written so it is not retried).
 *
 * <p>Threading: all state is confined to the service's single thread; {@link #validate} and
 * {@link #onAppend} may be called from any thread.
 */
public final class DelayedDeliveryService implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(DelayedDeliveryService.class);
    private static final int READ_MAX_BYTES = 1 << 20;
    /** The transactional id of the delivery rounds (one for the whole service, see the class javadoc). */
    static final String TRANSACTIONAL_ID = "__millrace-delay";
    /** Before rounds spanned partitions, each delay partition had its own id: {@code __millrace-delay-<p>}. */
    private static final String LEGACY_TRANSACTIONAL_ID_PREFIX = "__millrace-delay-";
    private static final int MAX_RECORDS_PER_ROUND = 2_000;
    private static final long MAX_BYTES_PER_ROUND = 4L << 20;
    /** A round starts at least this long after the previous one started, unless it is full. */
    static final long ROUND_INTERVAL_MS = 5;
    private static final long RETRY_MS = 1_000;
    private static final long CHECKPOINT_INTERVAL_MS = 1_000;

    /**
     * Settings: partitions of the delay topic, the longest delay accepted, the rounds' transaction
     * timeout, where checkpoints go, and how many bytes of pending records' content may be kept in
     * memory (records beyond it are re-read from the log when due).
     */
    public record Config(int partitions, long maxDelayMs, int transactionTimeoutMs, File checkpointDir,
                         long cacheBytes) {
    }

    private final Config config;
    private final DelayLogs logs;
    private final TransactionCoordinator transactions;
    private final Timer timer;
    private final Time time;
    private final ExecutorService executor;
    /** Writes checkpoints (fsync) off the delivery thread, in order. */
    private final ExecutorService checkpointer;
    private final DelayPartition[] partitions;
    private final AtomicInteger roundRobin = new AtomicInteger();
    private long producerId = -1;
    private short epoch = -1;
    /** Set after a failed round until its retry task runs: deliveries wait for it. Service thread only. */
    private boolean backingOff;
    /** When the last round started, on the monotonic clock. Service thread only. */
    private long lastRoundStartNanos = Long.MIN_VALUE / 2;
    /** The one timer task that wakes the service for the next delivery, and when (wall clock). Service thread only. */
    private TimerTask wakeup;
    private long wakeupAtMs = Long.MAX_VALUE;
    /** Bytes of record copies held by pending delays; confined to the service thread. */
    private long cachedBytes;
    private volatile boolean closed;

    public DelayedDeliveryService(Config config, DelayLogs logs, TransactionCoordinator transactions, Timer timer,
                                  Time time) {
        this.config = config;
        this.logs = logs;
        this.transactions = transactions;
        this.timer = timer;
        this.time = time;
        this.executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "millrace-delay-service");
            t.setDaemon(true);
            return t;
        });
        this.checkpointer = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "millrace-delay-checkpointer");
            t.setDaemon(true);
            return t;
        });
        this.partitions = new DelayPartition[config.partitions()];
        for (int p = 0; p < partitions.length; p++) {
            partitions[p] = new DelayPartition(new TopicPartition(DelayedDelivery.TOPIC, p));
        }
    }

    // ---- lifecycle

    /** Aborts rounds left open by a crash, rebuilds the pending delays and schedules them; blocks until done. */
    public void start() throws Exception {
        executor.submit(() -> {
            fenceLegacyRounds();
            initProducer();
            for (DelayPartition p : partitions) {
                p.scanOffset = readCheckpoint(p);
                long from = p.scanOffset;
                scan(p);
                p.lastCheckpointed = p.lowWaterMark();
                log.info("Delay partition {}: {} pending delays rebuilt from offset {} (checkpoint) to {}", p.tp,
                        p.pendingCount(), from, p.scanOffset);
            }
            return null;
        }).get(120, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        closed = true;
        try {
            executor.submit(() -> {
                if (wakeup != null) {
                    wakeup.cancel();
                }
                for (DelayPartition p : partitions) {
                    writeCheckpoint(p);
                }
            }).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            log.warn("Could not checkpoint the delay service at close: {}", e.toString());
        }
        executor.shutdown();
        checkpointer.shutdown();
        try {
            executor.awaitTermination(10, TimeUnit.SECONDS);
            checkpointer.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Pending delays over all partitions (waits for the service thread; for tests and metrics). */
    public int pendingCount() throws Exception {
        return executor.submit(() -> {
            int total = 0;
            for (DelayPartition p : partitions) {
                total += p.pendingCount();
            }
            return total;
        }).get(10, TimeUnit.SECONDS);
    }

    // ---- produce path

    /**
     * Checks a Produce to the delay topic before it is written: every record needs valid delivery
     * headers, an existing non-internal target topic and partition, and a due time no further than
     * the configured maximum ahead.
     *
     * @throws InvalidRecordException naming the record's index in the batch and what is wrong
     */
    public void validate(MemoryRecords records) {
        long now = time.milliseconds();
        int index = 0;
        for (RecordBatch batch : records.batches()) {
            for (Record record : batch) {
                String problem = problem(new RecordHeaders(record.headers()), now);
                if (problem != null) {
                    throw new InvalidRecordException("Record " + index + " of the batch for " + DelayedDelivery.TOPIC
                            + " is refused: " + problem + " (see dev.millrace.protocol.delay.DelayedDelivery)");
                }
                index++;
            }
        }
    }

    private String problem(RecordHeaders headers, long now) {
        DelayedDelivery.Request request;
        try {
            request = DelayedDelivery.parse(headers);
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
        if (request.targetTopic().startsWith("__")) {
            return "target topic '" + request.targetTopic() + "' is internal";
        }
        int count = logs.partitionCount(request.targetTopic());
        if (count < 0) {
            return "target topic '" + request.targetTopic() + "' does not exist";
        }
        if (request.targetPartition() < -1 || request.targetPartition() >= count) {
            return "target partition " + request.targetPartition() + " is outside 0.." + (count - 1) + " of '"
                    + request.targetTopic() + "'";
        }
        if (request.dueMs() - now > config.maxDelayMs()) {
            return "due time " + request.dueMs() + " is " + (request.dueMs() - now) + " ms ahead, more than "
                    + "delay.max.ms=" + config.maxDelayMs();
        }
        return null;
    }

    /** Called after appends and transaction markers: reads what became readable in a delay partition. */
    public void onAppend(TopicPartition tp) {
        if (!tp.topic().equals(DelayedDelivery.TOPIC) || tp.partition() >= partitions.length || closed) {
            return;
        }
        DelayPartition p = partitions[tp.partition()];
        if (p.scanQueued.compareAndSet(false, true)) {
            run(() -> {
                p.scanQueued.set(false);
                scan(p);
            });
        }
    }

    // ---- on the service thread

    private void run(Runnable task) {
        try {
            executor.execute(() -> {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    log.error("Delay service task failed", e);
                }
            });
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    /** (Re)initialises the service's transactional id, which aborts a round left open. */
    private void initProducer() throws Exception {
        TransactionCoordinator.InitResult init = initTransactionalId(TRANSACTIONAL_ID);
        producerId = init.producerId();
        epoch = init.producerEpoch();
    }

    /**
     * Data written before rounds spanned partitions may hold a round left open under a delay
     * partition's own transactional id; re-initialising each id the coordinator knows aborts it now
     * rather than at its timeout (its records stay pending and go out in a new round).
     */
    private void fenceLegacyRounds() throws Exception {
        for (DelayPartition p : partitions) {
            String legacy = LEGACY_TRANSACTIONAL_ID_PREFIX + p.tp.partition();
            if (transactions.describe(List.of(legacy)).containsKey(legacy)) {
                initTransactionalId(legacy);
            }
        }
    }

    /**
     * InitProducerId for {@code transactionalId}. While the coordinator is still writing the markers
     * of an abort it answers CONCURRENT_TRANSACTIONS; the call is repeated for up to
     * {@code transactionTimeoutMs}.
     */
    private TransactionCoordinator.InitResult initTransactionalId(String transactionalId) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.transactionTimeoutMs());
        TransactionCoordinator.InitResult init = transactions.initProducerId(transactionalId,
                config.transactionTimeoutMs(), -1, (short) -1).get(60, TimeUnit.SECONDS);
        while (init.error() == Errors.CONCURRENT_TRANSACTIONS && System.nanoTime() < deadline) {
            TimeUnit.MILLISECONDS.sleep(RETRY_MS / 10);
            init = transactions.initProducerId(transactionalId, config.transactionTimeoutMs(), -1, (short) -1)
                    .get(60, TimeUnit.SECONDS);
        }
        if (init.error() != Errors.NONE) {
            throw init.error().exception("Cannot initialise " + transactionalId + " for the delay service");
        }
        return init;
    }

    /** Reads committed records of the delay partition from its scan offset up to the last stable offset. */
    private void scan(DelayPartition p) {
        PartitionLog partitionLog = logs.log(p.tp).orElse(null);
        if (partitionLog == null) {
            return;
        }
        long firstUnstable = partitionLog.firstUnstableOffset();
        long stable = firstUnstable < 0 ? partitionLog.logEndOffset() : firstUnstable;
        if (p.scanOffset < partitionLog.logStartOffset()) {
            p.scanOffset = partitionLog.logStartOffset();
        }
        if (p.scanOffset >= stable) {
            return;
        }
        List<AbortedTxn> aborted = partitionLog.collectAbortedTransactions(p.scanOffset, stable);
        long next = p.scanOffset;
        while (next < stable) {
            long before = next;
            for (RecordBatch batch : partitionLog.read(next, READ_MAX_BYTES, true, stable).records().batches()) {
                if (batch.lastOffset() < next) {
                    continue;
                }
                boolean skip = batch.isControlBatch() || AbortedTxn.anyCovers(aborted, batch)
                        || batch.producerId() == producerId && p.tryConsumeCommittedMarkBatch(batch.baseOffset());
                if (!skip) {
                    for (Record record : batch) {
                        if (record.offset() >= next) {
                            index(p, record);
                        }
                    }
                }
                next = batch.nextOffset();
            }
            if (next == before) {
                break;
            }
        }
        p.scanOffset = next;
        PendingDelay earliest = p.earliest();
        if (earliest != null) {
            wakeUpAt(earliest.dueMs);
        }
    }

    private static byte[] bytes(ByteBuffer buffer) {
        return buffer == null ? null : Utils.toArray(buffer);
    }

    private void release(PendingDelay pending) {
        if (pending != null && pending.copy != null) {
            cachedBytes -= pending.copy.bytes();
            pending.copy = null;
        }
    }

    private void index(DelayPartition p, Record record) {
        RecordHeaders headers = new RecordHeaders(record.headers());
        if (DelayedDelivery.isDoneMark(headers)) {
            release(p.onDoneMark(DelayedDelivery.doneOffset(headers)));
            return;
        }
        DelayedDelivery.Request request;
        try {
            request = DelayedDelivery.parse(headers);
        } catch (IllegalArgumentException e) {
            log.warn("Ignoring the record at offset {} of {}: {}", record.offset(), p.tp, e.getMessage());
            return;
        }
        PendingDelay pending = new PendingDelay(record.offset(), request.dueMs(), request.targetTopic(),
                request.targetPartition(), record.sizeInBytes());
        if (p.add(pending)) {
            int bytes = record.sizeInBytes() + 64;
            if (cachedBytes + bytes <= config.cacheBytes()) {
                pending.copy = new PendingDelay.Copy(record.timestamp(), bytes(record.key()), bytes(record.value()),
                        deliveredHeadersWithoutTime(record), bytes);
                cachedBytes += bytes;
            }
        }
    }

    /**
     * Makes the service deliver at {@code atMs} (wall clock) unless a wake-up at or before it is
     * already set: one timer task for the whole service, whatever the number of pending delays.
     */
    private void wakeUpAt(long atMs) {
        if (closed || wakeup != null && wakeupAtMs <= atMs) {
            return;
        }
        if (wakeup != null) {
            wakeup.cancel();
        }
        wakeupAtMs = atMs;
        wakeup = new TimerTask(Math.max(0, atMs - time.milliseconds())) {
            @Override
            public void run() {
                TimerTask fired = this;
                DelayedDeliveryService.this.run(() -> onWakeup(fired));
            }
        };
        timer.add(wakeup);
    }

    private void onWakeup(TimerTask fired) {
        if (fired != wakeup) {
            return; // replaced by an earlier wake-up after it had fired
        }
        wakeup = null;
        wakeupAtMs = Long.MAX_VALUE;
        deliverDue();
    }

    /**
     * Delivers every due record of every delay partition, in rounds of at most
     * {@value #MAX_RECORDS_PER_ROUND} records and {@value #MAX_BYTES_PER_ROUND} bytes, until nothing
     * is due; after a failed round, waits for its retry.
     */
    private void deliverDue() {
        while (!closed && !backingOff) {
            Map<DelayPartition, List<PendingDelay>> due = DueDelays.select(partitions, time.milliseconds(),
                    MAX_RECORDS_PER_ROUND, MAX_BYTES_PER_ROUND);
            if (due.isEmpty()) {
                // The timing wheel may fire up to a tick early, and it runs on the monotonic clock while due times
                // are wall-clock times: a wake-up before the earliest due time by the service's clock re-arms.
                PendingDelay earliest = earliestPending();
                if (earliest != null) {
                    wakeUpAt(earliest.dueMs);
                }
                return;
            }
            long sinceLastRoundNanos = time.nanoseconds() - lastRoundStartNanos;
            long intervalNanos = TimeUnit.MILLISECONDS.toNanos(ROUND_INTERVAL_MS);
            if (sinceLastRoundNanos < intervalNanos && !isFull(due)) {
                wakeUpAt(time.milliseconds()
                        + TimeUnit.NANOSECONDS.toMillis(intervalNanos - sinceLastRoundNanos + 999_999));
                return;
            }
            lastRoundStartNanos = time.nanoseconds();
            if (!deliverRound(due)) {
                backingOff = true;
                TimerTask retry = new TimerTask(RETRY_MS) {
                    @Override
                    public void run() {
                        DelayedDeliveryService.this.run(() -> {
                            backingOff = false;
                            for (DelayPartition p : partitions) {
                                scan(p);
                            }
                            deliverDue();
                        });
                    }
                };
                timer.add(retry);
                return;
            }
            for (DelayPartition p : due.keySet()) {
                maybeCheckpoint(p);
            }
        }
    }

    private PendingDelay earliestPending() {
        PendingDelay earliest = null;
        for (DelayPartition p : partitions) {
            PendingDelay e = p.earliest();
            if (e != null && (earliest == null || PendingDelay.BY_DUE.compare(e, earliest) < 0)) {
                earliest = e;
            }
        }
        return earliest;
    }

    private static boolean isFull(Map<DelayPartition, List<PendingDelay>> due) {
        int records = 0;
        for (List<PendingDelay> list : due.values()) {
            records += list.size();
        }
        return records >= MAX_RECORDS_PER_ROUND;
    }

    /**
     * One transaction: the copies of {@code due} to their targets plus, in each delay partition, one
     * batch of delivery marks for its delivered offsets.
     */
    private boolean deliverRound(Map<DelayPartition, List<PendingDelay>> due) {
        Map<TopicPartition, MemoryRecordsBuilder> copies = new LinkedHashMap<>();
        Map<DelayPartition, MemoryRecordsBuilder> marks = new LinkedHashMap<>();
        long now = time.milliseconds();
        int count = 0;
        try {
            for (Map.Entry<DelayPartition, List<PendingDelay>> entry : due.entrySet()) {
                marks.put(entry.getKey(), addCopies(entry.getKey(), entry.getValue(), now, copies));
                count += entry.getValue().size();
            }
            Set<TopicPartition> touched = new LinkedHashSet<>(copies.keySet());
            marks.keySet().forEach(p -> touched.add(p.tp));
            Errors added = transactions.addPartitions(TRANSACTIONAL_ID, producerId, epoch, touched)
                    .get(30, TimeUnit.SECONDS);
            if (added != Errors.NONE) {
                throw added.exception("AddPartitions for " + TRANSACTIONAL_ID);
            }
            for (Map.Entry<TopicPartition, MemoryRecordsBuilder> copy : copies.entrySet()) {
                PartitionLog targetLog = logs.log(copy.getKey()).orElseThrow(() ->
                        new IllegalStateException(copy.getKey() + " went offline"));
                targetLog.appendAsLeader(copy.getValue().build(), logs.leaderEpoch(copy.getKey()),
                        AppendOrigin.COORDINATOR);
            }
            Map<DelayPartition, Long> markBatches = new LinkedHashMap<>();
            for (Map.Entry<DelayPartition, MemoryRecordsBuilder> mark : marks.entrySet()) {
                DelayPartition p = mark.getKey();
                PartitionLog delayLog = logs.log(p.tp).orElseThrow(() ->
                        new IllegalStateException(p.tp + " went offline"));
                LogAppendInfo info = delayLog.appendAsLeader(mark.getValue().build(), logs.leaderEpoch(p.tp),
                        AppendOrigin.COORDINATOR);
                markBatches.put(p, info.firstOffset());
            }
            Errors ended = transactions.endTransaction(TRANSACTIONAL_ID, producerId, epoch, true)
                    .get(30, TimeUnit.SECONDS);
            if (ended != Errors.NONE) {
                throw ended.exception("EndTxn for " + TRANSACTIONAL_ID);
            }
            for (Map.Entry<DelayPartition, List<PendingDelay>> entry : due.entrySet()) {
                entry.getValue().forEach(this::release);
                entry.getKey().onRoundCommitted(entry.getValue(), markBatches.get(entry.getKey()));
            }
            return true;
        } catch (Exception e) {
            // The commit may have gone through although it reported a failure: the records stay pending here, the
            // marks are not in the skip set, and the retry scans first, so it finds them (see the class javadoc).
            log.warn("Delivery round of {} records over {} failed; aborting it and retrying in {} ms: {}", count,
                    due.keySet().stream().map(p -> p.tp).toList(), RETRY_MS, e.toString());
            abortQuietly();
            return false;
        }
    }

    /**
     * Adds the copies of one delay partition's due records to {@code copies} (a record whose content
     * or target is gone is dropped with a warning) and returns the batch of their delivery marks.
     */
    private MemoryRecordsBuilder addCopies(DelayPartition p, List<PendingDelay> due, long now,
                                           Map<TopicPartition, MemoryRecordsBuilder> copies) {
        PartitionLog delayLog = logs.log(p.tp).orElseThrow(() -> new IllegalStateException(p.tp + " is offline"));
        List<PendingDelay> uncached = new ArrayList<>();
        for (PendingDelay pending : due) {
            if (pending.copy == null) {
                uncached.add(pending);
            }
        }
        Map<Long, Record> records = uncached.isEmpty() ? Map.of() : readRecords(delayLog, uncached);
        MemoryRecordsBuilder marks = builder();
        for (PendingDelay pending : due) {
            PendingDelay.Copy copy = pending.copy;
            Record record = copy == null ? records.get(pending.offset) : null;
            if (copy == null && record != null) {
                copy = new PendingDelay.Copy(record.timestamp(), bytes(record.key()), bytes(record.value()),
                        deliveredHeadersWithoutTime(record), 0);
            }
            TopicPartition target = copy == null ? null : target(pending, copy.key());
            if (target == null || logs.log(target).isEmpty()) {
                log.warn("Dropping delayed record at offset {} of {}: {}", pending.offset, p.tp, copy == null
                        ? "it is no longer in the log" : "its target " + pending.targetTopic + "/"
                        + pending.targetPartition + " does not exist on this broker");
            } else {
                copies.computeIfAbsent(target, t -> builder()).append(copy.timestamp(), copy.key(),
                        copy.value(), withDeliveryTime(copy.headers(), now));
            }
            marks.append(now, (byte[]) null, (byte[]) null, new Header[] {
                new RecordHeader(DelayedDelivery.DONE_OFFSET, DelayedDelivery.encodeLong(pending.offset))});
        }
        return marks;
    }

    private void abortQuietly() {
        try {
            Errors aborted = transactions.endTransaction(TRANSACTIONAL_ID, producerId, epoch, false)
                    .get(30, TimeUnit.SECONDS);
            if (aborted == Errors.PRODUCER_FENCED || aborted == Errors.INVALID_PRODUCER_ID_MAPPING) {
                initProducer();
            }
        } catch (Exception e) {
            log.warn("Could not abort the delivery round: {}", e.toString());
        }
    }

    private MemoryRecordsBuilder builder() {
        return MemoryRecords.builder(ByteBuffer.allocate(16 * 1024), RecordBatch.CURRENT_MAGIC_VALUE, Compression.NONE,
                TimestampType.CREATE_TIME, 0L, RecordBatch.NO_TIMESTAMP, producerId, epoch, 0, true,
                RecordBatch.NO_PARTITION_LEADER_EPOCH);
    }

    private static Map<Long, Record> readRecords(PartitionLog delayLog, List<PendingDelay> due) {
        Map<Long, Record> out = new HashMap<>();
        List<PendingDelay> sorted = new ArrayList<>(due);
        sorted.sort(java.util.Comparator.comparingLong(d -> d.offset));
        int i = 0;
        while (i < sorted.size()) {
            long want = sorted.get(i).offset;
            int before = i;
            for (RecordBatch batch : delayLog.read(want, READ_MAX_BYTES, true).records().batches()) {
                for (Record record : batch) {
                    while (i < sorted.size() && sorted.get(i).offset < record.offset()) {
                        i++;
                    }
                    if (i < sorted.size() && sorted.get(i).offset == record.offset()) {
                        out.put(record.offset(), record);
                        i++;
                    }
                }
            }
            if (i == before) {
                i++;
            }
        }
        return out;
    }

    private TopicPartition target(PendingDelay pending, byte[] key) {
        int count = logs.partitionCount(pending.targetTopic);
        if (count <= 0 || pending.targetPartition >= count) {
            return null;
        }
        int partition = pending.targetPartition >= 0 ? pending.targetPartition
                : key != null ? Utils.toPositive(Utils.murmur2(key)) % count
                : Utils.toPositive(roundRobin.getAndIncrement()) % count;
        return new TopicPartition(pending.targetTopic, partition);
    }

    /** The record's headers minus the target headers (the copy's headers, before the delivery time). */
    private static Header[] deliveredHeadersWithoutTime(Record record) {
        List<Header> out = new ArrayList<>();
        for (Header header : record.headers()) {
            String key = header.key();
            if (!key.equals(DelayedDelivery.TARGET_TOPIC) && !key.equals(DelayedDelivery.TARGET_PARTITION)) {
                out.add(new RecordHeader(key, header.value()));
            }
        }
        return out.toArray(new Header[0]);
    }

    private static Header[] withDeliveryTime(Header[] headers, long nowMs) {
        Header[] out = java.util.Arrays.copyOf(headers, headers.length + 1);
        out[headers.length] = new RecordHeader(DelayedDelivery.DELIVERED_MS, DelayedDelivery.encodeLong(nowMs));
        return out;
    }

    // ---- checkpoints

    private long readCheckpoint(DelayPartition p) {
        try {
            OptionalLong offset = new OffsetCheckpointFile(checkpointFile(p)).read();
            return offset.orElse(0L);
        } catch (IOException e) {
            log.warn("Ignoring the delay checkpoint of {}: {}; reading the partition from its start", p.tp,
                    e.getMessage());
            return 0L;
        }
    }

    private void maybeCheckpoint(DelayPartition p) {
        if (time.milliseconds() - p.lastCheckpointMs >= CHECKPOINT_INTERVAL_MS) {
            writeCheckpoint(p);
        }
    }

    /**
     * Checkpoints the partition's low-water mark: the file is written (with fsync) on the
     * checkpointer thread so deliveries never wait for the disk; the delay partition's log start
     * moves up to it only when that frees a whole segment, since moving it also syncs a file.
     */
    private void writeCheckpoint(DelayPartition p) {
        long low = p.lowWaterMark();
        p.lastCheckpointMs = time.milliseconds();
        if (low == p.lastCheckpointed) {
            return;
        }
        p.lastCheckpointed = low;
        File file = checkpointFile(p);
        try {
            checkpointer.execute(() -> {
                try {
                    Files.createDirectories(config.checkpointDir().toPath());
                    new OffsetCheckpointFile(file).write(low);
                    logs.log(p.tp).ifPresent(l -> {
                        boolean freesSegment = l.segmentBaseOffsets().stream()
                                .anyMatch(base -> base > l.logStartOffset() && base <= low);
                        if (freesSegment && low <= l.logEndOffset()) {
                            l.maybeIncrementLogStartOffset(low);
                        }
                    });
                } catch (IOException | RuntimeException e) {
                    log.warn("Could not write the delay checkpoint of {}: {}", p.tp, e.toString());
                }
            });
        } catch (RejectedExecutionException e) {
            log.warn("Delay checkpoint of {} at {} not written: the service is closing", p.tp, low);
        }
    }

    private File checkpointFile(DelayPartition p) {
        return new File(config.checkpointDir(), p.tp.toString());
    }
}
