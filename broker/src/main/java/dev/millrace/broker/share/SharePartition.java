package dev.millrace.broker.share;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;

import dev.millrace.broker.log.BatchCursor;
import dev.millrace.broker.log.BatchCut;
import dev.millrace.broker.log.BatchSubset;
import dev.millrace.delay.Time;
import dev.millrace.delay.Timer;
import dev.millrace.delay.TimerTask;
import dev.millrace.protocol.selector.Selector;

/**
 * One share group's view of one topic partition: which offsets are done, which are handed to which
 * member under a lock, and how often each was delivered.
 *
 * <pre>
 *   offsets:  ... done ... | start offset ............ in flight ............ | end offset ... not yet read ...
 *                           [ ACKNOWLEDGED | ARCHIVED | AVAILABLE | ACQUIRED ]
 *                           at most group.share.partition.max.record.locks offsets
 * </pre>
 *
 * Every offset from the start offset (inclusive) to the end offset (exclusive) has a state; below
 * the start offset all are done; the start offset moves up as soon as its record is done. A record
 * at or above the end offset has never been delivered and is acquired straight from the log. An
 * offset in between without an entry has never been delivered either: it is AVAILABLE with delivery
 * count 0. Selective scans pass over records they do not match without making entries for them, and
 * a restore makes none for them, so records nobody matches cost no memory while they wait.
 *
 * <pre>
 *                          acquire (delivery count + 1, lock for record.lock.duration.ms)
 *   (new) ──▶ AVAILABLE ──────────────────────────────────────────────▶ ACQUIRED
 *               ▲  ▲                                                      │ │ │ │
 *               │  └──── release / lock expiry / member gone,  ◀──────────┘ │ │ │ renew: lock extended
 *               │        count &lt; delivery.count.limit (after the          │ │ │
 *               │        redelivery backoff, if any)                        │ │ │
 *               │                                                           │ │ │
 *   ACKNOWLEDGED ◀── accept ────────────────────────────────────────────────┘ │ │
 *   ARCHIVED     ◀── reject (dead-lettered "rejected") ───────────────────────┘ │
 *   ARCHIVED     ◀── release / lock expiry with count &gt;= limit                  │
 *                    (dead-lettered "delivery-count-limit") ◀───────────────────┘
 *   ARCHIVED     ◀── gap: no record at the offset (compacted, control record); never delivered
 * </pre>
 *
 * Only the member holding a record's lock can acknowledge it; acknowledgements for other offsets
 * are skipped and the partition answers INVALID_RECORD_STATE (the valid ones still apply).
 * Lock expiry and the end of a redelivery backoff are timer tasks on the broker's timing wheel.
 *
 * <p>Selective acquisition (members with a JMS selector, {@link dev.millrace.protocol.selector.MemberSelector}):
 * such a member acquires only the AVAILABLE records its selector matches, evaluated with the delivery count the
 * record would get (JMSXDeliveryCount). A record it does not match is not acquired and keeps its state and delivery
 * count, for other members; a record no member matches stays on the partition (JMS semantics) and holds the start
 * offset back. So that such records at the head do not hide matching ones behind them, a selective acquisition reads
 * on, batch after batch, past records it does not match. <b>Decisions:</b> the scan is bounded by a window of its own,
 * {@code group.share.selective.window.records} offsets from the start offset (the lock window, {@code
 * group.share.partition.max.record.locks}, bounds members without a selector); records passed over unmatched get no
 * entry (they are never-delivered offsets, see above), so they cost no memory; each selector keeps a cursor below
 * which every available record was found unmatched, so its next scan starts there (a record that becomes available
 * again below it, by a release, a lock expiry or a transaction abort, lowers it; one waiting out a redelivery backoff
 * holds it back); one acquisition reads at most {@code SELECTIVE_READS_PER_FETCH} times a fetch's bytes; and the
 * response carries only the acquired records, each batch cut down to them ({@link BatchCut}, which copies the records
 * as stored; {@link BatchSubset} for batches the cursor cannot walk), so the records passed over never cross the
 * network and a fetch's bytes are filled with matches. After a selective acquisition
 * the member's next scan starts at once on the manager's lookahead thread ({@link SelectiveLookahead}), off the
 * monitor, while the consumer processes what it got; its next fetch waits for that scan if it has begun (up to
 * {@code LOOKAHEAD_WAIT_MS}) and takes its matches if the cursor has not moved, else scans for itself. A selector's
 * first fetch (no cursor yet) that will have a lookahead returns after the first read that found matches (about a
 * hundred at one in ten) rather than reading on for a full fetch: nothing runs ahead of it, and a full first scan
 * (10,000 records for 1,000 matches, 5-13 ms) delayed a new consumer's first message by that much while the lookahead,
 * scheduled at once, can scan the rest while the consumer takes the first ones. A subscription selector ({@link
 * MemberFilter#archiveUnmatched()}, JMS
 * shared subscriptions) archives the records it does not match instead, so nothing piles up at the head.
 *
 * <p>Threading: thread-safe. State is guarded by this object's monitor; the
 * {@link SharePartitionListener} is called after the monitor is released, so a listener may call
 * into other partitions without lock-ordering concerns.
 */
public final class SharePartition {

    /**
     * A share-partition with more in-flight entries than this saves deltas between full values ({@link
     * #encodedState()}): a full value of that many entries is at most 4096 runs of 15 bytes.
     */
    static final int DELTA_ABOVE_ENTRIES = 4096;
    /** A full value is written instead of a delta once the deltas since the last one add up to its size, or this. */
    static final int MIN_DELTA_BYTES_BEFORE_FULL = 256 * 1024;

    /** Log reads (of up to a fetch's max bytes each) one selective acquisition may make. */
    static final int SELECTIVE_READS_PER_FETCH = 16;
    /** Bytes of the log one read of a selective scan takes in (at most the fetch's). */
    static final int SELECTIVE_READ_BYTES = 1 << 20;
    /** Most bytes of matches a {@link SelectiveLookahead} keeps for its member's next fetch. */
    static final int LOOKAHEAD_MAX_BYTES = 4 << 20;
    /** How long a selective fetch waits for its member's lookahead still scanning before it scans for itself. */
    static final long LOOKAHEAD_WAIT_MS = 200;

