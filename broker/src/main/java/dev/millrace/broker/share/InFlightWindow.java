package dev.millrace.broker.share;

import java.util.Arrays;
import java.util.NoSuchElementException;

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

    private InFlightRecord[] slots = new InFlightRecord[MIN_CAPACITY];
    private long[] occupied = new long[MIN_CAPACITY / 64];
    private int mask = MIN_CAPACITY - 1;
    private long first = -1;
    private long last = -1;
    private int size;

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** The lowest offset with an entry. */
    long firstKey() {
        requireEntries();
        return first;
    }

    /** The highest offset with an entry. */
    long lastKey() {
        requireEntries();
        return last;
    }

    /** The entry at {@link #firstKey()}. */
    InFlightRecord first() {
        requireEntries();
        return slots[slot(first)];
    }

    InFlightRecord get(long offset) {
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
        if (size == 0) {
            first = offset;
            last = offset;
        } else {
            long low = Math.min(first, offset);
            long high = Math.max(last, offset);
            if (high - low + 1 > slots.length) {
                resize(capacityFor(high - low + 1));
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
        for (long o = nextKey(first); o >= 0; o = nextKey(o + 1)) {
            visitor.visit(o, slots[slot(o)]);
        }
    }

    /** The slots allocated (tests: memory follows the span). */
    int capacity() {
        return slots.length;
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
        if (span > (1 << 29)) {
            throw new IllegalStateException("in-flight span of " + span + " offsets is too large to index");
        }
        int needed = (int) span;
        int capacity = Integer.highestOneBit(Math.max(needed, 1));
        if (capacity < needed) {
            capacity <<= 1;
        }
        return Math.max(MIN_CAPACITY, capacity << 1);
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
        if (size == 0) {
            throw new NoSuchElementException("no in-flight entries");
        }
    }
}
