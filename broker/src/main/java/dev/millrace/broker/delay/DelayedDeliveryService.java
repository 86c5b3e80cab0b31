package dev.millrace.broker.delay;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.millrace.broker.coordinator.CoordinatorElection;
import dev.millrace.broker.log.AbortedTxn;
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
 * <p><b>Leadership.</b> The service serves the delay partitions this broker leads
 * ({@link CoordinatorElection}): {@link #onElected} loads a partition's pending set (from its
 * checkpoint and the committed records after it) and delivers it from then on; {@link #onResigned}
 * takes it out of every later round at once and drops its state. On one node every partition is
 * elected when the listener is registered.
 *
 * <p><b>Delivery rounds.</b> A round delivers everything due at that moment over all delay
 * partitions served here and all targets, earliest due first, up to {@value #MAX_RECORDS_PER_ROUND}
 * records and {@value #MAX_BYTES_PER_ROUND} bytes ({@link DueDelays}); what is left, and what fell
 * due while the round ran, goes in the next round; a round starts no sooner than
 * {@value #ROUND_INTERVAL_MS} ms after the previous one started unless it is full, so under load a
 * round carries what fell due over that interval instead of each record paying for a transaction of
 * its own (a delivery is never earlier for it, at most that much later). A round is one transaction
 * under the {@link RoundWriter}'s transactional id, one per broker: copies to the targets (one batch
 * per target partition, header delivered.ms = round start) and, in each delay partition, a batch of
 * delivery marks (done.offset = o per record), committed together. One per broker rather than one
 * per delay partition, so the per-round cost (the coordinator's hops and {@code __transaction_state}
 * appends, a marker per partition) is paid once per moment whatever the number of partitions. One
 * round failing (a target offline, a failed append) holds back all deliveries until its retry a
 * second later.
 *
 * <p><b>Exactly once, and fencing across a change of leader.</b> Read-committed consumers see a
 * copy exactly when its mark is committed, since both are in one transaction. Because the
 * transactional id belongs to the broker, not to the partition, a new leader cannot fence the old
 * one by re-initialising it; fencing rests on the delay partition instead:
 * <ol>
 *   <li>only the partition's leader appends marks to it: the {@link LocalRoundWriter} appends with
 *       the leader epoch (refused once it is stale), and a Produce of marks is refused unless it
 *       comes under the transactional id of the broker that receives it, i.e. the leader
 *       ({@link #validate}); a produce to a former leader cannot be acknowledged ({@code acks=all}),
 *       its followers fetch from the new leader. So once a broker is elected, no round of another
 *       broker can add marks to the partition, and a round whose marks cannot be written aborts;</li>
 *   <li>a round of another broker whose marks are already in the partition is still open or
 *       decided: before a round carries a partition, the service checks that no open transaction in
 *       it has a mark batch from another producer (a round of the former leader) and otherwise
 *       leaves the partition out until that transaction is decided (its broker commits or aborts
 *       it, the other brokers abort it once its broker is fenced, or its coordinator aborts it when
 *       it times out), then reads the partition up to its last stable offset, marks of that round
 *       included, before delivering from it.</li>
 * </ol>
 * So every delayed record whose mark some round committed is out of the pending set before a round
 * could deliver it again; a round also checks, just before its commit, that the broker still leads
 * each delay partition it carries, and aborts otherwise. After a crash, the writer's first
 * initialisation completes or aborts a round of this broker left open, and then the pending set is
 * rebuilt from the committed records: delayed records minus those with a committed mark. While
 * running, the service applies a committed round's marks itself and remembers the base offset of
 * each mark batch; the scan skips those batches instead of parsing the service's own marks again.
 * Marks of a round that reported a failure are not remembered: should its commit have gone through
 * anyway, the scan reads them like any record and drops the delivered records from the pending set;
 * the retry re-initialises the writer when needed and scans every partition before it delivers.
 *
 * <p><b>What survives a failover.</b> Everything: the pending set is rebuilt from the replicated
 * partition. The in-memory copies of pending records and the skip set of own mark batches are not
 * kept (a new leader reads the records again). A delivery is late by at most the time until the new
 * leader is elected and has loaded the partition, plus, if the old leader died in the middle of a
 * round, until that round is aborted: its open transaction holds back the delay partitions it marked
 * and the targets it wrote (read-committed consumers stop at it). In a cluster the other brokers abort
 * it as soon as the dead broker is fenced ({@link DeadBrokerRounds}), which is also when its
 * partitions move; failing that, the coordinator aborts it once past the writer's transaction
 * timeout (found by its periodic scan), or the old broker's restart does.
 *
 * <p><b>Restarts without rereading everything.</b> Every offset below a partition's low-water mark
 * (the smallest pending offset) is delivered; it is checkpointed in {@code <checkpointDir>/<p>} at
 * most once a second, at close and when leadership ends, and the delay partition's log start is
 * moved up to it while it is led here, so retention can drop delivered segments. A load reads only
 * from the checkpoint on (a checkpoint written under an older leadership is still a true bound: the
 * records below it stay delivered).
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
 * <p>Threading: all state is confined to the service's single thread; {@link #validate},
 * {@link #onAppend} and the election events may be called from any thread. The writer's transactional id is
 * initialised on a thread of its own, which can wait as long as the transaction coordinator is away (a broker just
 * killed): meanwhile the service thread takes elections and resignations and reads appends, and deliveries wait.
 */
public final class DelayedDeliveryService implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(DelayedDeliveryService.class);
    private static final int READ_MAX_BYTES = 1 << 20;
    /** The transactional id of a single node's delivery rounds (see the class javadoc). */
    public static final String TRANSACTIONAL_ID = "__millrace-delay";
    /** Before rounds spanned partitions, each delay partition had its own id: {@code __millrace-delay-<p>}. */
    private static final String LEGACY_TRANSACTIONAL_ID_PREFIX = "__millrace-delay-";
    private static final int MAX_RECORDS_PER_ROUND = 2_000;
    private static final long MAX_BYTES_PER_ROUND = 4L << 20;
    /** A round starts at least this long after the previous one started, unless it is full. */
    static final long ROUND_INTERVAL_MS = 5;
    private static final long RETRY_MS = 1_000;
    /** How often a partition held back by another broker's open round is looked at again. */
    static final long BLOCKED_RECHECK_MS = 100;
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
    private final RoundWriter writer;
    private final Timer timer;
    private final Time time;
    private final ExecutorService executor;
    /** Writes checkpoints (fsync) off the delivery thread, in order. */
    private final ExecutorService checkpointer;
    /**
     * Initialises the writer's transactional id off the service's thread: that waits for the transaction coordinator,
     * which may be on a broker that just died, and the service must go on taking leadership changes meanwhile.
     */
    private final ExecutorService initialiser;
    /** Set while the initialiser works for the service; deliveries wait for it. Service thread only. */
    private boolean initialising;
    private final DelayPartition[] partitions;
    private final AtomicInteger roundRobin = new AtomicInteger();
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

    /** A single node's service: rounds through the local transaction coordinator under {@value #TRANSACTIONAL_ID}. */
    public DelayedDeliveryService(Config config, DelayLogs logs, TransactionCoordinator transactions, Timer timer,
                                  Time time) {
        this(config, logs, new LocalRoundWriter(transactions, logs, TRANSACTIONAL_ID, config.transactionTimeoutMs(),
                legacyIds(config.partitions())), timer, time);
    }

    public DelayedDeliveryService(Config config, DelayLogs logs, RoundWriter writer, Timer timer, Time time) {
        this.config = config;
        this.logs = logs;
        this.writer = writer;
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
        this.initialiser = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "millrace-delay-writer-init");
            t.setDaemon(true);
            return t;
        });
        this.partitions = new DelayPartition[config.partitions()];
        for (int p = 0; p < partitions.length; p++) {
            partitions[p] = new DelayPartition(new TopicPartition(DelayedDelivery.TOPIC, p));
        }
    }

    private static List<String> legacyIds(int partitions) {
        List<String> ids = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            ids.add(LEGACY_TRANSACTIONAL_ID_PREFIX + p);
        }
        return ids;
    }

    // ---- lifecycle

    /**
     * Initialises the writer's transactional id, which completes or aborts a round left open by a
     * crash; blocks until done. Optional: rounds initialise it on demand (in a cluster, where the
     * transaction coordinator may not be reachable yet, the broker does not call this).
     */
    public void start() throws Exception {
        executor.submit(() -> {
            writer.ensureReady();
            return null;
        }).get(120, TimeUnit.SECONDS);
    }

    /**
     * This broker now leads delay partition {@code partition}: its pending set is loaded from its
     * checkpoint and the committed records after it, on the service thread, and delivered from then on.
     */
    public void onElected(int partition, int leaderEpoch) {
        if (partition < 0 || partition >= partitions.length) {
            log.warn("Ignoring the election for {}-{}: the service knows {} partitions", DelayedDelivery.TOPIC,
                    partition, partitions.length);
            return;
        }
        DelayPartition p = partitions[partition];
        p.electedEpoch.set(leaderEpoch);
        run(() -> load(p, leaderEpoch));
    }

    /**
     * This broker no longer leads delay partition {@code partition}: no round started from now on
     * carries it, a round in flight that carries it aborts instead of committing, and its state is
     * dropped (after a last checkpoint of its low-water mark) on the service thread.
     */
    public void onResigned(int partition, int leaderEpoch) {
        if (partition < 0 || partition >= partitions.length) {
            return;
        }
        DelayPartition p = partitions[partition];
        p.electedEpoch.compareAndSet(leaderEpoch, -1);
        run(() -> unload(p, leaderEpoch));
    }

    /** The election listener to register for the delay topic. */
    public CoordinatorElection election() {
        return new CoordinatorElection() {
            @Override
            public void onElected(int partition, int leaderEpoch) {
                DelayedDeliveryService.this.onElected(partition, leaderEpoch);
            }

            @Override
            public void onResigned(int partition, int leaderEpoch) {
                DelayedDeliveryService.this.onResigned(partition, leaderEpoch);
            }
        };
    }

    private void load(DelayPartition p, int leaderEpoch) {
        if (closed || p.electedEpoch.get() != leaderEpoch) {
            return; // resigned (or elected again) before the load ran: a later task handles it
        }
        releaseAll(p);
        p.clear();
        p.loadedEpoch = leaderEpoch;
        p.scanOffset = readCheckpoint(p);
        long from = p.scanOffset;
        scan(p);
        p.lastCheckpointed = p.lowWaterMark();
        p.lastCheckpointMs = time.milliseconds();
        log.info("Delay partition {} (leader epoch {}): {} pending delays loaded from offset {} (checkpoint) to {}",
                p.tp, leaderEpoch, p.pendingCount(), from, p.scanOffset);
        deliverDue();
    }

    private void unload(DelayPartition p, int leaderEpoch) {
        if (p.loadedEpoch != leaderEpoch) {
            return;
        }
        writeCheckpoint(p);
        int pending = p.pendingCount();
        releaseAll(p);
        p.clear();
        log.info("Delay partition {}: leader epoch {} ended here; {} pending delays dropped", p.tp, leaderEpoch,
                pending);
    }

    private void releaseAll(DelayPartition p) {
        for (PendingDelay pending : p.all()) {
            release(pending);
        }
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
                    if (p.loadedEpoch >= 0) {
                        writeCheckpoint(p);
                    }
                }
            }).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            log.warn("Could not checkpoint the delay service at close: {}", e.toString());
        }
        executor.shutdown();
        checkpointer.shutdown();
        initialiser.shutdownNow(); // an initialisation waiting for the coordinator is interrupted
        try {
            executor.awaitTermination(10, TimeUnit.SECONDS);
            checkpointer.awaitTermination(10, TimeUnit.SECONDS);
            initialiser.awaitTermination(10, TimeUnit.SECONDS); // before the writer closes what it may have opened
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        writer.close();
    }

    /** Pending delays over the partitions served here (waits for the service thread; for tests and metrics). */
    public int pendingCount() throws Exception {
        return executor.submit(() -> {
            int total = 0;
            for (DelayPartition p : partitions) {
                if (p.loadedEpoch >= 0) {
                    total += p.pendingCount();
                }
            }
            return total;
        }).get(10, TimeUnit.SECONDS);
    }

    // ---- produce path

    /**
     * Checks a Produce to the delay topic before it is written: every record needs valid delivery
     * headers, an existing non-internal target topic and partition, and a due time no further than
     * the configured maximum ahead; delivery marks are accepted only in a transaction under this
     * broker's round writer's transactional id (the fence of the class javadoc: only the leader's
     * rounds mark a partition).
     *
     * @param transactionalId the Produce's transactional id, or null
     * @throws InvalidRecordException naming the record's index in the batch and what is wrong
     */
    public void validate(String transactionalId, MemoryRecords records) {
        long now = time.milliseconds();
        int index = 0;
        for (RecordBatch batch : records.batches()) {
            for (Record record : batch) {
                RecordHeaders headers = new RecordHeaders(record.headers());
                String problem = DelayedDelivery.isDoneMark(headers)
                        ? markProblem(transactionalId, batch) : problem(headers, now);
                if (problem != null) {
                    throw new InvalidRecordException("Record " + index + " of the batch for " + DelayedDelivery.TOPIC
                            + " is refused: " + problem + " (see dev.millrace.protocol.delay.DelayedDelivery)");
                }
                index++;
            }
        }
    }

    private String markProblem(String transactionalId, RecordBatch batch) {
        if (batch.isTransactional() && writer.transactionalId().equals(transactionalId)) {
            return null;
        }
        return "it is a delivery mark (header " + DelayedDelivery.DONE_OFFSET + "), which only the delay service of "
                + "the partition's leader writes (transactional id " + writer.transactionalId() + "), not "
                + (transactionalId == null ? "a producer without a transactional id" : "'" + transactionalId + "'");
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
        if (p.electedEpoch.get() >= 0 && p.scanQueued.compareAndSet(false, true)) {
            run(() -> {
                p.scanQueued.set(false);
                if (p.serving()) {
                    scan(p);
                }
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
                        || batch.producerId() == writer.producerId()
                        && p.tryConsumeCommittedMarkBatch(batch.baseOffset());
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
     * Delivers every due record of the delay partitions served here, in rounds of at most
     * {@value #MAX_RECORDS_PER_ROUND} records and {@value #MAX_BYTES_PER_ROUND} bytes, until nothing
     * is due; after a failed round, waits for its retry. A partition in which another broker's round
     * is open waits for it (see the class javadoc) and is looked at again every
     * {@value #BLOCKED_RECHECK_MS} ms.
     */
    private void deliverDue() {
        while (!closed && !backingOff) {
            long now = time.milliseconds();
            if (anyDue(now) && !writerReady()) {
                return;
            }
            List<DelayPartition> ready = new ArrayList<>();
            boolean anyBlocked = false;
            for (DelayPartition p : partitions) {
                if (!p.serving()) {
                    continue;
                }
                PendingDelay earliest = p.earliest();
                if (earliest == null || earliest.dueMs > now) {
                    ready.add(p);
                    continue;
                }
                if (anotherRoundOpen(p)) {
                    if (p.blockedSinceMs < 0) {
                        p.blockedSinceMs = now;
                        log.info("Delay partition {}: another broker's delivery round is open in it; delivering from "
                                + "it once that round is decided", p.tp);
                    }
                    anyBlocked = true;
                    continue;
                }
                if (p.blockedSinceMs >= 0) {
                    log.info("Delay partition {}: the other broker's round was decided after {} ms", p.tp,
                            now - p.blockedSinceMs);
                    p.blockedSinceMs = -1;
                }
                scan(p); // after the check: reads the marks of every round decided before it
                ready.add(p);
            }
            Map<DelayPartition, List<PendingDelay>> due = DueDelays.select(ready.toArray(new DelayPartition[0]),
                    now, MAX_RECORDS_PER_ROUND, MAX_BYTES_PER_ROUND);
            if (due.isEmpty()) {
                // The timing wheel may fire up to a tick early, and it runs on the monotonic clock while due times
                // are wall-clock times: a wake-up before the earliest due time by the service's clock re-arms.
                PendingDelay earliest = earliestPending(ready);
                if (earliest != null) {
                    wakeUpAt(earliest.dueMs);
                }
                if (anyBlocked) {
                    wakeUpAt(now + BLOCKED_RECHECK_MS);
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
                backOff();
                return;
            }
            for (DelayPartition p : due.keySet()) {
                maybeCheckpoint(p);
            }
        }
    }

    private boolean anyDue(long now) {
        for (DelayPartition p : partitions) {
            PendingDelay earliest = p.serving() ? p.earliest() : null;
            if (earliest != null && earliest.dueMs <= now) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether the writer is ready for a round; if not, starts its initialisation on the initialiser thread (its first
     * one decides a round of this broker left open, which would otherwise hold back the partitions it marked) and
     * answers false: deliveries go on when it is done ({@link #onInitialised}). The service thread never waits for
     * the transaction coordinator here, so resignations and elections are taken at once while it is away.
     */
    private boolean writerReady() {
        if (writer.ready()) {
            return true;
        }
        if (!initialising) {
            initialising = true;
            long startNanos = time.nanoseconds();
            try {
                initialiser.execute(() -> {
                    Exception failure = null;
                    try {
                        writer.ensureReady();
                    } catch (Exception e) {
                        failure = e;
                    }
                    Exception outcome = failure;
                    run(() -> onInitialised(outcome, startNanos));
                });
            } catch (RejectedExecutionException e) {
                initialising = false; // closing
            }
        }
        return false;
    }

    /** The initialiser is done: delivers what is due, or backs off after a failure. Service thread. */
    private void onInitialised(Exception failure, long startNanos) {
        initialising = false;
        long tookMs = TimeUnit.NANOSECONDS.toMillis(time.nanoseconds() - startNanos);
        if (failure != null) {
            log.warn("The delay service could not initialise its transactional id {} in {} ms; retrying in {} ms: {}",
                    writer.transactionalId(), tookMs, RETRY_MS, failure.toString());
            backOff();
            return;
        }
        if (tookMs >= 1_000) {
            log.info("The delay service initialised its transactional id {} in {} ms", writer.transactionalId(),
                    tookMs);
        }
        deliverDue();
    }

    /** Holds deliveries back for {@value #RETRY_MS} ms, then re-reads every served partition and delivers. */
    private void backOff() {
        backingOff = true;
        TimerTask retry = new TimerTask(RETRY_MS) {
            @Override
            public void run() {
                DelayedDeliveryService.this.run(() -> {
                    backingOff = false;
                    for (DelayPartition p : partitions) {
                        if (p.serving()) {
                            scan(p);
                        }
                    }
                    deliverDue();
                });
            }
        };
        timer.add(retry);
    }

    /**
     * Whether an open transaction in {@code p} holds delivery marks of a producer other than this
     * broker's round writer: a round of a former leader, not decided yet.
     */
    private boolean anotherRoundOpen(DelayPartition p) {
        PartitionLog partitionLog = logs.log(p.tp).orElse(null);
        if (partitionLog == null) {
            return true;
        }
        long own = writer.producerId();
        for (Map.Entry<Long, Long> open : partitionLog.openTransactions().entrySet()) {
            if (open.getValue() == own) {
                continue;
            }
            for (RecordBatch batch : partitionLog.read(open.getKey(), 1, true).records().batches()) {
                for (Record record : batch) {
                    if (DelayedDelivery.isDoneMark(new RecordHeaders(record.headers()))) {
                        return true;
                    }
                    break;
                }
                break;
            }
        }
        return false;
    }

    private static PendingDelay earliestPending(List<DelayPartition> among) {
        PendingDelay earliest = null;
        for (DelayPartition p : among) {
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
        long now = time.milliseconds();
        int count = 0;
        try {
            DeliveryRound round = new DeliveryRound(now, () -> due.keySet().stream().allMatch(DelayPartition::serving));
            for (Map.Entry<DelayPartition, List<PendingDelay>> entry : due.entrySet()) {
                addCopies(entry.getKey(), entry.getValue(), round);
                count += entry.getValue().size();
            }
            Map<TopicPartition, Long> markBatches = writer.write(round);
            for (Map.Entry<DelayPartition, List<PendingDelay>> entry : due.entrySet()) {
                entry.getValue().forEach(this::release);
                Long markBatch = markBatches.get(entry.getKey().tp);
                entry.getKey().onRoundCommitted(entry.getValue(), markBatch == null ? -1 : markBatch);
            }
            return true;
        } catch (Exception e) {
            // The commit may have gone through although it reported a failure: the records stay pending here, the
            // marks are not in the skip set, and the retry scans first, so it finds them (see the class javadoc).
            log.warn("Delivery round of {} records over {} failed; retrying in {} ms: {}", count,
                    due.keySet().stream().map(p -> p.tp).toList(), RETRY_MS, e.toString());
            return false;
        }
    }

    /**
     * Adds the copies of one delay partition's due records and their delivery marks to {@code round}
     * (a record whose content or target is gone is dropped with a warning, and marked).
     */
    private void addCopies(DelayPartition p, List<PendingDelay> due, DeliveryRound round) {
        PartitionLog delayLog = logs.log(p.tp).orElseThrow(() -> new IllegalStateException(p.tp + " is offline"));
        List<PendingDelay> uncached = new ArrayList<>();
        for (PendingDelay pending : due) {
            if (pending.copy == null) {
                uncached.add(pending);
            }
        }
        Map<Long, Record> records = uncached.isEmpty() ? Map.of() : readRecords(delayLog, uncached);
        for (PendingDelay pending : due) {
            PendingDelay.Copy copy = pending.copy;
            Record record = copy == null ? records.get(pending.offset) : null;
            if (copy == null && record != null) {
                copy = new PendingDelay.Copy(record.timestamp(), bytes(record.key()), bytes(record.value()),
                        deliveredHeadersWithoutTime(record), 0);
            }
            TopicPartition target = copy == null ? null : target(pending, copy.key());
            if (target == null) {
                log.warn("Dropping delayed record at offset {} of {}: {}", pending.offset, p.tp, copy == null
                        ? "it is no longer in the log" : "its target " + pending.targetTopic + "/"
                        + pending.targetPartition + " does not exist");
            } else {
                round.addCopy(target, new DeliveryRound.Copy(copy.timestamp(), copy.key(), copy.value(),
                        withDeliveryTime(copy.headers(), round.nowMs())));
            }
            round.addMark(p.tp, pending.offset);
        }
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
                    logs.log(p.tp).filter(l -> p.electedEpoch.get() >= 0).ifPresent(l -> {
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
