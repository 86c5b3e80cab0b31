package dev.millrace.broker.share;

import java.util.Arrays;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.TreeMap;

/**
 * The in-flight entries of one share-partition by offset: what a {@code TreeMap<Long, InFlightRecord>} held, in a
 * ring of slots indexed by the offset itself, so that the per-record work of a fetch (lock an offset on acquisition,
 * find it again to acknowledge it, drop it when the start offset passes it) costs an array access instead of a tree
 * walk, a boxed key and a tree node. In a CPU profile of a share consumer reading 500 records per ShareFetch the tree
 * took about a sixth of the broker's time per fetch.
 *
 * <pre>
 *   offsets with entries:      100 101 102     105         (first = 100, last = 105, size = 4)
 *   slots (capacity 8):       [ 0 ][ 1 ][ 2 ][ 3 ][ 4 ][ 5 ][ 6 ][ 7 ]
 *   slot of an offset o:        o &amp; (capacity - 1)        100 -&gt; 4, 101 -&gt; 5, 102 -&gt; 6, 105 -&gt; 1
 *   occupied (one bit a slot):  0b0110_0010  (slots 1, 5, 6; slot 4 is bit 4)  -- read by nextKey, 64 slots a word
 * </pre>
 *
 * Every offset from {@link #firstKey()} to {@link #lastKey()} maps to a slot of its own as long as that span is
 * no larger than the capacity (a power of two, at least 64, so a bitmap word never straddles the ring's wrap); a put
 * that would widen the span past it doubles the ring, and removals that leave the span at an eighth of a ring larger
 * than {@link #KEEP_CAPACITY} shrink it again, so memory follows the span: 4 or 8 bytes a slot plus a bit. Offsets
 * without an entry inside the span (never-delivered records between selective acquisitions) cost a null slot.
 * In-order visits skip empty slots 64 at a time through the bitmap.
 *
 * <p>A sparse state falls back to a {@code TreeMap}: a selective queue whose selector matches one record in a thousand
 * can hold a thousand entries across a window of a million offsets, where a ring (two million slots, with its
 * headroom) would take 8 MB for what a tree holds in about 60 KB. When a put would need a ring of more than
 * {@link #SPARSE_SLOTS_PER_ENTRY} slots per entry (and more than {@link #KEEP_CAPACITY}), the entries move to a tree;
 * they move back to a ring once one of at most a quarter of that many slots per entry would hold them (checked as
 * entries are added or dropped, so a state that thins out and thickens again does not flip back and forth on every
 * change).
 *
 * <p>Not thread-safe: guarded by the owning {@link SharePartition}'s monitor.
 */
final class InFlightWindow {

    /** Visits an entry ({@link #forEach}). */
    interface Visitor {
        void visit(long offset, InFlightRecord record);
    }

    static final int MIN_CAPACITY = 64;
    /**
     * Rings up to this many slots are kept when the span shrinks or empties: a consumer taking 500 records a fetch
     * empties and refills its partition's window every fetch, and resizing it each time showed in the profile.
     */
    static final int KEEP_CAPACITY = 4096;
    /** Most ring slots per entry before the entries move to a tree (see the class comment). */
    static final int SPARSE_SLOTS_PER_ENTRY = 16;
    /** The largest ring: beyond it the entries are in a tree whatever their density. */
    static final int MAX_CAPACITY = 1 << 30;

    private InFlightRecord[] slots = new InFlightRecord[MIN_CAPACITY];
    private long[] occupied = new long[MIN_CAPACITY / 64];
    private int mask = MIN_CAPACITY - 1;
    private long first = -1;
    private long last = -1;
    private int size;
    /** Non-null while the entries are held in a tree instead of the ring (sparse), then the ring fields are unused. */
    private TreeMap<Long, InFlightRecord> sparse;

    int size() {
        return sparse != null ? sparse.size() : size;
    }

    boolean isEmpty() {
        return size() == 0;
    }

    /** The lowest offset with an entry. */
    long firstKey() {
        requireEntries();
        return sparse != null ? sparse.firstKey() : first;
    }

    /** The highest offset with an entry. */
    long lastKey() {
        requireEntries();
        return sparse != null ? sparse.lastKey() : last;
    }

