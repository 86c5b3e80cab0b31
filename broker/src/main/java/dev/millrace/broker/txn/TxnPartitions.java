package dev.millrace.broker.txn;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;

import dev.millrace.delay.Time;
import dev.millrace.protocol.ext.XaXid;

/**
 * The {@code __transaction_state} partitions the coordinator serves (those this broker leads), each a
 * {@link TxnPartition} of one leader epoch, and the fenced write to them: a state is appended only while its
 * partition is still served here in the epoch it was loaded in.
 *
 * <p>Threading: thread-safe. Elections and resignations come from the metadata thread, lookups from request threads
 * and the coordinator thread; {@link #append} runs on the coordinator thread only.
 */
final class TxnPartitions {

    private final TransactionStateTopic topic;
    private final Time time;
    private final Map<Integer, TxnPartition> owned = new ConcurrentHashMap<>();

    TxnPartitions(TransactionStateTopic topic, Time time) {
        this.topic = topic;
        this.time = time;
    }

    /** Serves {@code partition} in {@code leaderEpoch} from now on; returns the new (not yet loaded) partition. */
    TxnPartition elect(int partition, int leaderEpoch) {
        TxnPartition elected = new TxnPartition(partition, leaderEpoch);
        TxnPartition before = owned.put(partition, elected);
        if (before != null) {
            before.loaded.completeExceptionally(new NotCoordinatorException(before + " was replaced by " + elected));
        }
        return elected;
    }

    /** Stops serving {@code partition} if it is served in {@code leaderEpoch}; returns what was dropped, or null. */
    TxnPartition resign(int partition, int leaderEpoch) {
        TxnPartition current = owned.get(partition);
        if (current != null && current.leaderEpoch == leaderEpoch && owned.remove(partition, current)) {
            current.loaded.completeExceptionally(new NotCoordinatorException(current + " moved to another broker"));
            return current;
        }
        return null;
    }

    /** The partition of {@code transactionalId} if it is served here (loaded or not), else null. */
    TxnPartition of(String transactionalId) {
        return owned.get(topic.partitionFor(transactionalId));
    }

    TxnPartition get(int partition) {
        return owned.get(partition);
    }

    Collection<TxnPartition> all() {
        return owned.values();
    }

    /** Whether {@code p} is still the partition served here (not resigned, not re-elected in a newer epoch). */
    boolean isServed(TxnPartition p) {
        return owned.get(p.partition) == p;
    }

    /** Whether {@code p} is still served here and {@code txn} is still its id's state. */
    boolean isCurrent(TxnPartition p, TransactionMetadata txn) {
        return isServed(p) && txn.equals(p.txns.get(txn.transactionalId()));
    }

    /**
     * Why {@code p} (null: not served here) cannot serve a request now, or NONE: NOT_COORDINATOR,
     * COORDINATOR_LOAD_IN_PROGRESS, or COORDINATOR_NOT_AVAILABLE when its load failed.
     */
    Errors refusal(TxnPartition p) {
        if (p == null) {
            return Errors.NOT_COORDINATOR;
        }
        if (!p.loaded.isDone()) {
            return Errors.COORDINATOR_LOAD_IN_PROGRESS;
        }
        if (p.loaded.isCompletedExceptionally()) {
            return isServed(p) ? Errors.COORDINATOR_NOT_AVAILABLE : Errors.NOT_COORDINATOR;
        }
        try {
            return topic.leaderEpoch(p.partition) == p.leaderEpoch ? Errors.NONE : Errors.NOT_COORDINATOR;
        } catch (RuntimeException e) {
            return Errors.NOT_COORDINATOR;
        }
    }

    /** See {@link TransactionCoordinator#whenLoaded}. */
    CompletableFuture<Void> whenLoaded(int partition) {
        TxnPartition p = owned.get(partition);
        return p == null ? CompletableFuture.failedFuture(new NotCoordinatorException(TransactionStateTopic.NAME + "-"
                + partition + " is not led by this broker")) : p.loaded;
    }

