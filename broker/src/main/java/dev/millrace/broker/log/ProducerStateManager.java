package dev.millrace.broker.log;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The idempotent-producer state of one partition: for each producer id, a {@link ProducerStateEntry}
 * with its epoch and its last {@value ProducerStateEntry#MAX_BATCHES} batches. Batches without a
 * producer id never reach this class.
 *
 * <p>Rules for a leader append ({@link #checkLeaderAppend}), per batch with a producer id:
 * <ul>
 *   <li>Same epoch and the same first/last sequence as one of the remembered batches: a duplicate
 *       (a retry). If every batch of the append is a duplicate, nothing is written and the caller
 *       gets the original offsets; an append mixing duplicates and new batches is refused with
 *       {@link InvalidRecordException} (Kafka clients send one batch per partition, so this does
 *       not happen in practice, and writing half an append would break its atomicity).</li>
 *   <li>A known producer with a lower epoch is fenced: {@link InvalidProducerEpochException}.</li>
 *   <li>A higher epoch must start at sequence 0, else {@link OutOfOrderSequenceException}.</li>
 *   <li>The same epoch must continue at last sequence + 1 (after {@link Integer#MAX_VALUE} comes 0),
 *       else {@link OutOfOrderSequenceException}.</li>
 *   <li>An unknown producer is accepted at any sequence: its state may have gone with truncation,
 *       retention or a lost snapshot, and refusing it would wedge the producer (as Kafka does since
 *       2.x). Duplicates of batches older than the known state are then not detected.</li>
 * </ul>
 * Transactions: a transactional data batch opens a transaction for its producer if none is open
 * (its base offset becomes the transaction's first offset); a control batch (commit or abort marker,
 * written only by the coordinators, see {@link AppendOrigin}) closes it and may carry a newer epoch,
 * which fences the producer's older epochs on this partition. The smallest first offset of the open
 * transactions is the partition's first unstable offset ({@link #firstUnstableOffset}), which
 * bounds the last stable offset that read-committed consumers may read up to. Coordinator batches
 * (markers, transactional offset commits) skip the sequence rules (their sequences mean nothing).
 *
 * <p>Verified transactions ({@link TxnVerification}): the leader keeps a guard per producer id whose transactional
 * batch is being verified with its coordinator ({@link #startTxnVerification}); a marker of that producer, or a batch
 * of it that opens a transaction, drops the guard. A client batch appended with a guard that would open a transaction
 * (the producer has none open here in the batch's epoch) is refused with {@link InvalidTxnStateException} unless the
 * partition still holds that very guard; the same holds for a coordinator's transactional batch appended with a
 * guard (TxnOffsetCommit). At most {@value #MAX_GUARDS} guards are kept (the oldest go first; an append
 * whose guard went that way is refused and its producer aborts and retries its transaction). Appends without a guard
 * (the coordinators' own, tests) are not checked.
 *
 * <p>A follower append ({@link #checkFollowerAppend}) is only checked for a lower epoch: the leader has
 * already checked sequences and its log is the truth. Replaying the log at load checks nothing.
 * Checks never change the state; {@link #update} applies batches once they are written.
 *
 * <p>Snapshots ({@link ProducerStateSnapshotFile}) are taken at segment rolls and at clean close;
 * at most {@value #SNAPSHOTS_TO_KEEP} are kept. {@link #loadSnapshot} picks the newest valid one
 * inside the log and the log replays the batches after it.
 *
 * <p>Not thread-safe: every call is made under the owning {@link PartitionLog}'s lock (or before it
 * is shared).
 */
final class ProducerStateManager {

    static final int SNAPSHOTS_TO_KEEP = 2;
    static final int MAX_GUARDS = 10_000;

    private static final Logger log = LoggerFactory.getLogger(ProducerStateManager.class);

    private final File dir;
    private final Map<Long, ProducerStateEntry> producers = new HashMap<>();
    /** First offset of each open transaction -> its producer id. */
    private final TreeMap<Long, Long> openTransactions = new TreeMap<>();
    /** The guard of each producer id whose transactional batch is being verified, oldest first. */
    private final Map<Long, TxnVerification.Guard> guards = new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, TxnVerification.Guard> eldest) {
            return size() > MAX_GUARDS;
        }
    };

    /** A transaction that a marker closed on this partition. */
    record CompletedTxn(long producerId, long firstOffset, long markerOffset, boolean aborted) {
    }

    /** The epoch and last sequence a producer reaches within an append that is being checked. */
    private record Pending(short epoch, int lastSequence) {
    }

    ProducerStateManager(File dir) {
        this.dir = dir;
    }

    /** The state of a producer, or null if unknown. The entry must not be modified. */
    ProducerStateEntry entry(long producerId) {
        return producers.get(producerId);
    }

    int producerCount() {
        return producers.size();
    }

    /**
     * Starts the verification of a transactional batch of {@code producerId} at {@code epoch}: the producer's guard
     * (made if it has none), and whether the coordinator must be asked (the batch would open a transaction here).
     */
    TxnVerification startTxnVerification(long producerId, short epoch) {
        TxnVerification.Guard guard = guards.computeIfAbsent(producerId, TxnVerification.Guard::new);
        return new TxnVerification(guard, opensTransaction(producers.get(producerId), epoch));
    }

    /** Whether a transactional batch of {@code epoch} opens a transaction for a producer with state {@code entry}. */
    private static boolean opensTransaction(ProducerStateEntry entry, short epoch) {
        return entry == null || entry.currentTxnFirstOffset() < 0 || entry.producerEpoch() != epoch;
    }

    /**
     * Checks the batches of a leader append against the producer state, without changing it.
     *
     * @param guard the guard of the append's verified transaction ({@link TxnVerification}), or null when the
     *              append is not checked for one
     * @return null if the batches are to be written; if every batch is a duplicate, what the
     *         original append wrote ({@link LogAppendInfo#duplicate()} set, no records or bytes)
     */
    LogAppendInfo checkLeaderAppend(List<? extends RecordBatch> batches, AppendOrigin origin,
                                    TxnVerification.Guard guard) {
        Map<Long, Pending> pending = null;
        ProducerStateEntry.BatchMetadata firstDuplicate = null;
        ProducerStateEntry.BatchMetadata lastDuplicate = null;
        long maxTimestamp = RecordBatch.NO_TIMESTAMP;
        long offsetOfMaxTimestamp = -1;
        int fresh = 0;
        for (RecordBatch batch : batches) {
            if (!batch.hasProducerId()) {
                fresh++;
                continue;
            }
            long producerId = batch.producerId();
            ProducerStateEntry entry = producers.get(producerId);
            if (origin == AppendOrigin.COORDINATOR) {
                fresh++;
                if (entry != null && batch.producerEpoch() < entry.producerEpoch()) {
                    throw fenced(producerId, batch.producerEpoch(), entry.producerEpoch());
                }
                if (!batch.isControlBatch()) {
                    checkGuard(guard, producerId, entry, batch);
                }
                continue;
            }
            if (batch.isControlBatch()) {
                throw new InvalidRecordException("Batch at base offset " + batch.baseOffset() + " of producer "
                        + producerId + " is a control batch; only transaction coordinators write markers");
            }
            requireSequence(batch);
            Pending earlier = pending == null ? null : pending.get(producerId);
            if (earlier == null && entry != null) {
                ProducerStateEntry.BatchMetadata duplicate = entry.findDuplicate(batch.producerEpoch(),
                        batch.baseSequence(), batch.lastSequence());
                if (duplicate != null) {
                    firstDuplicate = firstDuplicate == null ? duplicate : firstDuplicate;
                    lastDuplicate = duplicate;
                    if (duplicate.maxTimestamp() > maxTimestamp) {
                        maxTimestamp = duplicate.maxTimestamp();
                        offsetOfMaxTimestamp = duplicate.lastOffset();
                    }
                    continue;
                }
            }
            fresh++;
            if (earlier == null) {
                checkGuard(guard, producerId, entry, batch);
            }
            if (earlier != null) {
                checkSequence(producerId, earlier.epoch(), earlier.lastSequence(), batch);
            } else if (entry != null) {
                checkSequence(producerId, entry.producerEpoch(), entry.lastSequence(), batch);
            }
            if (pending == null) {
                pending = new HashMap<>();
            }
            pending.put(producerId, new Pending(batch.producerEpoch(), batch.lastSequence()));
        }
        if (firstDuplicate == null) {
            return null;
        }
        if (fresh > 0) {
            throw new InvalidRecordException("The append mixes " + fresh + " new batch(es) with duplicates of "
                    + "batches already at offsets " + firstDuplicate.firstOffset() + ".." + lastDuplicate.lastOffset()
                    + "; send the new batches in their own append");
        }
        return new LogAppendInfo(firstDuplicate.firstOffset(), lastDuplicate.lastOffset(), maxTimestamp,
                offsetOfMaxTimestamp, 0, 0, true);
    }

    /**
     * Refuses a transactional batch appended with {@code guard} that would open its producer's transaction here
     * unless the partition still holds that guard (no marker of the producer since the verification started).
     */
    private void checkGuard(TxnVerification.Guard guard, long producerId, ProducerStateEntry entry,
                            RecordBatch batch) {
        if (guard != null && batch.isTransactional() && opensTransaction(entry, batch.producerEpoch())
                && guards.get(producerId) != guard) {
            throw new InvalidTxnStateException("Transactional batch of producer " + producerId + " at epoch "
                    + batch.producerEpoch() + " (sequence " + batch.baseSequence() + ") refused: it would open "
                    + "a transaction on " + dir.getName() + ", and a commit or abort marker of that producer was "
                    + "written there after its coordinator was asked (the batch is late for its transaction)");
        }
    }

    /** Checks a follower append: only that no known producer goes back to a lower epoch. */
    void checkFollowerAppend(List<? extends RecordBatch> batches) {
        for (RecordBatch batch : batches) {
            if (batch.hasProducerId()) {
                ProducerStateEntry entry = producers.get(batch.producerId());
                if (entry != null && batch.producerEpoch() < entry.producerEpoch()) {
                    throw fenced(batch.producerId(), batch.producerEpoch(), entry.producerEpoch());
                }
            }
        }
    }

    private static void requireSequence(RecordBatch batch) {
        if (batch.baseSequence() < 0) {
            throw new InvalidRecordException("Batch of producer " + batch.producerId() + " has sequence "
                    + batch.baseSequence() + "; an idempotent batch needs a sequence of 0 or more");
        }
    }

    private static void checkSequence(long producerId, short currentEpoch, int lastSequence, RecordBatch batch) {
        short epoch = batch.producerEpoch();
        int firstSequence = batch.baseSequence();
        if (epoch < currentEpoch) {
            throw fenced(producerId, epoch, currentEpoch);
        }
        if (epoch > currentEpoch) {
            if (firstSequence != 0) {
                throw new OutOfOrderSequenceException("Producer " + producerId + " moved from epoch " + currentEpoch
                        + " to " + epoch + " with a batch at sequence " + firstSequence
                        + "; the first batch of a new epoch must start at sequence 0");
            }
            return;
        }
        if (lastSequence == RecordBatch.NO_SEQUENCE) {
            return;
        }
        int expected = lastSequence == Integer.MAX_VALUE ? 0 : lastSequence + 1;
        if (firstSequence != expected) {
            throw new OutOfOrderSequenceException("Out of order sequence for producer " + producerId + " at epoch "
                    + epoch + ": expected sequence " + expected + ", received " + firstSequence + " (batch "
                    + firstSequence + ".." + batch.lastSequence() + ")");
        }
    }

    private static InvalidProducerEpochException fenced(long producerId, short epoch, short currentEpoch) {
        return new InvalidProducerEpochException("Producer " + producerId + " sent epoch " + epoch
                + ", which is older than its current epoch " + currentEpoch + ": the producer is fenced");
    }

    /**
     * Applies written batches (which carry their offsets); batches without a producer id are skipped.
     *
     * @return the transactions that markers among the batches closed, in marker order (often empty)
     */
    List<CompletedTxn> update(Iterable<? extends RecordBatch> batches) {
        List<CompletedTxn> completed = List.of();
        for (RecordBatch batch : batches) {
            if (batch.hasProducerId()) {
                CompletedTxn txn = update(batch);
                if (txn != null) {
                    if (completed.isEmpty()) {
                        completed = new java.util.ArrayList<>(1);
                    }
                    completed.add(txn);
                }
            }
        }
        return completed;
    }

    /**
     * Applies one written batch with a producer id, unchecked (log replay, and after checks passed).
     *
     * @return the transaction the batch closed if it is a marker closing an open one, else null
     */
    CompletedTxn update(RecordBatch batch) {
        short epoch = batch.producerEpoch();
        long producerId = batch.producerId();
        ProducerStateEntry entry = producers.computeIfAbsent(producerId, id -> new ProducerStateEntry(id, epoch));
        if (batch.isControlBatch()) {
            guards.remove(producerId);
            if (epoch > entry.producerEpoch()) {
                entry.bumpEpoch(epoch);
            }
            long first = entry.currentTxnFirstOffset();
            if (first < 0) {
                return null;
            }
            entry.currentTxnFirstOffset(-1);
            openTransactions.remove(first);
            return new CompletedTxn(producerId, first, batch.baseOffset(), isAbort(batch));
        }
        if (batch.baseSequence() >= 0) {
            entry.add(epoch, ProducerStateEntry.BatchMetadata.of(batch));
        } else if (epoch > entry.producerEpoch()) {
            entry.bumpEpoch(epoch);
        }
        if (batch.isTransactional() && entry.currentTxnFirstOffset() < 0) {
            guards.remove(producerId);
            entry.currentTxnFirstOffset(batch.baseOffset());
            openTransactions.put(batch.baseOffset(), producerId);
        }
        return null;
    }

    private static boolean isAbort(RecordBatch batch) {
        for (Record record : batch) {
            return ControlRecordType.parse(record.key()) == ControlRecordType.ABORT;
        }
        return false;
    }

    /** The first offset of the oldest open transaction, if any is open. */
    OptionalLong firstUnstableOffset() {
        return openTransactions.isEmpty() ? OptionalLong.empty() : OptionalLong.of(openTransactions.firstKey());
    }

    /** Producer id of each open transaction by its first offset, oldest first (a copy). */
    Map<Long, Long> openTransactions() {
        return new TreeMap<>(openTransactions);
    }

    /** Every producer's entry (for describing producers); must not be modified. */
    java.util.Collection<ProducerStateEntry> entries() {
        return java.util.Collections.unmodifiableCollection(producers.values());
    }

    /** Writes the state as of {@code offset} and deletes all but the newest snapshots. */
    void takeSnapshot(long offset) throws IOException {
        ProducerStateSnapshotFile.write(ProducerStateSnapshotFile.file(dir, offset), offset, producers.values());
        TreeSet<Long> offsets = snapshotOffsets();
        while (offsets.size() > SNAPSHOTS_TO_KEEP) {
            deleteSnapshot(offsets.pollFirst(), "only " + SNAPSHOTS_TO_KEEP + " snapshots are kept");
        }
    }

    /** Offsets of the snapshot files in the directory, ascending. */
    TreeSet<Long> snapshotOffsets() throws IOException {
        File[] files = dir.listFiles();
        if (files == null) {
            throw new IOException("Cannot list " + dir);
        }
        TreeSet<Long> offsets = new TreeSet<>();
        for (File file : files) {
            if (ProducerStateSnapshotFile.isSnapshot(file)) {
                offsets.add(LogFiles.offsetFromFileName(file.getName()));
            }
        }
        return offsets;
    }

    /**
     * Replaces the state with the newest readable snapshot between the log start and the log end.
     * Snapshots outside that range (above the end after a truncation, below the start after
     * retention) and unreadable ones are deleted.
     *
     * @return the offset from which the log must replay its batches into the state
     */
    long loadSnapshot(long logStartOffset, long logEndOffset) throws IOException {
        guards.clear();
        producers.clear();
        openTransactions.clear();
        TreeSet<Long> offsets = snapshotOffsets();
        for (Iterator<Long> it = offsets.iterator(); it.hasNext(); ) {
            long offset = it.next();
            if (offset > logEndOffset || offset < logStartOffset) {
                it.remove();
                deleteSnapshot(offset, offset > logEndOffset ? "above the log end " + logEndOffset
                        : "below the log start " + logStartOffset);
            }
        }
        for (long offset : offsets.descendingSet()) {
            File file = ProducerStateSnapshotFile.file(dir, offset);
            try {
                for (ProducerStateEntry entry : ProducerStateSnapshotFile.read(file, offset)) {
                    producers.put(entry.producerId(), entry);
                    if (entry.currentTxnFirstOffset() >= 0) {
                        openTransactions.put(entry.currentTxnFirstOffset(), entry.producerId());
                    }
                }
                log.info("Loaded the state of {} producer(s) of {} from {}", producers.size(), dir.getName(), file);
                return offset;
            } catch (IOException e) {
                producers.clear();
                openTransactions.clear();
                log.warn("Ignoring producer-state snapshot {}: {}; trying an older snapshot or the log", file,
                        e.getMessage());
                deleteSnapshot(offset, "it cannot be read");
            }
        }
        log.info("No producer-state snapshot for {}: rebuilding it from the log start offset {}", dir.getName(),
                logStartOffset);
        return logStartOffset;
    }

    /** Forgets every producer and deletes every snapshot: the log was emptied and starts afresh. */
    void truncateFully() throws IOException {
        guards.clear();
        producers.clear();
        openTransactions.clear();
        for (long offset : snapshotOffsets()) {
            deleteSnapshot(offset, "the log was emptied");
        }
    }

    /** Forgets producers whose last batch is below the new log start, and snapshots below it. */
    void onLogStartOffsetIncremented(long logStartOffset) throws IOException {
        producers.values().removeIf(entry -> entry.lastOffset() < logStartOffset && entry.currentTxnFirstOffset() < 0);
        for (long offset : snapshotOffsets().headSet(logStartOffset)) {
            deleteSnapshot(offset, "below the log start " + logStartOffset);
        }
    }

    private void deleteSnapshot(long offset, String reason) throws IOException {
        File file = ProducerStateSnapshotFile.file(dir, offset);
        log.info("Deleting producer-state snapshot {}: {}", file, reason);
        Files.deleteIfExists(file.toPath());
    }
}
