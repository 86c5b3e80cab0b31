package dev.millrace.broker.log;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.ClosedChannelException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.BiPredicate;

import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.FileRecords.TimestampAndOffset;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The log of one partition: an ordered run of {@link LogSegment}s in one directory (layout in
 * {@link LogFiles}), from the log start offset to the log end offset.
 *
 * <pre>
 *   logStartOffset                                     recoveryPoint        logEndOffset
 *        v                                                  v                    v
 *   [seg 0 ......][seg 4096 ......][seg 8192 ......][seg 12288 (active) ........]
 *    deleted by retention from      fsynced below the recovery point; appends go to the
 *    the left, whole segments       active segment, which rolls by size, age or full index
 * </pre>
 *
 * <p>Appends: {@link #appendAsLeader} validates the batches, gives them the next offsets and
 * writes them; {@link #appendAsFollower} keeps the offsets the batches carry. A rejected append
 * leaves the log unchanged. When {@code flush.messages} says so, the appender waits for an fsync
 * shared with concurrent appenders ({@link GroupCommit}).
 *
 * <p>Idempotent producers: batches with a producer id are checked against the
 * {@link ProducerStateManager} (epoch fencing, sequence order, duplicates of the last 5 batches)
 * before anything is written, and applied to it after. Its snapshots are taken when a segment
 * rolls and at clean close; at open the newest valid one is loaded and the batches after it are
 * replayed from the log. Appends without a producer id never touch the producer state.
 *
 * <p>Leader epochs: a {@link LeaderEpochCache} (checkpoint {@code leader-epoch-checkpoint}) records
 * the first offset of each leader epoch. {@link #appendAsLeader} assigns its epoch at the append's
 * first offset, {@link #appendAsFollower} each batch's {@code partitionLeaderEpoch} at its base offset,
 * both before the records are written; a new leader records its epoch at once with
 * {@link #assignLeaderEpochAtLogEnd}. Replication asks {@link #endOffsetForEpoch} where an epoch
 * ends, and cuts a diverged follower with {@link #truncateTo} (or empties it with
 * {@link #truncateFullyAndStartAt}); the cache, indexes, recovery point, producer state and
 * transactions follow the cut.
 *
 * <p>Reads return a file-backed slice bounded by the published log end, so they never see a
 * half-written batch, and may run on any thread concurrently with the appender. A read that races a
 * truncation is run again (or waits for the truncation to finish; {@link TruncationGuard}), so it
 * answers from the log before or after the cut, never a mix, and may return fewer records than it
 * would have.
 *
 * <p>Threading: appends, rolls, retention, truncation, segment replacement and close serialize on one
 * lock; reads take no lock. A segment removed from the log is renamed {@code .deleted} and closed only
 * after {@code file.delete.delay.ms} ({@link SegmentDeleter}), so a read that already holds it finishes.
 * An I/O error while writing takes the log offline: every later call throws {@link KafkaStorageException}.
 */
public final class PartitionLog implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(PartitionLog.class);

    private final File dir;
    private final Time time;
    private final Object lock = new Object();
    /** Orders checkpoint writes: taken by {@link #checkpoint()} (maintenance thread) and by truncations. */
    private final Object checkpointLock = new Object();
    private final ConcurrentSkipListMap<Long, LogSegment> segments;
    private final GroupCommit groupCommit;
    private final OffsetCheckpointFile recoveryPointCheckpoint;
    private final OffsetCheckpointFile logStartOffsetCheckpoint;
    private final SegmentDeleter deleter;
    private final ProducerStateManager producerState;
    private final LeaderEpochCache epochCache;
    private volatile LogConfig config;
    private volatile LogOffsetMetadata logEnd;
    private volatile long logStartOffset;
    private volatile long lastFlushMs;
    private volatile boolean closed;
    /** Set when {@link #close()} begins, before it flushes and closes the files. */
    private volatile boolean closing;
    /** First offset of the oldest open transaction, or -1; published after each append under the lock. */
    private volatile long firstUnstableOffset = -1;
    private volatile Throwable offlineCause;
    /** See {@link #producerStateReplayedFrom()}; set once by {@link #open}. */
    private long producerStateReplayedFrom;
    /** Lets lock-free reads and the cleaner notice that a truncation raced them. */
    private final TruncationGuard truncations = new TruncationGuard(lock);

    private PartitionLog(File dir, LogConfig config, Time time, Scheduler scheduler, LogLoader.LoadedLog loaded,
                         LeaderEpochCache epochCache) {
        this.dir = dir;
        this.config = config;
        this.time = time;
        this.deleter = new SegmentDeleter(scheduler);
        this.segments = loaded.segments();
        this.logStartOffset = loaded.logStartOffset();
        this.logEnd = loaded.logEnd();
        this.recoveryPointCheckpoint = new OffsetCheckpointFile(new File(dir, LogFiles.RECOVERY_POINT_CHECKPOINT));
        this.logStartOffsetCheckpoint = new OffsetCheckpointFile(new File(dir, LogFiles.LOG_START_OFFSET_CHECKPOINT));
        this.groupCommit = new GroupCommit(this::flushAll, loaded.recoveryPoint());
        this.lastFlushMs = time.milliseconds();
        this.producerState = new ProducerStateManager(dir);
        this.epochCache = epochCache;
    }

    /**
     * Opens the log in {@code dir}, creating it if needed. After an unclean stop, segments from the
     * recovery point on are validated and a torn or corrupt tail is truncated (see {@link LogLoader}).
     * The producer state is then loaded from the newest valid snapshot at or below the log end and
     * brought up to the log end by replaying the batches after it (from the log start without one).
     * The leader epoch cache is read from its checkpoint, or rebuilt from the batches when that is
     * missing or unreadable, and cut to the recovered log ({@link LeaderEpochCache#load}).
     */
    public static PartitionLog open(File dir, LogConfig config, Time time, Scheduler scheduler) throws IOException {
        LogLoader.LoadedLog loaded = LogLoader.load(dir, config, time);
        LeaderEpochCache epochCache;
        try {
            epochCache = LeaderEpochCache.load(dir, loaded.segments().values(), loaded.logStartOffset(),
                    loaded.logEnd().offset());
        } catch (IOException | RuntimeException e) {
            for (LogSegment segment : loaded.segments().values()) {
                segment.closeHandles();
            }
            throw e;
        }
        PartitionLog partitionLog = new PartitionLog(dir, config, time, scheduler, loaded, epochCache);
        try {
            partitionLog.loadProducerState();
        } catch (IOException | RuntimeException e) {
            partitionLog.closeAsIfCrashed();
            throw e;
        }
        return partitionLog;
    }

    /** Loads the newest usable producer-state snapshot and replays the batches after it. */
    private void loadProducerState() throws IOException {
        long end = logEnd.offset();
        long next = producerState.loadSnapshot(logStartOffset, end);
        long from = next;
        producerStateReplayedFrom = from;
        int replayed = 0;
        while (next < end) {
            long before = next;
            for (RecordBatch batch : read(next, 1 << 20, true).records().batches()) {
                if (batch.lastOffset() >= next) {
                    if (batch.hasProducerId()) {
                        ProducerStateManager.CompletedTxn txn = producerState.update(batch);
                        if (txn != null && txn.aborted()) {
                            indexAbortedIfMissing(txn);
                        }
                        replayed++;
                    }
                    next = batch.nextOffset();
                }
            }
            if (next == before) {
                log.warn("Stopped replaying producer state of {} at offset {}: no batch found before the log end {}",
                        dir.getName(), next, end);
                break;
            }
        }
        publishFirstUnstableOffset();
        if (from < end) {
            log.info("Replayed offsets {}..{} of {} into the producer state ({} idempotent batches, {} producers)",
                    from, end - 1, dir.getName(), replayed, producerState.producerCount());
        }
    }

    /** The offset from which {@link #open} replayed batches into the producer state (its snapshot's, or the log start). */
    long producerStateReplayedFrom() {
        return producerStateReplayedFrom;
    }

    /** The leader-epoch history of this log (thread-safe to read; changed only by this log). */
    public LeaderEpochCache leaderEpochCache() {
        return epochCache;
    }

    /**
     * Records that {@code leaderEpoch} starts at the current log end, as a broker does when it becomes
     * the leader: it can then answer {@link #endOffsetForEpoch} for the epochs before it at once, before
     * it appends anything. Atomic with appends (taken under the log's lock); ignored if the epoch is not
     * above the latest.
     */
    public void assignLeaderEpochAtLogEnd(int leaderEpoch) {
        if (leaderEpoch < 0) {
            throw new IllegalArgumentException("Leader epoch " + leaderEpoch + " of " + dir.getName()
                    + " must be 0 or more");
        }
        synchronized (lock) {
            checkWritable();
            assignEpoch(leaderEpoch, logEnd.offset());
        }
    }

    /** Where {@code epoch} ends in this log ({@link LeaderEpochCache#endOffsetFor}) against the current log end. */
    public EpochEndOffset endOffsetForEpoch(int epoch) {
        return epochCache.endOffsetFor(epoch, logEnd.offset());
    }

    /** The idempotent-producer state; only for use under the log's lock or in tests. */
    ProducerStateManager producerState() {
        return producerState;
    }

    public File dir() {
        return dir;
    }

    public LogConfig config() {
        return config;
    }

    /** Applies new settings; they take effect from the next append, roll, flush or retention run. */
    public void updateConfig(LogConfig newConfig) {
        this.config = newConfig;
    }

    public long logStartOffset() {
        return logStartOffset;
    }

    public long logEndOffset() {
        return logEnd.offset();
    }

    public LogOffsetMetadata logEndOffsetMetadata() {
        return logEnd;
    }

    /** Every offset below this is on disk (fsynced). */
    public long recoveryPoint() {
        return groupCommit.durableOffset();
    }

    /** Total bytes in all segments. */
    public long size() {
        long total = 0;
        for (LogSegment segment : segments.values()) {
            total += segment.size();
        }
        return total;
    }

    public int numberOfSegments() {
        return segments.size();
    }

    /** Base offsets of the segments, oldest first. */
    public List<Long> segmentBaseOffsets() {
        return List.copyOf(segments.keySet());
    }

    /** Flushes run for appenders waiting on durability; concurrent waiters share one. */
    public long groupCommitFlushCount() {
        return groupCommit.flushCount();
    }

    /**
     * Appends batches as the partition leader: validates them, assigns offsets from the log end and
     * stamps {@code leaderEpoch}. The batches' buffer is modified in place.
     *
     * @throws org.apache.kafka.common.errors.CorruptRecordException bad CRC or truncated bytes
     * @throws org.apache.kafka.common.InvalidRecordException        wrong magic, bad record count, missing key
     * @throws org.apache.kafka.common.errors.RecordTooLargeException a batch above {@code max.message.bytes}
     * @throws KafkaStorageException                                  the log is offline or closed
     * @throws org.apache.kafka.common.errors.InvalidProducerEpochException a producer batch from a fenced epoch
     * @throws org.apache.kafka.common.errors.OutOfOrderSequenceException  a producer batch out of sequence
     * @return what was written; for a retry of idempotent batches already in the log, nothing is
     *         written and the original offsets come back with {@link LogAppendInfo#duplicate()} set
     */
    public LogAppendInfo appendAsLeader(MemoryRecords records, int leaderEpoch) {
        return appendAsLeader(records, leaderEpoch, AppendOrigin.CLIENT);
    }

    /**
     * Appends as the partition leader on behalf of {@code origin}; see {@link AppendOrigin} for what
     * the coordinators may write that clients may not (transaction markers).
     */
    public LogAppendInfo appendAsLeader(MemoryRecords records, int leaderEpoch, AppendOrigin origin) {
        return appendAsLeader(records, leaderEpoch, origin, null);
    }

    /**
     * Appends as the partition leader, as {@link #appendAsLeader(MemoryRecords, int, AppendOrigin)}, a client's batch
     * whose transaction was verified with {@code guard} ({@link #startTxnVerification}): a transactional batch that
     * would open a transaction here is refused with
     * {@link org.apache.kafka.common.errors.InvalidTxnStateException} unless the partition still holds that guard,
     * i.e. no marker of its producer was written since the verification started.
     *
     * @param guard the verification's guard, or null for an append not checked for one
     */
    public LogAppendInfo appendAsLeader(MemoryRecords records, int leaderEpoch, AppendOrigin origin,
                                        TxnVerification.Guard guard) {
        LogConfig cfg = config;
        BatchValidator.ValidBatches valid = BatchValidator.validate(records, cfg, true);
        LogAppendInfo info;
        synchronized (lock) {
            checkWritable();
            LogAppendInfo duplicate = valid.hasProducerIds()
                    ? producerState.checkLeaderAppend(valid.batches(), origin, guard) : null;
            if (duplicate != null) {
                info = duplicate;
            } else {
                info = BatchValidator.assignOffsets(valid, logEnd.offset(), leaderEpoch, time.milliseconds(),
                        cfg.timestampType());
                assignEpoch(leaderEpoch, info.firstOffset());
                write(info, records, cfg);
                if (valid.hasProducerIds()) {
                    applyProducerState(valid.batches());
                }
            }
        }
        maybeAwaitFlush(info.lastOffset() + 1, cfg);
        return info;
    }

    /**
     * Starts the verification of a transactional batch of {@code producerId} at {@code epoch} with its coordinator,
     * before the batch is appended with {@link #appendAsLeader(MemoryRecords, int, AppendOrigin,
     * TxnVerification.Guard)}; see {@link TxnVerification}.
     */
    public TxnVerification startTxnVerification(long producerId, short epoch) {
        synchronized (lock) {
            return producerState.startTxnVerification(producerId, epoch);
        }
    }

    /**
     * Appends batches that already carry offsets (from a leader); they must start at or after the
     * log end and increase. Producer batches are only checked for a fenced (lower) epoch: the leader
     * checked their sequences, so duplicates and gaps are taken as the leader wrote them.
     */
    public LogAppendInfo appendAsFollower(MemoryRecords records) {
        LogConfig cfg = config;
        BatchValidator.ValidBatches valid = BatchValidator.validate(records, cfg, false);
        LogAppendInfo info;
        synchronized (lock) {
            checkWritable();
            info = BatchValidator.checkAssignedOffsets(valid, logEnd.offset());
            if (valid.hasProducerIds()) {
                producerState.checkFollowerAppend(valid.batches());
            }
            for (RecordBatch batch : valid.batches()) {
                assignEpoch(batch.partitionLeaderEpoch(), batch.baseOffset());
            }
            write(info, records, cfg);
            if (valid.hasProducerIds()) {
                applyProducerState(valid.batches());
            }
        }
        maybeAwaitFlush(info.lastOffset() + 1, cfg);
        return info;
    }

    /** Records that {@code epoch} (if set) starts at {@code offset}, before the records are written; under the lock. */
    private void assignEpoch(int epoch, long offset) {
        if (epoch < 0) {
            return;
        }
        try {
            epochCache.assign(epoch, offset);
        } catch (UncheckedIOException e) {
            throw takeOffline("recording leader epoch " + epoch + " at offset " + offset, e.getCause());
        }
    }

    /** Applies written batches to the producer state and indexes the transactions they aborted. */
    private void applyProducerState(List<? extends RecordBatch> batches) {
        for (ProducerStateManager.CompletedTxn txn : producerState.update(batches)) {
            if (txn.aborted()) {
                indexAborted(segments.lastEntry().getValue(), txn);
            }
        }
        publishFirstUnstableOffset();
    }

    private void publishFirstUnstableOffset() {
        firstUnstableOffset = producerState.firstUnstableOffset().orElse(-1);
    }

    private void indexAborted(LogSegment segment, ProducerStateManager.CompletedTxn txn) {
        long fuo = producerState.firstUnstableOffset().orElse(txn.markerOffset() + 1);
        try {
            segment.txnIndex().append(new AbortedTxn(txn.producerId(), txn.firstOffset(), txn.markerOffset(),
                    Math.min(fuo, txn.markerOffset() + 1)));
        } catch (IOException e) {
            throw takeOffline("indexing the aborted transaction of producer " + txn.producerId() + " at offset "
                    + txn.markerOffset() + " in " + segment.txnIndex().file(), e);
        }
    }

    /** During replay: re-adds an abort that the segment's index lost (it was not flushed before a crash). */
    private void indexAbortedIfMissing(ProducerStateManager.CompletedTxn txn) {
        LogSegment segment = segments.floorEntry(txn.markerOffset()).getValue();
        if (segment.txnIndex().lastMarkerOffset() < txn.markerOffset()) {
            indexAborted(segment, txn);
        }
    }

    /**
     * The first offset of the oldest open transaction on this partition, or -1 if none is open. The
     * last stable offset is this (when set) capped by the high watermark.
     */
    public long firstUnstableOffset() {
        return firstUnstableOffset;
    }

    /**
     * The aborted transactions that overlap {@code [fetchOffset, upperBound)}, in marker order: what a
     * read-committed consumer needs to drop aborted batches from a fetch starting at {@code fetchOffset}
     * and bounded by {@code upperBound} (the last stable offset).
     */
    public List<AbortedTxn> collectAbortedTransactions(long fetchOffset, long upperBound) {
        List<AbortedTxn> out = new ArrayList<>();
        Long from = segments.floorKey(fetchOffset);
        for (LogSegment segment : segments.tailMap(from == null ? Long.MIN_VALUE : from).values()) {
            if (segment.txnIndex().collect(fetchOffset, upperBound, out)) {
                break;
            }
        }
        return out;
    }

    /** The open transactions by first offset with their producer ids (a snapshot, for describing producers). */
    public Map<Long, Long> openTransactions() {
        synchronized (lock) {
            return producerState.openTransactions();
        }
    }

    /** What this partition knows of each producer (for DescribeProducers). */
    public List<ProducerSnapshot> producers() {
        synchronized (lock) {
            List<ProducerSnapshot> out = new ArrayList<>();
            for (ProducerStateEntry entry : producerState.entries()) {
                ProducerStateEntry.BatchMetadata last = entry.batches().isEmpty() ? null
                        : entry.batches().stream().reduce((a, b) -> b).orElse(null);
                out.add(new ProducerSnapshot(entry.producerId(), entry.producerEpoch(), entry.lastSequence(),
                        last == null ? -1 : last.maxTimestamp(), entry.currentTxnFirstOffset()));
            }
            return out;
        }
    }

    /** One producer as a partition knows it. */
    public record ProducerSnapshot(long producerId, short epoch, int lastSequence, long lastTimestamp,
                                   long currentTxnFirstOffset) {
    }

    private void write(LogAppendInfo info, MemoryRecords records, LogConfig cfg) {
        LogSegment segment = segments.lastEntry().getValue();
        try {
            if (segment.shouldRoll(records.sizeInBytes(), info.lastOffset(), info.maxTimestamp(), time.milliseconds(),
                    cfg)) {
                segment = roll(info.firstOffset());
            }
            segment.append(info.lastOffset(), records);
        } catch (IOException e) {
            throw takeOffline("appending offsets " + info.firstOffset() + ".." + info.lastOffset() + " to "
                    + segment.file(), e);
        }
        logEnd = new LogOffsetMetadata(info.lastOffset() + 1, segment.baseOffset(), segment.size());
    }

    private void maybeAwaitFlush(long endOffset, LogConfig cfg) {
        if (endOffset - groupCommit.durableOffset() >= cfg.flushMessages()) {
            awaitDurable(endOffset);
        }
    }

    /** Fsyncs everything appended so far. */
    public void flush() {
        awaitDurable(logEnd.offset());
    }

    /** Flushes if {@code flush.ms} has passed since the last flush and something is unflushed. */
    public void maybeFlushByTime() {
        if (time.milliseconds() - lastFlushMs >= config.flushMs() && logEnd.offset() > groupCommit.durableOffset()) {
            flush();
        }
    }

    /**
     * Bounds what recovery has to read after an unclean stop. Nothing else moves the recovery point by
     * default: {@code flush.ms} and {@code flush.messages} are unlimited (replication, not fsync, keeps
     * acknowledged records), and a 1 GiB segment rarely rolls, so a node killed after an hour of writes would
     * validate every batch and replay every idempotent batch into the producer state from offset 0 at its
     * next start (a minute and more for a busy internal topic). When nothing was flushed for
     * {@code intervalMs} and something was appended since, this writes a producer-state snapshot at the
     * current log end and fsyncs the log up to it, so the recovery point and the snapshot both move there;
     * the next {@link #checkpoint()} records the recovery point. After a crash, recovery then starts at the
     * segment holding that point and the replay at that snapshot: at most about {@code intervalMs} of appends.
     *
     * <p>Appenders are not held up: the snapshot is taken under the log's lock (its cost grows with the
     * number of producers, not the data), the fsync runs outside it, shared with appenders through
     * {@link GroupCommit}. A crash between the two leaves a snapshot above the recovered log end, which
     * the loader deletes and falls back from.
     *
     * @return whether it flushed
     */
    public boolean maybeFlushForRecovery(long intervalMs) {
        if (time.milliseconds() - lastFlushMs < intervalMs || logEnd.offset() <= groupCommit.durableOffset()) {
            return false;
        }
        long end;
        synchronized (lock) {
            checkWritable();
            end = logEnd.offset();
            try {
                producerState.takeSnapshot(end);
            } catch (IOException e) {
                throw takeOffline("writing a producer-state snapshot at offset " + end + " in " + dir, e);
            }
        }
        awaitDurable(end);
        return true;
    }

    private void awaitDurable(long endOffset) {
        try {
            if (!groupCommit.awaitDurable(endOffset)) {
                throw new NotLeaderOrFollowerException("The log " + dir.getName() + " was truncated to offset "
                        + logEnd.offset() + " while waiting for offsets below " + endOffset + " to become durable");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptException(e);
        } catch (IOException e) {
            throw takeOffline("flushing " + dir, e);
        }
    }

    /** Fsyncs the segments from the recovery point to the current log end; run by {@link GroupCommit}. */
    private long flushAll() throws IOException {
        checkOnline();
        LogOffsetMetadata end = logEnd;
        Long from = segments.floorKey(groupCommit.durableOffset());
        Map<Long, LogSegment> toFlush = segments.subMap(from == null ? Long.MIN_VALUE : from, true,
                end.segmentBaseOffset(), true);
        for (LogSegment segment : toFlush.values()) {
            try {
                if (segment.baseOffset() == end.segmentBaseOffset()) {
                    segment.flushRecords();
                } else {
                    segment.flush();
                }
            } catch (ClosedChannelException e) {
                if (segments.get(segment.baseOffset()) == segment) {
                    throw e;
                }
                // removed by retention or compaction while we flushed: nothing left to make durable
            }
        }
        lastFlushMs = time.milliseconds();
        return end.offset();
    }

    /** Starts a new active segment at the log end. */
    public void roll() {
        synchronized (lock) {
            checkWritable();
            try {
                roll(logEnd.offset());
            } catch (IOException e) {
                throw takeOffline("rolling a segment at offset " + logEnd.offset(), e);
            }
        }
    }

    private LogSegment roll(long newBaseOffset) throws IOException {
        LogSegment active = segments.lastEntry().getValue();
        if (active.size() == 0 && active.baseOffset() == newBaseOffset) {
            return active;
        }
        active.onBecomeInactive();
        producerState.takeSnapshot(newBaseOffset);
        LogSegment next = LogSegment.open(dir, newBaseOffset, config, time, false);
        segments.put(newBaseOffset, next);
        logEnd = new LogOffsetMetadata(logEnd.offset(), newBaseOffset, 0);
        log.debug("Rolled {} at offset {}", dir, newBaseOffset);
        return next;
    }

    /**
     * Reads from {@code startOffset} up to {@code maxBytes}; with {@code minOneBatch} the first batch
     * comes back whole even when it is larger. Reading at the log end returns no records.
     *
     * @throws OffsetOutOfRangeException if {@code startOffset} is below the log start or above the log end
     */
    public FetchDataInfo read(long startOffset, int maxBytes, boolean minOneBatch) {
        return truncations.read(() -> readOnce(startOffset, maxBytes, minOneBatch));
    }

    private FetchDataInfo readOnce(long startOffset, int maxBytes, boolean minOneBatch) {
        checkOnline();
        LogOffsetMetadata end = logEnd;
        long start = logStartOffset;
        if (startOffset == end.offset()) {
            return new FetchDataInfo(end, MemoryRecords.EMPTY);
        }
        if (startOffset < start || startOffset > end.offset()) {
            throw new OffsetOutOfRangeException("Offset " + startOffset + " is out of range for " + dir.getName()
                    + ": the log holds offsets from " + start + " (log start) to " + end.offset() + " (log end)");
        }
        Map.Entry<Long, LogSegment> entry = segments.floorEntry(startOffset);
        while (entry != null && entry.getKey() <= end.segmentBaseOffset()) {
            LogSegment segment = entry.getValue();
            int maxPosition = segment.baseOffset() == end.segmentBaseOffset() ? end.position() : segment.size();
            FetchDataInfo info = segment.read(startOffset, maxBytes, maxPosition, minOneBatch);
            if (info != null) {
                return info;
            }
            entry = segments.higherEntry(entry.getKey());
        }
        return new FetchDataInfo(end, MemoryRecords.EMPTY);
    }

    /**
     * Like {@link #read(long, int, boolean)}, but returns only whole batches that end below
     * {@code maxOffset} (exclusive): a read-committed fetch passes the last stable offset.
     */
    public FetchDataInfo read(long startOffset, int maxBytes, boolean minOneBatch, long maxOffset) {
        return truncations.read(() -> readOnce(startOffset, maxBytes, minOneBatch, maxOffset));
    }

    private FetchDataInfo readOnce(long startOffset, int maxBytes, boolean minOneBatch, long maxOffset) {
        FetchDataInfo info = readOnce(startOffset, maxBytes, minOneBatch);
        if (startOffset >= maxOffset) {
            return new FetchDataInfo(info.fetchOffsetMetadata(), MemoryRecords.EMPTY);
        }
        if (!(info.records() instanceof FileRecords fileRecords)) {
            return info;
        }
        int keep = 0;
        for (RecordBatch batch : fileRecords.batches()) {
            if (batch.lastOffset() >= maxOffset) {
                return new FetchDataInfo(info.fetchOffsetMetadata(), fileRecords.slice(0, keep));
            }
            keep += batch.sizeInBytes();
        }
        return info;
    }

    /** The first record at or after the log start whose timestamp is at least {@code timestamp}. */
    public Optional<TimestampAndOffset> offsetForTimestamp(long timestamp) {
        return truncations.read(() -> offsetForTimestampOnce(timestamp));
    }

    private Optional<TimestampAndOffset> offsetForTimestampOnce(long timestamp) {
        checkOnline();
        long start = logStartOffset;
        for (LogSegment segment : segments.values()) {
            if (segment.maxTimestampSoFar() >= timestamp) {
                Optional<TimestampAndOffset> found = segment.findOffsetByTimestamp(timestamp, start);
                if (found.isPresent()) {
                    return found;
                }
            }
        }
        return Optional.empty();
    }

    /**
     * Applies retention: with {@code cleanup.policy} containing delete, removes the oldest segments
     * whose newest record is older than {@code retention.ms} and then while the log is larger than
     * {@code retention.bytes}; always removes segments wholly below the log start offset. A full
     * active segment that has expired is rolled first so it can go too.
     *
     * @return the number of segments removed
     */
    public int deleteOldSegments() {
        LogConfig cfg = config;
        long now = time.milliseconds();
        int deleted = 0;
        if (cfg.delete() && cfg.retentionMs() >= 0) {
            deleted += deleteSegmentsWhile((segment, next) -> now - largestTimestamp(segment) > cfg.retentionMs(),
                    "retention.ms=" + cfg.retentionMs());
        }
        if (cfg.delete() && cfg.retentionBytes() >= 0) {
            long[] excess = {size() - cfg.retentionBytes()};
            deleted += deleteSegmentsWhile((segment, next) -> {
                if (excess[0] - segment.size() < 0) {
                    return false;
                }
                excess[0] -= segment.size();
                return true;
            }, "retention.bytes=" + cfg.retentionBytes());
        }
        long start = logStartOffset;
        deleted += deleteSegmentsWhile((segment, next) -> next != null && next.baseOffset() <= start,
                "log start offset " + start);
        return deleted;
    }

    private static long largestTimestamp(LogSegment segment) {
        long max = segment.maxTimestampSoFar();
        return max >= 0 ? max : segment.file().lastModified();
    }

    private int deleteSegmentsWhile(BiPredicate<LogSegment, LogSegment> shouldDelete, String reason) {
        synchronized (lock) {
            checkWritable();
            List<LogSegment> doomed = new ArrayList<>();
            for (LogSegment segment : segments.values()) {
                Map.Entry<Long, LogSegment> next = segments.higherEntry(segment.baseOffset());
                if (!shouldDelete.test(segment, next == null ? null : next.getValue())) {
                    break;
                }
                doomed.add(segment);
            }
            if (doomed.isEmpty()) {
                return 0;
            }
            try {
                if (doomed.size() == segments.size()) {
                    LogSegment active = doomed.get(doomed.size() - 1);
                    if (active.size() == 0) {
                        doomed.remove(doomed.size() - 1);
                    } else {
                        roll(logEnd.offset());
                    }
                }
                for (LogSegment segment : doomed) {
                    segments.remove(segment.baseOffset());
                    scheduleDelete(segment);
                }
                long newStart = Math.max(logStartOffset, segments.firstKey());
                if (newStart != logStartOffset) {
                    logStartOffset = newStart;
                    logStartOffsetCheckpoint.write(newStart);
                    epochCache.truncateFromStart(newStart);
                }
                producerState.onLogStartOffsetIncremented(logStartOffset);
            } catch (IOException e) {
                throw takeOffline("deleting segments of " + dir + " for " + reason, e);
            } catch (UncheckedIOException e) {
                throw takeOffline("moving the leader epochs of " + dir + " to the log start", e.getCause());
            }
            log.info("Deleted {} segment(s) of {} for {}; log start offset is now {}", doomed.size(), dir.getName(),
                    reason, logStartOffset);
            return doomed.size();
        }
    }

    /**
     * Moves the log start offset forward (as DeleteRecords does); whole segments below it are removed
     * by the next {@link #deleteOldSegments()}.
     *
     * @throws OffsetOutOfRangeException if {@code newStart} is above the log end
     */
    public void maybeIncrementLogStartOffset(long newStart) {
        synchronized (lock) {
            checkWritable();
            if (newStart > logEnd.offset()) {
                throw new OffsetOutOfRangeException("Cannot move the log start of " + dir.getName() + " to "
                        + newStart + ": the log end is " + logEnd.offset());
            }
            if (newStart > logStartOffset) {
                logStartOffset = newStart;
                try {
                    logStartOffsetCheckpoint.write(newStart);
                    epochCache.truncateFromStart(newStart);
                } catch (IOException e) {
                    throw takeOffline("writing " + logStartOffsetCheckpoint.file(), e);
                } catch (UncheckedIOException e) {
                    throw takeOffline("moving the leader epochs to the log start " + newStart, e.getCause());
                }
            }
        }
    }

    /**
     * Removes every record at or after {@code offset}, as a follower does when its log diverged from the
     * leader's. A batch that holds {@code offset} goes whole, so the log end becomes {@code offset} or,
     * when {@code offset} falls inside a batch, that batch's base offset. Does nothing if {@code offset}
     * is at or past the log end.
     *
     * <ul>
     *   <li>Segments above the one holding {@code offset} are removed (renamed {@code .deleted}, closed
     *       after {@code file.delete.delay.ms}); that one is cut with its offset, time and transaction
     *       indexes and becomes the active segment.</li>
     *   <li>The recovery point (and its checkpoint) and the group commit's durable offset are lowered to
     *       the new end; a flush or a durability wait in progress does not count for the cut offsets (an
     *       appender still waiting gets {@link NotLeaderOrFollowerException}).</li>
     *   <li>The producer state is rebuilt from the newest snapshot at or below the new end (snapshots
     *       above it are deleted) plus the batches after it, so it reflects only what remains: an
     *       idempotent producer may send a truncated batch again with the same sequence, and a
     *       transaction whose marker was cut is open again, one whose data was cut is gone.</li>
     *   <li>The leader epoch cache drops the epochs that start at or after the new end.</li>
     * </ul>
     *
     * Reads running meanwhile are retried or see the log as it was; one that already returned a slice of
     * the cut file may find fewer bytes than it was told when it sends them.
     *
     * @throws IllegalArgumentException if {@code offset} is below the log start offset
     * @throws KafkaStorageException    the log is offline or closed, or an I/O error took it offline
     */
    public void truncateTo(long offset) {
        synchronized (lock) {
            checkWritable();
            if (offset < logStartOffset) {
                throw new IllegalArgumentException("Cannot truncate " + dir.getName() + " to offset " + offset
                        + ": it is below the log start offset " + logStartOffset + " (log end " + logEnd.offset()
                        + "); use truncateFullyAndStartAt");
            }
            long oldEnd = logEnd.offset();
            if (offset >= oldEnd) {
                return;
            }
            long newEnd;
            int removed;
            truncations.begin();
            try {
                LogSegment keep = segments.floorEntry(offset).getValue();
                boolean wasActive = keep == segments.lastEntry().getValue();
                List<LogSegment> later = new ArrayList<>(segments.tailMap(keep.baseOffset(), false).values());
                for (LogSegment segment : later) {
                    segments.remove(segment.baseOffset());
                    scheduleDelete(segment);
                }
                removed = later.size();
                long cut = keep.truncateTo(offset);
                newEnd = cut >= 0 ? Math.min(offset, cut) : offset;
                if (!wasActive) {
                    keep.onBecomeActive();
                }
                logEnd = new LogOffsetMetadata(newEnd, keep.baseOffset(), keep.size());
            } catch (IOException e) {
                throw takeOffline("truncating " + dir + " to offset " + offset, e);
            } finally {
                truncations.end();
            }
            try {
                lowerRecoveryPoint(newEnd);
                epochCache.truncateFromEnd(newEnd);
                loadProducerState();
            } catch (IOException e) {
                throw takeOffline("rebuilding the state of " + dir + " after truncating it to " + newEnd, e);
            } catch (UncheckedIOException e) {
                throw takeOffline("truncating the leader epochs of " + dir + " to " + newEnd, e.getCause());
            }
            log.info("Truncated {} from log end {} to {} ({} later segment(s) removed)", dir.getName(), oldEnd,
                    newEnd, removed);
        }
    }

    /**
     * Deletes every segment and starts an empty log at {@code newStart} (log start = log end =
     * {@code newStart}), as a follower does when the offset it must fetch from is below the leader's log
     * start. The producer state, its snapshots and the leader epoch cache are cleared; the recovery point
     * becomes {@code newStart}.
     *
     * @throws IllegalArgumentException if {@code newStart} is negative
     * @throws KafkaStorageException    the log is offline or closed, or an I/O error took it offline
     */
    public void truncateFullyAndStartAt(long newStart) {
        if (newStart < 0) {
            throw new IllegalArgumentException("Cannot start " + dir.getName() + " at negative offset " + newStart);
        }
        synchronized (lock) {
            checkWritable();
            long oldStart = logStartOffset;
            long oldEnd = logEnd.offset();
            truncations.begin();
            try {
                List<LogSegment> old = new ArrayList<>(segments.values());
                for (LogSegment segment : old) {
                    segments.remove(segment.baseOffset());
                    scheduleDelete(segment);
                }
                segments.put(newStart, LogSegment.open(dir, newStart, config, time, false));
                logStartOffset = newStart;
                logEnd = new LogOffsetMetadata(newStart, newStart, 0);
            } catch (IOException e) {
                throw takeOffline("emptying " + dir + " to start at offset " + newStart, e);
            } finally {
                truncations.end();
            }
            try {
                lowerRecoveryPoint(newStart);
                groupCommit.markDurable(newStart);
                checkpoint();
                producerState.truncateFully();
                publishFirstUnstableOffset();
                epochCache.clearAndFlush();
            } catch (IOException e) {
                throw takeOffline("resetting the state of " + dir + " to start at " + newStart, e);
            } catch (UncheckedIOException e) {
                throw takeOffline("clearing the leader epochs of " + dir, e.getCause());
            }
            log.info("Emptied {} (offsets {}..{}) to start at offset {}", dir.getName(), oldStart, oldEnd, newStart);
        }
    }

    /** All segments but the active one, oldest first: those the cleaner may rewrite. */
    List<LogSegment> inactiveSegments() {
        synchronized (lock) {
            List<LogSegment> all = new ArrayList<>(segments.values());
            return all.subList(0, all.size() - 1);
        }
    }

    /** The segment appends go to (for tests). */
    LogSegment activeSegment() {
        return segments.lastEntry().getValue();
    }

    /** Changes with every truncation (the cleaner compares it before swapping a segment in). */
    long truncationCount() {
        return truncations.count();
    }

    /** The base offset of the segment after {@code segment}. */
    long nextSegmentBaseOffset(LogSegment segment) {
        Long next = segments.higherKey(segment.baseOffset());
        return next == null ? logEnd.offset() : next;
    }

    Time time() {
        return time;
    }

    /**
     * Swaps a compacted segment in for the segments it was built from. The crash-safe order is:
     * {@code .cleaned} to {@code .swap}, old segments to {@code .deleted}, {@code .swap} to live names;
     * {@link LogLoader} completes a swap interrupted at any step.
     *
     * @return false (and the cleaned segment deleted) if one of the old segments is already gone, or the
     *         log was truncated since {@code truncationsAtStart} (the cleaner's view of the keys is stale)
     */
    boolean replaceSegments(List<LogSegment> oldSegments, LogSegment cleaned, long truncationsAtStart)
            throws IOException {
        synchronized (lock) {
            checkWritable();
            if (truncations.count() != truncationsAtStart) {
                log.info("Dropping compacted segment {}: {} was truncated while it was being cleaned", cleaned.file(),
                        dir.getName());
                cleaned.closeAndDelete();
                return false;
            }
            for (LogSegment old : oldSegments) {
                if (segments.get(old.baseOffset()) != old) {
                    cleaned.closeAndDelete();
                    return false;
                }
            }
            cleaned.changeFileSuffixes(LogFiles.CLEANED_SUFFIX, LogFiles.SWAP_SUFFIX);
            for (LogSegment old : oldSegments) {
                segments.remove(old.baseOffset());
                scheduleDelete(old);
            }
            cleaned.changeFileSuffixes(LogFiles.SWAP_SUFFIX, "");
            segments.put(cleaned.baseOffset(), cleaned);
            return true;
        }
    }

    private void scheduleDelete(LogSegment segment) throws IOException {
        deleter.schedule(segment, config.fileDeleteDelayMs());
    }

    /**
     * Writes the recovery point and log start offset checkpoints. Serialized with the checkpoint a
     * truncation writes, so a periodic checkpoint cannot put back a recovery point above the cut.
     */
    public void checkpoint() {
        synchronized (checkpointLock) {
            try {
                recoveryPointCheckpoint.write(groupCommit.durableOffset());
                logStartOffsetCheckpoint.write(logStartOffset);
            } catch (IOException e) {
                throw takeOffline("writing checkpoints in " + dir, e);
            }
        }
    }

    /** Lowers the recovery point to {@code offset} (the log was cut there) and writes its checkpoint. */
    private void lowerRecoveryPoint(long offset) throws IOException {
        synchronized (checkpointLock) {
            groupCommit.truncateTo(offset);
            recoveryPointCheckpoint.write(groupCommit.durableOffset());
        }
    }

    /**
     * Flushes everything, writes the checkpoints and the clean-shutdown marker, and closes the files.
     * The next open skips recovery. Idempotent.
     */
    @Override
    public void close() {
        synchronized (lock) {
            if (closed) {
                return;
            }
            closing = true;
            try {
                if (offlineCause == null) {
                    flushAll();
                    groupCommit.markDurable(logEnd.offset());
                    producerState.takeSnapshot(logEnd.offset());
                    for (LogSegment segment : segments.values()) {
                        segment.close();
                    }
                    checkpoint();
                    Files.createFile(new File(dir, LogFiles.CLEAN_SHUTDOWN).toPath());
                } else {
                    for (LogSegment segment : segments.values()) {
                        segment.closeHandles();
                    }
                }
            } catch (IOException e) {
                throw new KafkaStorageException("Could not close the log in " + dir + " cleanly", e);
            } finally {
                closed = true;
                deleter.deleteAllNow();
            }
        }
    }

    /** Closes the file handles as a killed process would: nothing flushed, no checkpoint, no marker. */
    void closeAsIfCrashed() throws IOException {
        synchronized (lock) {
            closed = true;
            for (LogSegment segment : segments.values()) {
                segment.closeHandles();
            }
        }
    }

    /** Whether {@link #close()} has begun or finished (or the log was closed as if crashed). */
    public boolean isClosed() {
        return closing || closed;
    }

    private void checkWritable() {
        checkOnline();
    }

    private void checkOnline() {
        if (closed) {
            throw new KafkaStorageException("The log in " + dir + " is closed");
        }
        if (offlineCause != null) {
            throw new KafkaStorageException("The log in " + dir + " is offline after an I/O error: "
                    + offlineCause.getMessage(), offlineCause);
        }
    }

    private KafkaStorageException takeOffline(String action, IOException e) {
        offlineCause = e;
        log.error("Taking the log in {} offline: I/O error while {}", dir, action, e);
        return new KafkaStorageException("I/O error while " + action + "; the log is now offline", e);
    }

    @Override
    public String toString() {
        return "PartitionLog(" + dir + ", logStartOffset=" + logStartOffset + ", logEndOffset=" + logEnd.offset() + ")";
    }
}