    /** The entry at {@link #firstKey()}. */
    InFlightRecord first() {
        requireEntries();
        return sparse != null ? sparse.firstEntry().getValue() : slots[slot(first)];
    }

    InFlightRecord get(long offset) {
        if (sparse != null) {
            return sparse.get(offset);
        }
        if (size == 0 || offset < first || offset > last) {
            return null;
        }
        return slots[slot(offset)];
    }

    boolean containsKey(long offset) {
        return get(offset) != null;
    }

    /** Sets the entry of {@code offset} (replacing one it had). */
    void put(long offset, InFlightRecord record) {
        if (offset < 0) {
            throw new IllegalArgumentException("offset " + offset + " is negative");
        }
        if (record == null) {
            throw new IllegalArgumentException("null entry for offset " + offset);
        }
        if (sparse != null) {
            sparse.put(offset, record);
            maybeLeaveTree();
            return;
        }
        if (size == 0) {
            first = offset;
            last = offset;
        } else {
            long low = Math.min(first, offset);
            long high = Math.max(last, offset);
            if (high - low + 1 > slots.length) {
                long span = high - low + 1;
                if (!ringFits(span, size + 1L, SPARSE_SLOTS_PER_ENTRY)) {
                    moveToTree();
                    sparse.put(offset, record);
                    return;
                }
                resize(capacityFor(span));
            }
            first = low;
            last = high;
        }
        int slot = slot(offset);
        if (slots[slot] == null) {
            size++;
            occupied[slot >>> 6] |= 1L << slot;
        }
        slots[slot] = record;
    }

    /** Drops the entry of {@code offset}, if it has one. */
    void remove(long offset) {
        if (sparse != null) {
            if (sparse.remove(offset) != null) {
                maybeLeaveTree();
            }
            return;
        }
        if (get(offset) == null) {
            return;
        }
        clearSlot(slot(offset));
        if (size == 0) {
            first = -1;
            last = -1;
        } else if (offset == first) {
            first = nextKey(offset + 1);
        } else if (offset == last) {
            last = previousKey(offset - 1);
        }
        maybeShrink();
    }

    /** Drops the entry at {@link #firstKey()}. */
    void pollFirst() {
        remove(firstKey());
    }

    /** Drops every entry below {@code offset}. */
    void removeBelow(long offset) {
        if (sparse != null) {
            sparse.headMap(offset).clear();
            maybeLeaveTree();
            return;
        }
        if (size == 0 || offset <= first) {
            return;
        }
        if (offset > last) {
            clear();
            return;
        }
        for (long o = nextKey(first); o >= 0 && o < offset; o = nextKey(o + 1)) {
            clearSlot(slot(o));
        }
        first = nextKey(offset);
        maybeShrink();
    }

    void clear() {
        sparse = null;
        if (slots.length > MIN_CAPACITY) {
            slots = new InFlightRecord[MIN_CAPACITY];
            occupied = new long[MIN_CAPACITY / 64];
            mask = MIN_CAPACITY - 1;
        } else {
            Arrays.fill(slots, null);
            Arrays.fill(occupied, 0);
        }
        size = 0;
        first = -1;
        last = -1;
    }

    /** The lowest offset at or above {@code from} with an entry, or -1 if none. */
    long nextKey(long from) {
        if (sparse != null) {
            Long next = sparse.ceilingKey(from);
            return next == null ? -1 : next;
        }
        if (size == 0 || from > last) {
            return -1;
        }
        long offset = Math.max(from, first);
        while (offset <= last) {
            int slot = slot(offset);
            int bit = slot & 63;
            long bits = occupied[slot >>> 6] & (-1L << bit);
            if (bits != 0) {
                long found = offset + (Long.numberOfTrailingZeros(bits) - bit);
                return found <= last ? found : -1;
            }
            offset += 64 - bit; // the next word: capacity is a multiple of 64, so words never straddle the wrap
        }
        return -1;
    }

    /** Every entry in offset order. The visitor may change entries but not add or remove any. */
    void forEach(Visitor visitor) {
        if (sparse != null) {
            for (Map.Entry<Long, InFlightRecord> e : sparse.entrySet()) {
                visitor.visit(e.getKey(), e.getValue());
            }
            return;
        }
        for (long o = nextKey(first); o >= 0; o = nextKey(o + 1)) {
            visitor.visit(o, slots[slot(o)]);
        }
    }