    Map<String, TransactionMetadata> describe(Collection<String> transactionalIds) {
        Map<String, TransactionMetadata> out = new LinkedHashMap<>();
        for (String id : transactionalIds) {
            TxnPartition p = of(id);
            TransactionMetadata txn = p == null || !p.isLoaded() ? null : p.txns.get(id);
            if (txn != null) {
                out.put(id, txn);
            }
        }
        return out;
    }

    List<TransactionMetadata> list() {
        List<TransactionMetadata> all = new ArrayList<>();
        for (TxnPartition p : owned.values()) {
            if (p.isLoaded()) {
                all.addAll(p.txns.values());
            }
        }
        return all;
    }

    boolean allLoaded() {
        return owned.values().stream().allMatch(TxnPartition::isLoaded);
    }

    /**
     * Appends the new state to its partition {@code p}, fenced by the epoch {@code p} was loaded in, and makes it
     * current. Coordinator thread.
     *
     * @throws NotCoordinatorException if {@code p} is no longer served here in that epoch
     */
    void append(TxnPartition p, TransactionMetadata txn) {
        appendRecords(p, List.<byte[][]>of(new byte[][] {TxnLogRecordSerde.serializeKey(txn.transactionalId()),
                TxnLogRecordSerde.serializeValue(txn)}));
        p.txns.put(txn.transactionalId(), txn);
    }

    /**
     * Appends the new state of an XA branch and, if {@code txn} is not null, of its transactional id, in one batch
     * (both or neither), fenced as {@link #append}, and makes them current. Coordinator thread.
     */
    void appendBranch(TxnPartition p, XaBranch branch, TransactionMetadata txn) {
        List<byte[][]> records = new ArrayList<>();
        records.add(new byte[][] {TxnLogRecordSerde.serializeBranchKey(branch.xid()),
                TxnLogRecordSerde.serializeBranchValue(branch)});
        if (txn != null) {
            records.add(new byte[][] {TxnLogRecordSerde.serializeKey(txn.transactionalId()),
                    TxnLogRecordSerde.serializeValue(txn)});
        }
        appendRecords(p, records);
        p.putBranch(branch);
        if (txn != null) {
            p.txns.put(txn.transactionalId(), txn);
        }
    }

    /** Appends a tombstone for the XA branch {@code xid}, fenced as {@link #append}, and forgets it. */
    void removeBranch(TxnPartition p, XaXid xid) {
        appendRecords(p, List.<byte[][]>of(new byte[][] {TxnLogRecordSerde.serializeBranchKey(xid), null}));
        p.removeBranch(xid);
    }

    /** Whether {@code p} is still served here and {@code branch} is still its Xid's state. */
    boolean isCurrent(TxnPartition p, XaBranch branch) {
        return isServed(p) && branch.equals(p.branches.get(branch.xid()));
    }

    /** Appends {key, value (null: tombstone)} pairs as one batch, fenced by the epoch {@code p} was loaded in. */
    private void appendRecords(TxnPartition p, List<byte[][]> records) {
        int currentEpoch;
        try {
            currentEpoch = topic.leaderEpoch(p.partition);
        } catch (NotLeaderOrFollowerException e) {
            throw new NotCoordinatorException(p + " is no longer led by this broker: " + e.getMessage());
        }
        if (!isServed(p) || currentEpoch != p.leaderEpoch) {
            throw new NotCoordinatorException(p + " is no longer served here (its leader epoch is now "
                    + currentEpoch + ")");
        }
        int size = 128;
        for (byte[][] r : records) {
            size += r[0].length + (r[1] == null ? 0 : r[1].length) + 32;
        }
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(size), Compression.NONE,
                TimestampType.CREATE_TIME, 0L);
        long now = time.milliseconds();
        for (byte[][] r : records) {
            builder.append(now, r[0], r[1]);
        }
        topic.log(p.partition).appendAsLeader(builder.build(), p.leaderEpoch);
    }
}