    private final SharePartitionKey key;
    private final ShareLog log;
    /** Replaced when the group's settings change ({@link #reconfigure}). */
    private volatile ShareGroupConfig config;
    private final Timer timer;
    private final Time time;
    private final SharePartitionListener listener;
    private final InFlightWindow inFlight = new InFlightWindow();
    private final SelectorMatcher matcher = new SelectorMatcher();
    private final BatchCursor batchCursor = new BatchCursor();
    /** Cuts the batch {@link #batchCursor} walks down to the records a selective acquisition took. */
    private final BatchCut batchCut = new BatchCut(batchCursor);
    private final ScanReader scanReader = new ScanReader();
    private long startOffset;
    private long endOffset;
    private long nextAcquisitionId = 1;
    /**
     * Per selector (by identity; dropped with its member): every offset from the start offset up to this one that
     * is available was found not to match it, so its next scan starts here. Lowered to any offset that becomes
     * available again (release, lock expiry, abort); cleared when the state is replaced.
     */
    private final Map<Selector, Long> unmatchedBelow = new java.util.WeakHashMap<>();
    /** Per selector (as above): its next scan, run ahead of its member's next fetch; see {@link SelectiveLookahead}. */
    private final Map<Selector, SelectiveLookahead> lookaheads = new java.util.WeakHashMap<>();
    private final Executor lookaheadExecutor;
    /** Set by {@link #firstAcquirable}; read right after, under the monitor. */
    private long headWaiting = Long.MAX_VALUE;
    private long snapshotVersion;
    /**
     * Offsets whose entry changed since the last {@link #encodedState()} (repeats allowed), for a delta save; not kept
     * while {@link #fullNeeded}. Under the monitor.
     */
    private final OffsetList changed = new OffsetList();
    /** The next save must be a full value: none written yet, the state was replaced, or the changes overflowed. */
    private boolean fullNeeded = true;
    /** Bytes of the deltas saved since the last full value, and that full value's size. Under the monitor. */
    private long deltaBytesSinceFull;
    private long lastFullBytes;
    /** In-flight entries above which saves become deltas ({@link #encodedState()}); tests lower it. */
    private int deltaAboveEntries = DELTA_ABOVE_ENTRIES;
    /**
     * The pending lock timer of each acquisition that still has a record ACQUIRED under it, by acquisition id. A
     * timer is cancelled as soon as its last record is settled (accepted, released, rejected, archived), so that a
     * consumer that keeps up leaves no timer waiting out the lock duration: with the default 30 s lock, a queue
     * consumed at 100,000 records/s would otherwise hold three million offsets in pending timers, all of them copied
     * by every young collection. Under the monitor.
     */
    private final Map<Long, LockTimeout> lockTimeouts = new HashMap<>();
    /** The timer {@link #unlocked} found last, while it is still in {@link #lockTimeouts}. Under the monitor. */
    private LockTimeout lastUnlocked;
    /**
     * The leader epoch of the topic-partition this share-partition was created in (-1: none, tests and single-node
     * stores that do not fence); its state writes carry it ({@link ShareStateCoordinator}).
     */
    private volatile int leaderEpoch = -1;
    /** Dropped because this broker stopped leading the topic-partition ({@link #close()}). */
    private volatile boolean closed;
    /** Whether restored holds or {@link #copies} wait for {@link #settleRestore()} (read without the monitor). */
    private volatile boolean restorePending;
    /** The dead-letter copies this partition owes, saved with its state. Under the monitor. */
    private final DeadLetterCopies copies;
    /** Its records held for producer transactions, saved with its state. Under the monitor. */
    private final TransactionHolds holds = new TransactionHolds();
    /** Holds {@link #restore} kept, whose markers {@link #settleRestore()} has yet to look for. Under the monitor. */
    private boolean restoredHoldsUnchecked;

    /**
     * @param startOffset where the partition starts: the log start (earliest), the high watermark
     *                    (latest), or a persisted start offset
     */
    public SharePartition(SharePartitionKey key, ShareLog log, ShareGroupConfig config, Timer timer, Time time,
                          SharePartitionListener listener, long startOffset) {
        this(key, log, config, timer, time, listener, startOffset, null);
    }

    /**
     * As the other constructor, with {@code lookaheadExecutor} to run selective members' next scans ahead of their
     * fetches ({@link SelectiveLookahead}); null for none (each fetch scans for itself).
     */
    public SharePartition(SharePartitionKey key, ShareLog log, ShareGroupConfig config, Timer timer, Time time,
                          SharePartitionListener listener, long startOffset, Executor lookaheadExecutor) {
        this.lookaheadExecutor = lookaheadExecutor;
        this.key = Objects.requireNonNull(key, "key");
        this.log = Objects.requireNonNull(log, "log");
        this.config = Objects.requireNonNull(config, "config");
        this.timer = Objects.requireNonNull(timer, "timer");
        this.time = Objects.requireNonNull(time, "time");
        this.listener = Objects.requireNonNull(listener, "listener");
        this.startOffset = startOffset;
        this.endOffset = startOffset;
        this.copies = new DeadLetterCopies(key);
    }

    /**
     * Uses {@code config} from now on (a group's delivery count limit or redelivery backoff changed); records
     * already waiting out a backoff keep their time.
     */
    public void reconfigure(ShareGroupConfig config) {
        this.config = Objects.requireNonNull(config, "config");
    }

    public SharePartitionKey key() {
        return key;
    }

    /** The leader epoch of the topic-partition this share-partition serves in; -1 if not fenced. */
    public int leaderEpoch() {
        return leaderEpoch;
    }

    /** Sets {@link #leaderEpoch()}; once, before the partition is used. */
    void leaderEpoch(int leaderEpoch) {
        this.leaderEpoch = leaderEpoch;
    }