    /** The slots allocated, 0 while the entries are in a tree (tests: memory follows the entries). */
    int capacity() {
        return sparse != null ? 0 : slots.length;
    }

    /** Whether the entries are in a tree (tests). */
    boolean isSparse() {
        return sparse != null;
    }

    /** The ring's entries into a tree, the ring dropped to its smallest. */
    private void moveToTree() {
        TreeMap<Long, InFlightRecord> tree = new TreeMap<>();
        for (long o = nextKey(first); o >= 0; o = nextKey(o + 1)) {
            tree.put(o, slots[slot(o)]);
        }
        slots = new InFlightRecord[MIN_CAPACITY];
        occupied = new long[MIN_CAPACITY / 64];
        mask = MIN_CAPACITY - 1;
        size = 0;
        first = -1;
        last = -1;
        sparse = tree;
    }

    /** Back to a ring once one of at most a quarter of the sparse limit's slots per entry holds the tree's entries. */
    private void maybeLeaveTree() {
        TreeMap<Long, InFlightRecord> tree = sparse;
        if (tree.isEmpty()) {
            sparse = null;
            return;
        }
        long span = tree.lastKey() - tree.firstKey() + 1;
        if (!ringFits(span, tree.size(), SPARSE_SLOTS_PER_ENTRY / 4)) {
            return;
        }
        sparse = null;
        int capacity = capacityFor(span);
        slots = new InFlightRecord[capacity];
        occupied = new long[capacity / 64];
        mask = capacity - 1;
        size = 0;
        first = tree.firstKey();
        last = tree.lastKey();
        for (Map.Entry<Long, InFlightRecord> e : tree.entrySet()) {
            int slot = slot(e.getKey());
            slots[slot] = e.getValue();
            occupied[slot >>> 6] |= 1L << slot;
            size++;
        }
    }

    private long previousKey(long from) {
        for (long o = from; o >= first; o--) {
            if (slots[slot(o)] != null) {
                return o;
            }
        }
        return -1;
    }

    private void clearSlot(int slot) {
        slots[slot] = null;
        occupied[slot >>> 6] &= ~(1L << slot);
        size--;
    }

    private int slot(long offset) {
        return (int) (offset & mask);
    }

    private void maybeShrink() {
        if (size == 0) {
            first = -1;
            last = -1;
            if (slots.length > KEEP_CAPACITY) {
                clear();
            }
            return;
        }
        long span = last - first + 1;
        if (slots.length > KEEP_CAPACITY && span * 8 <= slots.length) {
            resize(Math.max(KEEP_CAPACITY, capacityFor(span)));
        }
    }

    /** Twice the smallest power of two holding {@code span} slots, at least {@link #MIN_CAPACITY}. */
    private static int capacityFor(long span) {
        long slots = slotsFor(span);
        if (slots > MAX_CAPACITY) {
            throw new IllegalStateException("in-flight span of " + span + " offsets is too large for a ring");
        }
        return (int) slots;
    }

    /** {@link #capacityFor}, as a long for any span. */
    private static long slotsFor(long span) {
        long capacity = Long.highestOneBit(Math.max(span, 1));
        if (capacity < span) {
            capacity <<= 1;
        }
        return Math.max(MIN_CAPACITY, capacity << 1);
    }

    /** Whether a ring for {@code span} offsets holding {@code entries} entries has few enough slots per entry. */
    private static boolean ringFits(long span, long entries, long slotsPerEntry) {
        long slots = slotsFor(span);
        return slots <= MAX_CAPACITY && slots <= Math.max(KEEP_CAPACITY, slotsPerEntry * entries);
    }

    private void resize(int capacity) {
        InFlightRecord[] newSlots = new InFlightRecord[capacity];
        long[] newOccupied = new long[capacity / 64];
        int newMask = capacity - 1;
        if (size > 0) {
            for (long o = nextKey(first); o >= 0; o = nextKey(o + 1)) {
                int to = (int) (o & newMask);
                newSlots[to] = slots[slot(o)];
                newOccupied[to >>> 6] |= 1L << to;
            }
        }
        slots = newSlots;
        occupied = newOccupied;
        mask = newMask;
    }

    private void requireEntries() {
        if (size() == 0) {
            throw new NoSuchElementException("no in-flight entries");
        }
    }
}
