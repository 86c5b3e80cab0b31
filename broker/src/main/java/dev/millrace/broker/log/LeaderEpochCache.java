package dev.millrace.broker.log;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader-epoch history of one partition log: for each leader epoch under which records were
 * written, the first offset written under it ({@link EpochEntry}), sorted. Replication uses it to find
 * where a follower's log diverges from the leader's ({@link #endOffsetFor}, Kafka's OffsetsForLeaderEpoch
 * of KIP-101/KIP-279).
 *
 * <pre>
 *   entries:  (epoch 0, start 0)   (epoch 2, start 1500)   (epoch 5, start 98000)
 *   offsets:  [0 ........ 1499]    [1500 ....... 97999]    [98000 ...... logEnd)
 *              written under 0      written under 2         written under 5 (latest)
 * </pre>
 *
 * <p>Invariants: epochs and start offsets both strictly increase from entry to entry. {@link #assign}
 * keeps them so: an epoch not above the latest is ignored (for the same epoch the earlier start stays),
 * and a new entry replaces the entries whose start offset is not below its own (start offsets only
 * grow, as in Kafka). The owning {@link PartitionLog} keeps every entry inside the log: it truncates the
 * cache with the log ({@link #truncateFromEnd}) and moves it with the log start ({@link #truncateFromStart}).
 *
 * <p>Persistence: every change is written to {@code <partition dir>/leader-epoch-checkpoint} (format in
 * {@link LeaderEpochCheckpointFile}) before it becomes visible; a failed write throws
 * {@link UncheckedIOException} and leaves the cache as it was. The log assigns an epoch before it writes
 * the records of that epoch, so the file never lacks an epoch that the data holds; entries past the log
 * end after a crash are cut when the log opens. A missing or unreadable file is rebuilt from the
 * batches' {@code partitionLeaderEpoch} ({@link #load}).
 *
 * <p>Thread-safety: thread-safe. Changes serialize on this object's monitor (the log calls them under
 * its appender lock anyway) and publish an immutable list through a volatile field (copy-on-write), so
 * reads from request threads take no lock and always see a consistent history.
 */
public final class LeaderEpochCache {

    private static final Logger log = LoggerFactory.getLogger(LeaderEpochCache.class);

    private final LeaderEpochCheckpointFile checkpoint;
    private volatile List<EpochEntry> entries;

    LeaderEpochCache(File file, List<EpochEntry> entries) {
        this.checkpoint = new LeaderEpochCheckpointFile(file);
        this.entries = List.copyOf(entries);
    }

    /**
     * Opens the cache stored in {@code file}; empty if the file does not exist.
     *
     * @throws IOException if the file exists but cannot be read or is not a valid checkpoint
     */
    public static LeaderEpochCache open(File file) throws IOException {
        return new LeaderEpochCache(file, new LeaderEpochCheckpointFile(file).read().orElse(List.of()));
    }

    /**
     * Loads the cache of the log in {@code dir}: from its checkpoint, or, if that is missing or unreadable
     * (logged), rebuilt from the batches of {@code segments} (the first offset of each new epoch) and
     * written. Entries at or past {@code logEndOffset} are then removed and the first kept epoch starts
     * no lower than {@code logStartOffset}.
     */
    static LeaderEpochCache load(File dir, Collection<LogSegment> segments, long logStartOffset, long logEndOffset)
            throws IOException {
        File file = new File(dir, LogFiles.LEADER_EPOCH_CHECKPOINT);
        LeaderEpochCheckpointFile checkpoint = new LeaderEpochCheckpointFile(file);
        Optional<List<EpochEntry>> stored;
        try {
            stored = checkpoint.read();
            if (stored.isEmpty() && logEndOffset > logStartOffset) {
                log.warn("Leader epoch checkpoint {} is missing: rebuilding it from the batches of the log", file);
            }
        } catch (IOException e) {
            log.warn("Rebuilding leader epoch checkpoint from the batches of the log: {}", e.getMessage());
            stored = Optional.empty();
        }
        LeaderEpochCache cache;
        if (stored.isPresent()) {
            cache = new LeaderEpochCache(file, stored.get());
        } else {
            cache = new LeaderEpochCache(file, rebuild(segments, logEndOffset));
            cache.persist(cache.entries);
        }
        cache.truncateFromEnd(logEndOffset);
        cache.truncateFromStart(logStartOffset);
        return cache;
    }

    /** The epoch history that the batches carry, by the rules of {@link #assign}. */
    private static List<EpochEntry> rebuild(Collection<LogSegment> segments, long logEndOffset) {
        List<EpochEntry> rebuilt = List.of();
        for (LogSegment segment : segments) {
            try {
                for (RecordBatch batch : segment.records().batches()) {
                    if (batch.baseOffset() >= logEndOffset) {
                        break;
                    }
                    if (batch.partitionLeaderEpoch() >= 0) {
                        rebuilt = withAssigned(rebuilt, batch.partitionLeaderEpoch(), batch.baseOffset());
                    }
                }
            } catch (KafkaException e) {
                log.warn("Stopped rebuilding the leader epochs at an unreadable batch of {}: {}", segment.file(),
                        e.getMessage());
                break;
            }
        }
        return rebuilt;
    }

    /**
     * Records that {@code epoch} starts at {@code startOffset}. Ignored if {@code epoch} is not above the
     * latest epoch. Entries whose start offset is at or above {@code startOffset} are replaced (logged).
     * Persists when the cache changes.
     *
     * @throws IllegalArgumentException if the epoch or the offset is negative
     * @throws UncheckedIOException     if the checkpoint cannot be written (the cache is then unchanged)
     */
    public void assign(int epoch, long startOffset) {
        if (epoch < 0 || startOffset < 0) {
            throw new IllegalArgumentException("Cannot assign leader epoch " + epoch + " at offset " + startOffset
                    + " in " + checkpoint.file() + ": both must be 0 or more");
        }
        List<EpochEntry> current = entries;
        if (!current.isEmpty() && epoch <= current.get(current.size() - 1).epoch()) {
            return;
        }
        synchronized (this) {
            List<EpochEntry> updated = withAssigned(entries, epoch, startOffset);
            if (updated != entries) {
                persist(updated);
            }
        }
    }

    /** {@code current} with the entry added by the rules of {@link #assign}, or {@code current} itself if unchanged. */
    private static List<EpochEntry> withAssigned(List<EpochEntry> current, int epoch, long startOffset) {
        if (!current.isEmpty() && epoch <= current.get(current.size() - 1).epoch()) {
            return current;
        }
        int keep = current.size();
        while (keep > 0 && current.get(keep - 1).startOffset() >= startOffset) {
            keep--;
        }
        if (keep < current.size()) {
            log.warn("Leader epoch {} starts at offset {}, not after the start of {}: those entries are replaced",
                    epoch, startOffset, current.subList(keep, current.size()));
        }
        List<EpochEntry> updated = new ArrayList<>(current.subList(0, keep));
        updated.add(new EpochEntry(epoch, startOffset));
        return updated;
    }

    public OptionalInt latestEpoch() {
        List<EpochEntry> current = entries;
        return current.isEmpty() ? OptionalInt.empty() : OptionalInt.of(current.get(current.size() - 1).epoch());
    }

    /** The start offset of exactly {@code epoch}, if the cache holds it. */
    public OptionalLong startOffsetOf(int epoch) {
        for (EpochEntry entry : entries) {
            if (entry.epoch() == epoch) {
                return OptionalLong.of(entry.startOffset());
            }
        }
        return OptionalLong.empty();
    }

    /** The entries, oldest first (an immutable snapshot). */
    public List<EpochEntry> entries() {
        return entries;
    }

    /**
     * Where {@code requestedEpoch} ends in this log, as OffsetsForLeaderEpoch answers a follower:
     * <ul>
     *   <li>the latest epoch: (latest epoch, {@code logEndOffset});</li>
     *   <li>an epoch between the first and the latest: the largest known epoch at or below it, ending
     *       where the next known epoch starts (an epoch this log never saw maps to the one before it);</li>
     *   <li>below the first epoch, above the latest, or an empty cache: {@link EpochEndOffset#UNDEFINED},
     *       and the follower falls back to its high watermark. (Kafka since 2.1, KAFKA-7415, answers below
     *       the first epoch with the first start offset instead; this cache keeps KIP-101's answer.)</li>
     * </ul>
     */
    public EpochEndOffset endOffsetFor(int requestedEpoch, long logEndOffset) {
        List<EpochEntry> current = entries;
        if (current.isEmpty() || requestedEpoch < current.get(0).epoch()) {
            return EpochEndOffset.UNDEFINED;
        }
        EpochEntry latest = current.get(current.size() - 1);
        if (requestedEpoch == latest.epoch()) {
            return new EpochEndOffset(latest.epoch(), logEndOffset);
        }
        if (requestedEpoch > latest.epoch()) {
            return EpochEndOffset.UNDEFINED;
        }
        int floor = 0;
        while (current.get(floor + 1).epoch() <= requestedEpoch) {
            floor++;
        }
        return new EpochEndOffset(current.get(floor).epoch(), current.get(floor + 1).startOffset());
    }

    /** Removes the entries whose start offset is at or above {@code endOffset} (the log was cut there). */
    public void truncateFromEnd(long endOffset) {
        synchronized (this) {
            List<EpochEntry> current = entries;
            int keep = current.size();
            while (keep > 0 && current.get(keep - 1).startOffset() >= endOffset) {
                keep--;
            }
            if (keep < current.size()) {
                log.info("Removing leader epochs {} from {}: the log ends at {}", current.subList(keep, current.size()),
                        checkpoint.file(), endOffset);
                persist(current.subList(0, keep));
            }
        }
    }

    /**
     * Drops the entries wholly below {@code startOffset} (the next entry starts at or below it) and moves
     * the start of the first remaining epoch up to {@code startOffset} if it began below it.
     */
    public void truncateFromStart(long startOffset) {
        synchronized (this) {
            List<EpochEntry> current = entries;
            int first = 0;
            while (first + 1 < current.size() && current.get(first + 1).startOffset() <= startOffset) {
                first++;
            }
            if (current.isEmpty() || first == 0 && current.get(0).startOffset() >= startOffset) {
                return;
            }
            List<EpochEntry> updated = new ArrayList<>(current.subList(first, current.size()));
            EpochEntry head = updated.get(0);
            if (head.startOffset() < startOffset) {
                updated.set(0, new EpochEntry(head.epoch(), startOffset));
            }
            persist(updated);
        }
    }

    /** Removes every entry and writes the empty checkpoint. */
    public void clearAndFlush() {
        synchronized (this) {
            persist(List.of());
        }
    }

    /** Writes {@code updated} and then publishes it; the caller holds the monitor. */
    private void persist(List<EpochEntry> updated) {
        List<EpochEntry> copy = List.copyOf(updated);
        try {
            checkpoint.write(copy);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not write leader epoch checkpoint " + checkpoint.file(), e);
        }
        entries = copy;
    }

    File file() {
        return checkpoint.file();
    }

    @Override
    public String toString() {
        return "LeaderEpochCache(" + checkpoint.file() + ", " + entries + ")";
    }
}