    /**
     * Drops this share-partition: this broker stopped leading its topic-partition, and its new leader loads the state
     * last saved. From now on it acquires nothing, refuses acknowledgements (NOT_LEADER_OR_FOLLOWER), its lock timers
     * are cancelled and nothing it does is saved, dead-lettered or signalled: the records it held come back at the new
     * leader (their acquisition was saved, so they count as delivered once, unless their holder returns them there),
     * and are released or dead-lettered there only.
     */
    public void close() {
        synchronized (this) {
            closed = true;
            cancelLockTimeouts();
            lookaheads.values().forEach(SelectiveLookahead::cancel);
            lookaheads.clear();
        }
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosed() {
        return closed;
    }

    public ShareLog log() {
        return log;
    }

    /**
     * Acquires up to {@code maxRecords} available records for {@code memberId}, the earliest first:
     * released records that are due, then records never delivered, within the in-flight window.
     */
    public AcquireResult acquire(String memberId, int maxRecords, int maxBytes) {
        return acquire(memberId, null, maxRecords, maxBytes);
    }

    /**
     * As {@link #acquire(String, int, int)} for a member with a JMS selector (null: none): only records the selector
     * matches are acquired; the others stay AVAILABLE for other members, their delivery count unchanged, or are
     * archived when the filter says so. See the class comment for how far a selective acquisition looks.
     */
    public AcquireResult acquire(String memberId, MemberFilter filter, int maxRecords, int maxBytes) {
        if (filter != null) {
            SelectiveLookahead ahead;
            synchronized (this) {
                ahead = lookaheads.get(filter.selector());
            }
            if (ahead != null && ahead.started()) {
                // off the monitor: it is scanning what this fetch would scan; one still queued behind other
                // partitions' lookaheads is not waited for (the fetch cancels it and scans for itself)
                ahead.awaitDone(LOOKAHEAD_WAIT_MS);
            }
        }
        Events events = new Events();
        AcquireResult result;
        synchronized (this) {
            if (closed) {
                return AcquireResult.EMPTY;
            }
            result = acquireLocked(memberId, filter, Math.max(1, maxRecords), Math.max(1, maxBytes), events);
        }
        events.fire();
        return result;
    }

    /**
     * Applies a member's acknowledgements. Offsets the member does not hold are skipped.
     *
     * @return NONE, INVALID_RECORD_STATE if some offsets were not held by the member, or
     *         INVALID_REQUEST for an unknown acknowledge type or a malformed batch
     */
    public Errors acknowledge(String memberId, List<AcknowledgementBatch> batches) {
        Events events = new Events();
        Errors error;
        synchronized (this) {
            if (closed) {
                return Errors.NOT_LEADER_OR_FOLLOWER;
            }
            error = acknowledgeLocked(memberId, batches, events);
        }
        events.fire();
        return error;
    }

    /**
     * Releases every record {@code memberId} holds (its share session closed or it left the group). The member did not
     * ask for it, so each keeps its acquisition's count but may still be returned ({@link #returnAcquired}): a member
     * fenced and rejoining returns what it had read ahead and never handed out.
     */
    public void releaseMember(String memberId) {
        Events events = new Events();
        synchronized (this) {
            long now = time.hiResClockMs();
            for (long offset = inFlight.nextKey(0); offset >= 0; offset = inFlight.nextKey(offset + 1)) {
                InFlightRecord record = inFlight.get(offset);
                if (record.isHeldBy(memberId) && !record.isHeldForTransaction()) {
                    releaseOrArchive(offset, record, now, false, events);
                    record.lockLost = record.state == RecordState.AVAILABLE;
                }
            }
            maybeAdvanceStart(events);
        }
        events.fire();
    }

    /**
     * Gives back offsets {@code firstOffset}..{@code lastOffset} that {@code memberId} acquired but never delivered
     * (the ShareSettle extension's RETURN): each becomes AVAILABLE at once with its delivery count lowered by the
     * acquisition that is undone, so no backoff, no raised count and no dead-lettering follow from it. Offsets the
     * member does not hold, or holds for a transaction, are left as they are.
     *
     * <p>The same undoes an acquisition whose lock was lost without the member settling it: with an earlier leader
     * (restored here), to its lock's expiry, or to the member's removal from the group. A consumer whose read-ahead
     * records lost their locks so returns them, and a record released that way and not acquired since
     * ({@link InFlightRecord#lockLost}) gets its count lowered once, so that a failover, a renewal that could not
     * reach the leader in time or a rejoin does not count as a delivery of a record the application never received
     * (JMSXDeliveryCount, the dead-letter rule). The leader does not keep which member held the lost lock; members of a
     * group are trusted with it as they are with RELEASE and REJECT. A record acquired again since keeps its count.
     *
     * @return NONE, or INVALID_RECORD_STATE if some offsets were neither held by the member nor restored from a lost
     *         lock
     */
    public Errors returnAcquired(String memberId, long firstOffset, long lastOffset) {
        Events events = new Events();
        boolean skipped = false;
        synchronized (this) {
            long now = time.hiResClockMs();
            long from = Math.max(firstOffset, startOffset);
            long to = Math.min(lastOffset, endOffset - 1);
            skipped = from != firstOffset || to != lastOffset; // offsets outside the window: none held
            for (long offset = from; offset <= to; offset++) {
                InFlightRecord record = inFlight.get(offset);
                if (record != null && record.state == RecordState.AVAILABLE && record.lockLost) {
                    record.lockLost = false;
                    record.deliveryCount = Math.max(0, record.deliveryCount - 1);
                    record.availableAtMs = Math.min(record.availableAtMs, now);
                    changedAt(offset);
                    events.changed = true;
                    events.available = true;
                    continue;
                }
                if (record == null || !record.isHeldBy(memberId) || record.isHeldForTransaction()) {
                    skipped = true;
                    continue;
                }
                // undo the acquisition's count, then release without backoff: the count is back below the limit it
                // was at most at acquisition, so this archives nothing (unless the group's limit was lowered since)
                record.deliveryCount = Math.max(0, record.deliveryCount - 1);
                releaseOrArchive(offset, record, now, false, events);
            }
            maybeAdvanceStart(events);
        }
        events.fire();
        return skipped ? Errors.INVALID_RECORD_STATE : Errors.NONE;
    }

    /** Whether every one of {@code offsets} is acquired by {@code memberId} now (held for a transaction or not). */
    public synchronized boolean acquiredBy(String memberId, List<Long> offsets) {
        for (long offset : offsets) {
            InFlightRecord record = inFlight.get(offset);
            if (record == null || !record.isHeldBy(memberId)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Holds {@code offsets}, all acquired by {@code memberId}, for the transaction of {@code producerId}
     * (TxnShareAcknowledge): all of them or, if one is not held by the member (or is held for another
     * transaction), none.
     *
     * @return NONE, or INVALID_RECORD_STATE naming nothing changed
     */
    public Errors holdForTransaction(String memberId, List<Long> offsets, long producerId) {
        Events events = new Events();
        synchronized (this) {
            for (long offset : offsets) {
                InFlightRecord record = inFlight.get(offset);
                if (record == null || !record.isHeldBy(memberId) || (record.isHeldForTransaction()
                        && record.transactionProducerId != producerId)) {
                    return Errors.INVALID_RECORD_STATE;
                }
            }
            long scanFrom = log.logEndOffset(); // the transaction's marker comes after this
            for (long offset : offsets) {
                inFlight.get(offset).transactionProducerId = producerId;
                holds.hold(offset, producerId, scanFrom);
            }
            events.changed = true;
        }
        events.fire(); // saved before the hold is answered: the transaction may commit once it is
        return Errors.NONE;
    }

    /**
     * The transaction of {@code producerId} ended: its held records are accepted (commit) or released as by a
     * RELEASE (abort). Called once its markers are written; a second call finds nothing.
     */
    public void completeTransaction(long producerId, boolean commit) {
        Events events = new Events();
        synchronized (this) {
            long now = time.hiResClockMs();
            for (long offset = inFlight.nextKey(0); offset >= 0; offset = inFlight.nextKey(offset + 1)) {
                InFlightRecord record = inFlight.get(offset);
                if (record.isHeldForTransaction() && record.transactionProducerId == producerId) {
                    if (commit) {
                        finish(offset, record, RecordState.ACKNOWLEDGED);
                        changedAt(offset);
                        events.changed = true;
                    } else {
                        releaseOrArchive(offset, record, now, true, events);
                    }
                }
            }
            maybeAdvanceStart(events);
        }
        events.fire();
    }

    public synchronized long startOffset() {
        return startOffset;
    }

    public synchronized long endOffset() {
        return endOffset;
    }

    /** The state of {@code offset}: terminal below the start offset, empty at or above the end offset. */
    public synchronized Optional<RecordState> state(long offset) {
        if (offset < startOffset) {
            return Optional.of(RecordState.ACKNOWLEDGED);
        }
        if (offset < endOffset && !inFlight.containsKey(offset)) {
            return Optional.of(RecordState.AVAILABLE); // never delivered
        }
        InFlightRecord record = inFlight.get(offset);
        return record == null ? Optional.empty() : Optional.of(record.state);
    }

    /** The delivery count of an in-flight offset, 0 if it is not in flight. */
    public synchronized int deliveryCount(long offset) {
        InFlightRecord record = inFlight.get(offset);
        return record == null ? 0 : record.deliveryCount;
    }

    /**
     * The state to save, taking the next snapshot version: the save path, which runs for every state change. A full
     * value ({@link ShareStateSerde}), written straight from the in-flight map, while the partition has at most
     * {@link #DELTA_ABOVE_ENTRIES} in-flight entries; above that a delta of the entries changed since the previous
     * save, and a full value again once the deltas since the last one add up to its size (at least {@link
     * #MIN_DELTA_BYTES_BEFORE_FULL}), so that a save costs about what changed and the deltas to replay stay bounded.
     * Measured before deltas: a 200,000-record queue whose selector matched one record in ten wrote 4.1 MB of state
     * while it was consumed, its last saves about 460 KB each.
     *
     * <p>A delta is relative to the save before it, so the caller must write the states it takes in the order it took
     * them, each before the next is taken, and call {@link #saveFailed()} when one could not be written.
     */
    public synchronized EncodedState encodedState() {
        long version = ++snapshotVersion;
        if (fullNeeded || inFlight.size() <= deltaAboveEntries
                || deltaBytesSinceFull >= Math.max(lastFullBytes, MIN_DELTA_BYTES_BEFORE_FULL)) {
            byte[] value = ShareStateSerde.value(version, startOffset, endOffset, inFlight, copies.state(),
                    holds.state());
            changed.clear();
            fullNeeded = false;
            deltaBytesSinceFull = 0;
            lastFullBytes = value.length;
            return new EncodedState(true, version, value);
        }
        long[] offsets = changed.toArray();
        java.util.Arrays.sort(offsets);
        int distinct = 0;
        for (int i = 0; i < offsets.length; i++) {
            if (i == 0 || offsets[i] != offsets[i - 1]) {
                offsets[distinct++] = offsets[i];
            }
        }
        byte[] value = ShareStateSerde.deltaValue(version, startOffset, endOffset, inFlight,
                java.util.Arrays.copyOf(offsets, distinct), copies.state(), holds.state());
        changed.clear();
        deltaBytesSinceFull += value.length;
        return new EncodedState(false, version, value);
    }

    /** The last state taken could not be written: the next save is a full value. */
    public synchronized void saveFailed() {
        fullNeeded = true;
        changed.clear();
    }

    /** Saves above {@code entries} in-flight entries become deltas (tests). */
    synchronized void deltaAboveEntries(int entries) {
        deltaAboveEntries = entries;
    }

    /**
     * A state to save ({@link #encodedState()}): a full value, or a delta over the save before it, in the layouts of
     * {@link ShareStateSerde}.
     */
    public record EncodedState(boolean full, long version, byte[] value) {
    }

    /** The entry at {@code offset} changed: it goes into the next delta. Under the monitor. */
    private void changedAt(long offset) {
        if (fullNeeded) {
            return; // the next save writes everything
        }
        changed.add(offset);
        if (changed.size() > 4 * Math.max(inFlight.size(), deltaAboveEntries)) {
            // no save has taken the changes for a while (a store that does not save): stop keeping them
            fullNeeded = true;
            changed.clear();
        }
    }

    /** The state was replaced wholesale: the next save is a full value. Under the monitor. */
    private void replaced() {
        fullNeeded = true;
        changed.clear();
    }

    /** A consistent copy of the state, for describe and browsing. */
    public synchronized SharePartitionSnapshot snapshot() {
        List<SharePartitionSnapshot.Entry> entries = new ArrayList<>(inFlight.size());
        inFlight.forEach((offset, r) -> entries.add(new SharePartitionSnapshot.Entry(offset, r.state, r.deliveryCount)));
        return new SharePartitionSnapshot(startOffset, endOffset, entries, ++snapshotVersion, copies.state(),
                holds.state());
    }

    /**
     * Restores persisted state: acquired records come back available (their locks did not survive),
     * with their delivery counts, so that nothing accepted is redelivered and nothing unaccepted is lost. The lost lock
     * counts as a delivery (the count was raised when the record was acquired) unless the member that held it returns
     * the record ({@link #returnAcquired}: it had read it ahead and never handed it out). A record restored at its
     * group's limit ({@code group.share.delivery.count.limit}) is not delivered once more: unless it is returned
     * first, its next acquisition archives and dead-letters it ("delivery-count-limit") instead, as a release of it
     * would have done (the failover chaos suite's dead-letter flow once saw a fourth delivery of a message whose limit
     * was three). It is not archived here, so that its holder can still return it: a consumer reading ahead one
     * message per transaction lost its read-ahead window at every failover, and the same unseen messages reached the
     * limit and were dead-lettered without ever reaching the application. {@link #settleRestore()}, which the caller
     * runs once the partition serves, settles restored holds and dead-letter copies.
     */
    public synchronized void restore(SharePartitionSnapshot snapshot) {
        inFlight.clear();
        replaced();
        cancelLockTimeouts();
        unmatchedBelow.clear();
        lookaheads.values().forEach(SelectiveLookahead::cancel);
        lookaheads.clear();
        snapshotVersion = Math.max(snapshotVersion, snapshot.version());
        startOffset = snapshot.startOffset();
        endOffset = snapshot.endOffset();
        copies.restore(snapshot.deadLetters());
        holds.restore(snapshot.holds());
        Map<Long, Long> heldFor = holds.producerByOffset();
        for (SharePartitionSnapshot.Entry entry : snapshot.entries()) {
            if (entry.offset() < startOffset || entry.offset() >= endOffset) {
                continue;
            }
            RecordState state = entry.state();
            Long producerId = state == RecordState.ACQUIRED ? heldFor.remove(entry.offset()) : null;
            if (state == RecordState.ACQUIRED && producerId != null) {
                // held for a transaction: still held, settled by its marker (no member, no lock to expire)
                InFlightRecord held = new InFlightRecord(RecordState.ACQUIRED, entry.deliveryCount());
                held.transactionProducerId = producerId;
                inFlight.put(entry.offset(), held);
                continue;
            }
            if (state == RecordState.ACQUIRED) {
                InFlightRecord lost = new InFlightRecord(RecordState.AVAILABLE, entry.deliveryCount());
                lost.lockLost = true;
                inFlight.put(entry.offset(), lost);
                continue;
            }
            if (state != RecordState.AVAILABLE || entry.deliveryCount() > 0) {
                inFlight.put(entry.offset(), new InFlightRecord(state, entry.deliveryCount()));
            } // else never delivered: no entry needed
        }
        heldFor.keySet().forEach(holds::release); // a hold whose entry is not ACQUIRED (or gone) holds nothing
        maybeAdvanceStart(new Events());
        restoredHoldsUnchecked = !holds.isEmpty();
        restorePending = !copies.isEmpty() || restoredHoldsUnchecked;
    }

    /**
     * Settles what a restore brought back: holds whose transaction ended while the state moved, and dead-letter copies
     * the saved state owed (they are made from here on); does nothing when there are none or they were settled
     * already. On the thread that serves the partition.
     *
     * @throws RuntimeException if the copies could not be started (a later call tries again)
     */
    public void settleRestore() {
        if (!restorePending) {
            return;
        }
        settleRestoredHolds();
        Events events = new Events();
        synchronized (this) {
            if (closed) {
                return;
            }
            restorePending = false;
            if (copies.isEmpty()) {
                return; // only holds were restored, and they are settled
            }
            events.copiesOwed = true;
        }
        try {
            events.fire();
        } catch (RuntimeException e) {
            restorePending = true;
            throw e;
        }
    }

    /**
     * Settles the restored holds whose transaction's marker is in the log already (written while the state moved:
     * the old leader appended it and was lost before it saved the settlement). Holds whose marker comes later are
     * settled by it ({@link #completeTransaction}). The log is read outside the monitor.
     */
    private void settleRestoredHolds() {
        Map<Long, Long> scanFrom;
        synchronized (this) {
            if (!restoredHoldsUnchecked || closed) {
                return;
            }
            scanFrom = holds.scanFromByProducer();
        }
        Map<Long, Boolean> ended = TransactionHolds.endedIn(log, scanFrom, SELECTIVE_READ_BYTES);
        ended.forEach(this::completeTransaction);
        synchronized (this) {
            restoredHoldsUnchecked = false;
        }
    }

    /** Whether records are held here for the transaction of {@code producerId}. */
    public synchronized boolean holdsFor(long producerId) {
        return holds.holdsFor(producerId);
    }

    /**
     * Moves the start offset to {@code offset} (AlterShareGroupOffsets): every in-flight state is
     * dropped, records from {@code offset} on are delivered afresh, with delivery count 0. Only for a
     * group without members (no record is held). The change is saved like any other.
     */
    public void resetTo(long offset) {
        Events events = new Events();
        synchronized (this) {
            for (long o = inFlight.nextKey(0); o >= 0; o = inFlight.nextKey(o + 1)) {
                if (inFlight.get(o).state == RecordState.ACQUIRED) {
                    throw new IllegalStateException("Cannot reset " + key + " to offset " + offset + ": offset "
                            + o + " is " + RecordState.ACQUIRED + ", not released");
                }
            }
            inFlight.clear();
            holds.clear();
            replaced();
            unmatchedBelow.clear();
        lookaheads.values().forEach(SelectiveLookahead::cancel);
        lookaheads.clear();
            startOffset = Math.max(offset, log.logStartOffset());
            endOffset = startOffset;
            nextAcquisitionId++;
            events.changed = true;
            events.available = true;
        }
        events.fire();
    }

    /** The records from the start offset to the high watermark not yet acknowledged or archived. */
    public synchronized long lag() {
        long behind = Math.max(0, log.highWatermark() - startOffset);
        long[] done = {0};
        inFlight.forEach((offset, r) -> done[0] += r.state.isTerminal() ? 1 : 0);
        return Math.max(0, behind - done[0]);
    }

    private AcquireResult acquireLocked(String memberId, MemberFilter filter, int maxRecords, int maxBytes,
                                        Events events) {
        long now = time.hiResClockMs();
        moveToLogStart();
        // members with a selector get the larger window: records nobody matches stay at the head (JMS semantics)
        long window = filter != null ? config.selectiveWindowRecords() : config.maxRecordLocks();
        long limitEnd = Math.min(log.highWatermark(), startOffset + window);
        long first = firstAcquirable(now, limitEnd);
        if (first < 0) {
            return AcquireResult.EMPTY;
        }
        long waitingBeforeFirst = headWaiting;
        boolean selective = filter != null;
        // a selector that keeps unmatched records available skips what it already found unmatched
        boolean cursor = selective && !filter.archiveUnmatched();
        // a selector's first scan returns after the first read that found matches (see acquireLocked's doc)
        boolean firstScan = false;
        if (cursor) {
            Long below = unmatchedBelow.get(filter.selector());
            firstScan = below == null && looksAhead(filter.selector());
            first = Math.max(first, below == null ? first : below);
            if (first >= limitEnd) {
                return AcquireResult.EMPTY;
            }
            SelectiveLookahead ahead = lookaheads.remove(filter.selector());
            if (ahead != null) {
                ahead.cancel();
                // usable when done, the cursor has not moved since (every available record below it unmatched) and
                // it has a full fetch's worth or reached today's end (else records appended since would wait)
                if (ahead.done() && below != null && below == ahead.from() && ahead.scannedTo() > ahead.from()
                        && (ahead.full() || ahead.scannedTo() >= limitEnd)) {
                    return acquireAhead(memberId, filter, ahead, maxRecords, maxBytes, now, waitingBeforeFirst,
                            events);
                }
            }
        }
        long scannedTo = first;
        long firstWaiting = waitingBeforeFirst;
        int reads = 0;
        // a selective member gets only the records it acquired, each batch cut down to them (BatchCut or BatchSubset)
        List<ByteBuffer> selected = selective ? new ArrayList<>() : null;
        int selectedBytes = 0;
        List<Record> kept = selective ? new ArrayList<>() : null;
        long acquisitionId = nextAcquisitionId++;
        OffsetList acquired = new OffsetList(Math.min(maxRecords, 1024));
        Records records;
        int sliceEnd;
        while (true) {
            records = selective ? scanReader.read(log, first, Math.min(maxBytes, SELECTIVE_READ_BYTES))
                    : log.read(first, maxBytes);
            sliceEnd = 0;
            int position = 0;
            long lastRead = -1;
            boolean stop = false;
            ByteBuffer holder = selective ? scanReader.holder() : null;
            for (RecordBatch batch : records.batches()) {
                int batchStart = position;
                position += batch.sizeInBytes();
                if (batch.lastOffset() < first) {
                    continue;
                }
                lastRead = batch.lastOffset();
                int before = acquired.size();
                Acquisition acquisition = new Acquisition(memberId, acquisitionId, now, maxRecords, limitEnd,
                        log.skip(batch), acquired, filter, events);
                // each way of reading a batch is a method of its own, so that the JIT keeps a profile per path: an
                // unfiltered phase no longer compiles away the selective one (and deoptimizes when it comes)
                boolean walked = false;
                if (isDense(batch) && !selective) {
                    stop = !acquisition.offerDense(batch, first);
                } else if (selective && BatchCursor.canWalk(batch)) {
                    walked = true;
                    batchCursor.load(batch, holder, batchStart);
                    stop = !acquisition.offerWalked(batchCursor, first, batchCut);
                    scannedTo = Math.max(scannedTo, acquisition.scannedTo);
                } else {
                    stop = !acquisition.offerRecords(batch, first, kept);
                    scannedTo = Math.max(scannedTo, acquisition.scannedTo);
                }
                firstWaiting = Math.min(firstWaiting, acquisition.firstWaiting);
                if (acquired.size() > before) {
                    sliceEnd = position;
                    if (selective) {
                        ByteBuffer cut = walked ? batchCut.take(false) : BatchSubset.of(batch, kept, false);
                        selected.add(cut);
                        selectedBytes += cut.remaining();
                    }
                }
                if (selective) {
                    kept.clear();
                }
                if (stop) {
                    break;
                }
                if (batch.lastOffset() >= endOffset && batch.lastOffset() < limitEnd) {
                    archiveGapsUpTo(batch.lastOffset() + 1);
                    endOffset = batch.lastOffset() + 1;
                }
            }
            if (!stop && lastRead >= first) {
                scannedTo = Math.max(scannedTo, lastRead + 1);
            }
            // a selective member reads on past records it does not match, up to the in-flight window's end, until it
            // has its records or a fetch's worth of bytes, or has read SELECTIVE_READS_PER_FETCH times
            if (!selective || stop || lastRead < first || lastRead + 1 >= limitEnd
                    || selectedBytes >= maxBytes || ++reads >= SELECTIVE_READS_PER_FETCH
                    || (firstScan && !acquired.isEmpty())) {
                break;
            }
            first = lastRead + 1;
        }
        if (cursor) {
            // everything available below scannedTo was unmatched, but for records waiting out a redelivery backoff
            unmatchedBelow.put(filter.selector(), Math.min(scannedTo, firstWaiting));
        }
        maybeAdvanceStart(events);
        if (acquired.isEmpty()) {
            return AcquireResult.EMPTY;
        }
        events.changed = true;
        armLockTimeout(acquisitionId, acquired, config.recordLockDurationMs());
        if (cursor) {
            scheduleLookahead(filter, maxRecords, maxBytes);
        }
        if (selective) {
            // only the acquired records go out, not the unmatched ones scanned past
            return new AcquireResult(joined(selected), ranges(acquired));
        }
        return new AcquireResult(records.slice(0, sliceEnd), ranges(acquired));
    }

    /** Whether members with {@code selector} get their next scans run ahead ({@link #scheduleLookahead}). */
    private boolean looksAhead(Selector selector) {
        return lookaheadExecutor != null && !selector.identifiers().contains("JMSXDeliveryCount");
    }

    /**
     * Starts the next scan of a selective member that keeps a cursor, from the cursor, unless its selector reads
     * JMSXDeliveryCount or there is nothing below the window's end to scan. Under the monitor.
     */
    private void scheduleLookahead(MemberFilter filter, int maxRecords, int maxBytes) {
        Selector selector = filter.selector();
        if (!looksAhead(selector)) {
            return;
        }
        long from = unmatchedBelow.getOrDefault(selector, startOffset);
        long limit = Math.min(log.highWatermark(), startOffset + config.selectiveWindowRecords());
        if (from >= limit) {
            return;
        }
        SelectiveLookahead ahead = new SelectiveLookahead(log, selector, from, limit, maxRecords,
                Math.min(maxBytes, LOOKAHEAD_MAX_BYTES));
        lookaheads.put(selector, ahead);
        try {
            lookaheadExecutor.execute(ahead);
        } catch (RejectedExecutionException e) {
            lookaheads.remove(selector); // shutting down: fetches scan for themselves
        }
    }

    /**
     * A selective acquisition from what {@code ahead} found (see {@link SelectiveLookahead}): its matches are acquired
     * in offset order if acquirable now, its skipped offsets archived, the records it passed over left available
     * without entries, as a scan would have; then the next lookahead starts. Under the monitor.
     */
    private AcquireResult acquireAhead(String memberId, MemberFilter filter, SelectiveLookahead ahead, int maxRecords,
                                       int maxBytes, long now, long firstWaiting, Events events) {
        long acquisitionId = nextAcquisitionId++;
        OffsetList acquired = new OffsetList();
        List<ByteBuffer> pieces = new ArrayList<>();
        int bytes = 0;
        long stopAt = ahead.scannedTo();
        long lastEntry = inFlight.isEmpty() ? -1 : inFlight.lastKey();
        SelectiveLookahead.Cut cut = null;
        OffsetList cutAcquired = new OffsetList();
        for (SelectiveLookahead.Found found : ahead.found()) {
            long offset = found.offset();
            if (acquired.size() >= maxRecords || bytes >= maxBytes) {
                stopAt = offset;
                break;
            }
            if (found.cut() != null && found.cut() != cut) {
                bytes += addCut(cut, cutAcquired, pieces);
                cut = found.cut();
                cutAcquired.clear();
            }
            if (offset < startOffset) {
                continue;
            }
            if (offset >= endOffset) {
                endOffset = offset + 1; // offsets passed over below it: unmatched records, available without entries
                if (found.cut() == null) {
                    inFlight.put(offset, new InFlightRecord(RecordState.ARCHIVED, 0));
                    changedAt(offset);
                    continue;
                }
            } else if (found.cut() == null) {
                continue; // an earlier scan archived it
            }
            InFlightRecord state = offset > lastEntry ? null : inFlight.get(offset);
            if (state != null && !state.isAcquirable(now)) {
                if (state.state == RecordState.AVAILABLE) {
                    firstWaiting = Math.min(firstWaiting, offset);
                }
                continue;
            }
            if (state != null && archivedAtLimit(offset, state, events)) {
                continue;
            }
            lock(offset, state, memberId, acquisitionId, now);
            acquired.add(offset);
            cutAcquired.add(offset);
        }
        addCut(cut, cutAcquired, pieces);
        endOffset = Math.max(endOffset, stopAt);
        unmatchedBelow.put(filter.selector(), Math.min(stopAt, firstWaiting));
        maybeAdvanceStart(events);
        if (acquired.isEmpty()) {
            return AcquireResult.EMPTY;
        }
        events.changed = true;
        armLockTimeout(acquisitionId, acquired, config.recordLockDurationMs());
        scheduleLookahead(filter, maxRecords, maxBytes);
        return new AcquireResult(joined(pieces), ranges(acquired));
    }

    /** The (cut) batches of a selective response, one after another. */
    private static MemoryRecords joined(List<ByteBuffer> batches) {
        int size = 0;
        for (ByteBuffer batch : batches) {
            size += batch.remaining();
        }
        ByteBuffer response = ByteBuffer.allocate(size);
        batches.forEach(response::put);
        return MemoryRecords.readableRecords(response.flip());
    }

    /**
     * Archives and dead-letters an available record that has had every delivery its group allows instead of
     * delivering it once more: one restored from a lock lost at its last delivery ({@link #restore}) and not returned,
     * or one released before the group's limit was lowered. Under the monitor.
     *
     * @return whether it was archived
     */
    private boolean archivedAtLimit(long offset, InFlightRecord state, Events events) {
        if (state.deliveryCount < config.deliveryCountLimit()) {
            return false;
        }
        changedAt(offset);
        state.state = RecordState.ARCHIVED;
        state.lockLost = false;
        events.changed = true;
        deadLettered(new DeadLetter(key, offset, state.deliveryCount, DeadLetter.REASON_DELIVERY_LIMIT), events);
        return true;
    }

    /**
     * Acquires {@code offset} for {@code memberId}: its entry ({@code state}, or a new one for a never-delivered
     * record) becomes ACQUIRED under the lock, its delivery count raised. Under the monitor.
     */
    private void lock(long offset, InFlightRecord state, String memberId, long acquisitionId, long now) {
        changedAt(offset);
        if (state == null) {
            state = new InFlightRecord(RecordState.AVAILABLE, 0);
            inFlight.put(offset, state);
        }
        state.state = RecordState.ACQUIRED;
        state.lockLost = false;
        state.deliveryCount++;
        state.memberId = memberId;
        state.acquisitionId = acquisitionId;
        state.lockExpiresAtMs = now + config.recordLockDurationMs();
    }

    /** Adds {@code cut}, or the part of it holding {@code acquired}; returns the bytes added. */
    private static int addCut(SelectiveLookahead.Cut cut, OffsetList acquired, List<ByteBuffer> pieces) {
        if (cut == null || acquired.isEmpty()) {
            return 0;
        }
        ByteBuffer bytes = cut.bytes();
        RecordBatch batch = MemoryRecords.readableRecords(bytes.duplicate()).batches().iterator().next();
        Integer count = batch.countOrNull();
        if (count == null || acquired.size() < count) {
            List<Record> kept = new ArrayList<>();
            for (Record r : batch) {
                if (acquired.contains(r.offset())) {
                    kept.add(r);
                }
            }
            bytes = BatchSubset.of(batch, kept, false);
        }
        pieces.add(bytes);
        return bytes.remaining();
    }

    /**
     * Whether every offset from the batch's base to its last offset holds a record (a v2 batch whose
     * record count spans them all), so that its offsets are known from the header alone. Compacted
     * batches and older formats have holes or no count and are read record by record.
     */
    private static boolean isDense(RecordBatch batch) {
        if (batch.magic() < RecordBatch.MAGIC_VALUE_V2) {
            return false;
        }
        Integer count = batch.countOrNull();
        return count != null && count == batch.lastOffset() - batch.baseOffset() + 1;
    }

    /**
     * One acquisition in progress: {@link #offer} decides an offset of the batch being read. Runs
     * under the partition's monitor.
     */
    private final class Acquisition {
        private final String memberId;
        private final long acquisitionId;
        private final long now;
        private final int maxRecords;
        private final long limitEnd;
        private final boolean controlBatch;
        private final OffsetList acquired;
        private final MemberFilter filter;
        private final Events events;
        /** The first offset passed over because its redelivery backoff had not ended. */
        long firstWaiting = Long.MAX_VALUE;
        /** Where reading the batch stopped, or one past its last record read (the record-reading offers set it). */
        long scannedTo = -1;
        /**
         * The highest offset with an entry when the batch began: entries added since are below the offset being
         * offered (offers go up), so one above it has none and needs no lookup.
         */
        private final long lastEntry = inFlight.isEmpty() ? -1 : inFlight.lastKey();

        Acquisition(String memberId, long acquisitionId, long now, int maxRecords, long limitEnd,
                    boolean controlBatch, OffsetList acquired, MemberFilter filter, Events events) {
            this.filter = filter;
            this.events = events;
            this.memberId = memberId;
            this.acquisitionId = acquisitionId;
            this.now = now;
            this.maxRecords = maxRecords;
            this.limitEnd = limitEnd;
            this.controlBatch = controlBatch;
            this.acquired = acquired;
        }

        /**
         * Acquires {@code offset} if it is acquirable (and the record, read only when there is a selector, from
         * {@code record} or else from {@code cursor}, matches it); false when the acquisition must stop before it.
         */
        boolean offer(long offset, Record record, BatchCursor cursor) {
            if (offset < startOffset) {
                return true;
            }
            if (acquired.size() >= maxRecords || (offset >= endOffset && offset >= limitEnd)) {
                return false;
            }
            if (offset >= endOffset) {
                archiveGapsUpTo(offset);
                endOffset = offset + 1;
                if (controlBatch) {
                    inFlight.put(offset, new InFlightRecord(RecordState.ARCHIVED, 0));
                    changedAt(offset);
                    return true;
                }
            }
            // no entry below the end offset: never delivered, available (see the class comment)
            InFlightRecord state = offset > lastEntry ? null : inFlight.get(offset);
            if (state != null && !state.isAcquirable(now)) {
                if (state.state == RecordState.AVAILABLE) {
                    firstWaiting = Math.min(firstWaiting, offset); // in its redelivery backoff
                }
                return true;
            }
            if (state != null && archivedAtLimit(offset, state, events)) {
                return true;
            }
            int deliveries = state == null ? 0 : state.deliveryCount;
            if (filter != null && !(record != null ? matcher.matches(filter.selector(), record, deliveries + 1)
                    : matcher.matches(filter.selector(), cursor, deliveries + 1))) {
                if (filter.archiveUnmatched()) {
                    // not part of the subscription: never delivered
                    if (state == null) {
                        inFlight.put(offset, new InFlightRecord(RecordState.ARCHIVED, 0));
                    } else {
                        finish(offset, state, RecordState.ARCHIVED);
                    }
                    changedAt(offset);
                    events.changed = true;
                }
                return true; // an unmatched record stays available, and without an entry if it had none
            }
            lock(offset, state, memberId, acquisitionId, now);
            acquired.add(offset);
            return true;
        }

        /**
         * Offers every offset of a dense batch from {@code from} on, decided from the header without reading the
         * records (no selector); false when the acquisition stopped.
         */
        boolean offerDense(RecordBatch batch, long from) {
            for (long offset = Math.max(batch.baseOffset(), from); offset <= batch.lastOffset(); offset++) {
                if (!offer(offset, null, null)) {
                    return false;
                }
            }
            return true;
        }

        /**
         * Offers the records of the batch {@code cursor} has loaded from {@code from} on, their headers read where
         * they lie (nothing allocated for the records passed over), picking each one acquired into {@code cut}; sets
         * {@link #scannedTo}. False when the acquisition stopped.
         */
        boolean offerWalked(BatchCursor cursor, long from, BatchCut cut) {
            while (cursor.next()) {
                long offset = cursor.offset();
                if (offset < from) {
                    continue;
                }
                int acquiredBefore = acquired.size();
                if (!offer(offset, null, cursor)) {
                    scannedTo = offset;
                    return false;
                }
                if (acquired.size() > acquiredBefore) {
                    cut.pick();
                }
                scannedTo = offset + 1;
            }
            return true;
        }

        /**
         * Offers the records of {@code batch} from {@code from} on, read through Kafka's iterator (batches the cursor
         * cannot walk, or no selector with holes in the offsets), adding each one acquired by a selective member to
         * {@code kept}; sets {@link #scannedTo}. False when the acquisition stopped.
         */
        boolean offerRecords(RecordBatch batch, long from, List<Record> kept) {
            for (Record record : batch) {
                if (record.offset() < from) {
                    continue;
                }
                int acquiredBefore = acquired.size();
                if (!offer(record.offset(), record, null)) {
                    scannedTo = record.offset();
                    return false;
                }
                if (kept != null && acquired.size() > acquiredBefore) {
                    kept.add(record);
                }
                scannedTo = record.offset() + 1;
            }
            return true;
        }
    }

    /**
     * The earliest offset that can be acquired now, or -1. Sets {@link #headWaiting} to the first available offset
     * before it that waits out a redelivery backoff (Long.MAX_VALUE if none).
     */
    private long firstAcquirable(long now, long limitEnd) {
        headWaiting = Long.MAX_VALUE;
        long expected = startOffset;
        for (long offset = inFlight.nextKey(0); offset >= 0; offset = inFlight.nextKey(offset + 1)) {
            if (offset > expected) {
                return expected; // an offset without an entry: never delivered, available
            }
            InFlightRecord r = inFlight.get(offset);
            if (r.isAcquirable(now)) {
                return offset;
            }
            if (r.state == RecordState.AVAILABLE && headWaiting == Long.MAX_VALUE) {
                headWaiting = offset;
            }
            expected = offset + 1;
        }
        if (expected < endOffset) {
            return expected;
        }
        return endOffset < limitEnd ? endOffset : -1;
    }

    private void archiveGapsUpTo(long offsetExclusive) {
        for (long gap = endOffset; gap < offsetExclusive; gap++) {
            inFlight.put(gap, new InFlightRecord(RecordState.ARCHIVED, 0));
            changedAt(gap);
        }
    }

    private List<AcquiredBatch> ranges(OffsetList offsets) {
        List<AcquiredBatch> ranges = new ArrayList<>();
        long first = offsets.get(0);
        long last = first;
        int count = inFlight.get(first).deliveryCount;
        for (int i = 1; i < offsets.size(); i++) {
            long offset = offsets.get(i);
            int c = inFlight.get(offset).deliveryCount;
            if (offset == last + 1 && c == count) {
                last = offset;
            } else {
                ranges.add(new AcquiredBatch(first, last, count));
                first = offset;
                last = offset;
                count = c;
            }
        }
        ranges.add(new AcquiredBatch(first, last, count));
        return ranges;
    }

    private Errors acknowledgeLocked(String memberId, List<AcknowledgementBatch> batches, Events events) {
        long now = time.hiResClockMs();
        for (AcknowledgementBatch batch : batches) {
            if (batch.lastOffset() < batch.firstOffset() || batch.types().length == 0) {
                return Errors.INVALID_REQUEST;
            }
            if (batch.types().length == 1) {
                if (AcknowledgeType.byId(batch.types()[0]) == null) {
                    return Errors.INVALID_REQUEST;
                }
                continue; // one type for every offset
            }
            for (long offset = batch.firstOffset(); offset <= batch.lastOffset(); offset++) {
                if (AcknowledgeType.byId(batch.typeOf(offset)) == null) {
                    return Errors.INVALID_REQUEST;
                }
            }
        }
        boolean skipped = false;
        for (AcknowledgementBatch batch : batches) {
            // offsets outside the window (below the start offset, at or above the end offset) have no entry: they are
            // skipped as a whole, not visited one by one (a range up to Long.MAX_VALUE would hold the monitor forever)
            long from = Math.max(batch.firstOffset(), startOffset);
            long to = Math.min(batch.lastOffset(), endOffset - 1);
            skipped |= from != batch.firstOffset() || to != batch.lastOffset();
            for (long offset = from; offset <= to; offset++) {
                AcknowledgeType type = AcknowledgeType.byId(batch.typeOf(offset));
                InFlightRecord record = inFlight.get(offset);
                if (record != null && record.isHeldBy(memberId) && record.isHeldForTransaction()) {
                    continue; // the transaction settles it; the member's own acknowledgement changes nothing
                }
                if (record == null || !record.isHeldBy(memberId)) {
                    boolean harmlessGap = type == AcknowledgeType.GAP && record != null
                            && record.state == RecordState.ARCHIVED;
                    skipped |= !harmlessGap;
                    continue;
                }
                apply(offset, record, type, now, events);
            }
        }
        maybeAdvanceStart(events);
        events.changed = true;
        return skipped ? Errors.INVALID_RECORD_STATE : Errors.NONE;
    }

    private void apply(long offset, InFlightRecord record, AcknowledgeType type, long now, Events events) {
        changedAt(offset);
        switch (type) {
            case ACCEPT -> finish(offset, record, RecordState.ACKNOWLEDGED);
            case GAP -> finish(offset, record, RecordState.ARCHIVED);
            case REJECT -> {
                finish(offset, record, RecordState.ARCHIVED);
                deadLettered(new DeadLetter(key, offset, record.deliveryCount, DeadLetter.REASON_REJECTED), events);
            }
            case RELEASE -> releaseOrArchive(offset, record, now, true, events);
            case RENEW -> record.lockExpiresAtMs = now + config.recordLockDurationMs();
            default -> throw new IllegalStateException("Unhandled acknowledge type " + type);
        }
    }

    /**
     * {@code deadLetter} was archived without being accepted: reported, and owed to the dead-letter topic if the topic
     * has one, in the same change (so the save that makes the archive durable makes the copy owed). Under the monitor.
     */
    private void deadLettered(DeadLetter deadLetter, Events events) {
        events.deadLetters.add(deadLetter);
        if (log.deadLetterTopic().isPresent()) {
            copies.add(deadLetter);
            events.copiesOwed = true;
        }
    }

    /** The dead-letter copy to make next ({@link DeadLetterCopies}); empty when none is owed or this was dropped. */
    public synchronized Optional<DeadLetterCopies.Copy> nextDeadLetterCopy() {
        return closed ? Optional.empty() : copies.head();
    }

    /** How many dead-letter copies this partition owes. */
    public synchronized int deadLetterCopiesOwed() {
        return copies.size();
    }

    /**
     * The owed copy of {@code offset} was written to the dead-letter topic ({@code written}), or given up without a
     * write: it is no longer owed, and the state is saved before this returns. Called again after a failed save, it
     * saves again (the copy is then already off the list).
     *
     * @throws org.apache.kafka.common.errors.NotLeaderOrFollowerException if this partition was dropped
     * @throws RuntimeException if the save failed
     */
    public void deadLetterCopied(long offset, boolean written) {
        Events events = new Events();
        synchronized (this) {
            copies.done(offset, written);
            events.changed = true;
        }
        events.fire();
    }

    /** The dead-letter partition refused the copies' producer epoch or sequence: the next epoch, saved. */
    public void deadLetterCopiesFenced() {
        Events events = new Events();
        synchronized (this) {
            copies.fenced();
            events.changed = true;
        }
        events.fire();
    }

    private void finish(long offset, InFlightRecord record, RecordState terminal) {
        if (record.state == RecordState.ACQUIRED) {
            unlocked(record);
        }
        if (record.transactionProducerId >= 0) {
            holds.release(offset);
        }
        record.state = terminal;
        record.memberId = null;
        record.transactionProducerId = -1;
    }

    /** ACQUIRED to AVAILABLE (after the backoff), or to ARCHIVED once the delivery limit is reached. */
    private void releaseOrArchive(long offset, InFlightRecord record, long now, boolean backoff, Events events) {
        if (record.state != RecordState.ACQUIRED) {
            throw new IllegalStateException("Cannot release offset " + offset + " of " + key + ": it is "
                    + record.state + ", not " + RecordState.ACQUIRED);
        }
        changedAt(offset);
        unlocked(record);
        if (record.transactionProducerId >= 0) {
            holds.release(offset);
        }
        record.memberId = null;
        record.transactionProducerId = -1;
        events.changed = true;
        if (record.deliveryCount >= config.deliveryCountLimit()) {
            record.state = RecordState.ARCHIVED;
            deadLettered(new DeadLetter(key, offset, record.deliveryCount, DeadLetter.REASON_DELIVERY_LIMIT), events);
            return;
        }
        record.state = RecordState.AVAILABLE;
        unmatchedBelow.replaceAll((selector, below) -> Math.min(below, offset)); // may match a selector now
        long delayMs = backoff ? config.redeliveryDelayMs(record.deliveryCount) : 0;
        record.availableAtMs = now + delayMs;
        if (delayMs > 0) {
            events.wakeAfterMs = Math.min(events.wakeAfterMs, delayMs);
        } else {
            events.available = true;
        }
    }

    private void moveToLogStart() {
        long logStart = log.logStartOffset();
        if (logStart > startOffset) {
            inFlight.removeBelow(logStart);
            holds.removeBelow(logStart);
            startOffset = logStart;
            endOffset = Math.max(endOffset, logStart);
        }
    }

    private void maybeAdvanceStart(Events events) {
        long before = startOffset;
        while (!inFlight.isEmpty() && inFlight.firstKey() == startOffset && inFlight.first().state.isTerminal()) {
            inFlight.pollFirst();
            startOffset++;
        }
        if (startOffset != before) {
            events.available = true;
            events.changed = true;
        }
    }

    private void onLockTimeout(LockTimeout task) {
        Events events = new Events();
        synchronized (this) {
            if (closed) {
                return;
            }
            // this timer is done: records expired below must not count against it, and a re-armed one replaces it
            lockTimeouts.remove(task.acquisitionId, task);
            lastUnlocked = null;
            long now = time.hiResClockMs();
            OffsetList stillLocked = new OffsetList();
            long nextDeadline = Long.MAX_VALUE;
            for (long offset : task.offsets) {
                InFlightRecord record = inFlight.get(offset);
                if (record == null || record.state != RecordState.ACQUIRED || record.acquisitionId != task.acquisitionId
                        || record.isHeldForTransaction()) {
                    continue;
                }
                if (now >= record.lockExpiresAtMs) {
                    releaseOrArchive(offset, record, now, true, events);
                    record.lockLost = record.state == RecordState.AVAILABLE; // its holder may still return it
                } else {
                    stillLocked.add(offset);
                    nextDeadline = Math.min(nextDeadline, record.lockExpiresAtMs);
                }
            }
            if (!stillLocked.isEmpty()) {
                armLockTimeout(task.acquisitionId, stillLocked, nextDeadline - now);
            }
            maybeAdvanceStart(events);
        }
        events.fire();
    }

    /** Starts the lock timer of {@code offsets}, all ACQUIRED under {@code acquisitionId}. Under the monitor. */
    private void armLockTimeout(long acquisitionId, OffsetList offsets, long delayMs) {
        LockTimeout timeout = new LockTimeout(acquisitionId, offsets.toArray(), delayMs);
        lockTimeouts.put(acquisitionId, timeout);
        lastUnlocked = null;
        timer.add(timeout);
    }

    /**
     * {@code record} leaves ACQUIRED: its acquisition's lock timer has one record fewer to watch, and is cancelled
     * when none is left. Under the monitor.
     */
    private void unlocked(InFlightRecord record) {
        LockTimeout timeout = lastUnlocked;
        if (timeout == null || timeout.acquisitionId != record.acquisitionId) {
            // acknowledgements come an acquisition at a time: one lookup (and boxed key) per run, not per record
            timeout = lockTimeouts.get(record.acquisitionId);
            lastUnlocked = timeout;
        }
        if (timeout != null && --timeout.remaining == 0) {
            lockTimeouts.remove(record.acquisitionId);
            lastUnlocked = null;
            timeout.cancel();
        }
    }

    /** The in-flight state was replaced: no lock timer has anything left to expire. Under the monitor. */
    private void cancelLockTimeouts() {
        lockTimeouts.values().forEach(TimerTask::cancel);
        lockTimeouts.clear();
        lastUnlocked = null;
    }

    /** The number of lock timers pending (tests). */
    synchronized int pendingLockTimeouts() {
        return lockTimeouts.size();
    }

    @Override
    public String toString() {
        return "SharePartition(" + key + ")";
    }

    /** Expires the locks of one acquisition whose deadline has passed (renewed ones are re-armed). */
    private final class LockTimeout extends TimerTask {
        private final long acquisitionId;
        private final long[] offsets;
        /** How many of {@link #offsets} are still ACQUIRED under this acquisition (see {@link #unlocked}). */
        private int remaining;

        LockTimeout(long acquisitionId, long[] offsets, long delayMs) {
            super(delayMs);
            this.acquisitionId = acquisitionId;
            this.offsets = offsets;
            this.remaining = offsets.length;
        }

        @Override
        public void run() {
            onLockTimeout(this);
        }
    }

    /** What a state change must tell the listener once the monitor is released. */
    private final class Events {
        boolean available;
        boolean changed;
        long wakeAfterMs = Long.MAX_VALUE;
        final List<DeadLetter> deadLetters = new ArrayList<>();
        /** Dead-letter copies were added to those owed (or are owed after a restore): the listener has them made. */
        boolean copiesOwed;

        void fire() {
            if (closed) {
                // dropped: the new leader saves, dead-letters and signals from here on; a change made here in the
                // meantime is not saved, and the request that made it must not be answered as done
                if (changed || !deadLetters.isEmpty()) {
                    throw new org.apache.kafka.common.errors.NotLeaderOrFollowerException(key
                            + " moved to another leader; this change to it was not saved");
                }
                return;
            }
            if (wakeAfterMs != Long.MAX_VALUE) {
                timer.add(new TimerTask(wakeAfterMs) {
                    @Override
                    public void run() {
                        listener.onRecordsAvailable(key);
                    }
                });
            }
            // saved first: a dead letter is copied only once its archive is saved (else the next leader archives it)
            if (changed || !deadLetters.isEmpty()) {
                listener.onStateChanged(SharePartition.this);
            }
            deadLetters.forEach(listener::onArchived);
            if (copiesOwed) {
                listener.onDeadLetterCopiesOwed(SharePartition.this);
            }
            if (available || !deadLetters.isEmpty()) {
                listener.onRecordsAvailable(key);
            }
        }
    }
}
