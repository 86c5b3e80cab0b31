package dev.millrace.jms.wire;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.BiConsumer;

/**
 * What one queue consumer ({@link ShareFetcher}) holds of its share group's records, by partition and offset, and
 * what became of the records whose locks it lost. Each offset is in at most one state:
 *
 * <pre>
 *             acquired (ShareFetch)
 *   (none) -----------------------&gt; HELD ---- settled (accept, release, reject, returned) ----&gt; (none)
 *      ^                             |  \
 *      |  acquired again by          |   \ partition moved or member rejoined while it was read ahead,
 *      |  this member,               |    \ never handed out
 *      |  or settled                 |     v
 *      +------------------------- LOST   ORPHANED --- RETURN sent to the partition's next leader ---&gt; (none)
 *            handed out to the application,            (not applied and worth retrying: ORPHANED again,
 *            then the partition moved or the            up to {@link #MAX_RETURNS} attempts)
 *            member rejoined: its lock is gone
 * </pre>
 *
 * A LOST record is settled nowhere (its acceptance cannot succeed; the broker delivers it again). An ORPHANED one
 * is returned to its partition's next leader before the consumer fetches there, so that the leader undoes the count
 * of an acquisition the application never saw ({@code ShareSettle.RETURN}).
 *
 * <p>Not thread-safe: the consumer's event loop only.
 */
final class ShareCustody {

    /**
     * Attempts at returning a partition's orphaned records (the consumer tries again every
     * {@value ShareMembership#RECONNECT_BACKOFF_MS} ms while the partition moves or its state loads) before they are
     * left counted.
     */
    static final int MAX_RETURNS = 10;

    /** Offsets acquired and not settled, by partition (buffered or delivered to the application). */
    private final Map<Integer, TreeSet<Long>> held = new TreeMap<>();
    /** Handed out, then their partition's leader was lost (their locks with it): settled nowhere, by partition. */
    private final Map<Integer, Set<Long>> lost = new HashMap<>();
    /** Read ahead and never handed out when their locks were lost: to be returned to the next leader. */
    private final Map<Integer, TreeSet<Long>> orphaned = new HashMap<>();
    /** Attempts to return a partition's orphaned records that were not applied. */
    private final Map<Integer, Integer> returns = new HashMap<>();

    /** Acquired now: held (and no longer lost, when a lost record was acquired again by this member). */
    void hold(int partition, long offset) {
        held.computeIfAbsent(partition, p -> new TreeSet<>()).add(offset);
        forgetLost(partition, offset);
    }

    /** Whether the offset was held (and now no longer is). */
    boolean unhold(int partition, long offset) {
        TreeSet<Long> offsets = held.get(partition);
        return offsets != null && offsets.remove(offset);
    }

    /** Whether the offset was lost (and now no longer is). */
    boolean forgetLost(int partition, long offset) {
        Set<Long> offsets = lost.get(partition);
        return offsets != null && offsets.remove(offset);
    }

    /** Whether the offset was held; if so it is no longer held but orphaned (to be returned to the next leader). */
    boolean orphan(int partition, long offset) {
        if (!unhold(partition, offset)) {
            return false;
        }
        orphaned.computeIfAbsent(partition, p -> new TreeSet<>()).add(offset);
        return true;
    }

    /** The partition's leader is gone: what is still held of it (handed out; read-ahead is orphaned first) is lost. */
    void loseHeld(int partition) {
        TreeSet<Long> handedOut = held.remove(partition);
        if (handedOut != null && !handedOut.isEmpty()) {
            lost.computeIfAbsent(partition, k -> new HashSet<>()).addAll(handedOut);
        }
    }

    /** The member's locks are all gone (it rejoins): everything still held is lost. */
    void loseAllHeld() {
        held.forEach((p, offsets) -> lost.computeIfAbsent(p, k -> new HashSet<>()).addAll(offsets));
        held.clear();
    }

    /** Hands every held offset to {@code each} and forgets everything held and lost (the consumer leaves). */
    void drainHeld(BiConsumer<Integer, Long> each) {
        held.forEach((p, offsets) -> offsets.forEach(o -> each.accept(p, o)));
        held.clear();
        lost.clear();
    }

    /** The partitions with held records. */
    Set<Integer> heldPartitions() {
        return new TreeSet<>(held.keySet());
    }

    /** The held offsets of {@code partition}, in order (a view: empty when none). */
    Set<Long> heldOf(int partition) {
        TreeSet<Long> offsets = held.get(partition);
        return offsets == null ? Set.of() : offsets;
    }

    boolean hasOrphaned() {
        return !orphaned.isEmpty();
    }

    /** Forgets the orphaned records of partitions not in {@code assigned} (every one, for an empty set). */
    void retainOrphaned(Set<Integer> assigned) {
        orphaned.keySet().retainAll(assigned);
    }

    /** Takes the orphaned offsets of {@code partition} out, to be returned; null when there are none. */
    TreeSet<Long> takeOrphaned(int partition) {
        return orphaned.remove(partition);
    }

    /**
     * A return of {@code partition}'s orphaned {@code offsets} was answered (or failed): counts the attempt; if it was
     * not applied and {@code retriable}, the partition is still {@code assigned} and attempts remain, the offsets are
     * orphaned again for another try and true is returned.
     */
    boolean returnAnswered(int partition, Iterable<Long> offsets, boolean retriable, boolean assigned) {
        int attempt = returns.merge(partition, 1, Integer::sum);
        if (!retriable || attempt >= MAX_RETURNS) {
            returns.remove(partition);
        }
        if (!retriable || attempt >= MAX_RETURNS || !assigned) {
            return false;
        }
        TreeSet<Long> again = orphaned.computeIfAbsent(partition, p -> new TreeSet<>());
        offsets.forEach(again::add);
        return true;
    }
}
