package dev.millrace.broker.share;

import java.util.Arrays;

/**
 * A growable list of offsets in a {@code long[]}: the offsets one acquisition takes, without a boxed {@code Long} per
 * record (a fetch acquires hundreds). Not thread-safe.
 */
final class OffsetList {

    private long[] offsets;
    private int size;

    OffsetList() {
        this(16);
    }

    OffsetList(int capacity) {
        offsets = new long[Math.max(1, capacity)];
    }

    void add(long offset) {
        if (size == offsets.length) {
            offsets = Arrays.copyOf(offsets, size * 2);
        }
        offsets[size++] = offset;
    }

    long get(int index) {
        if (index < 0 || index >= size) {
            throw new IndexOutOfBoundsException("index " + index + " of " + size + " offsets");
        }
        return offsets[index];
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    void clear() {
        size = 0;
    }

    /** Whether {@code offset} is in the list (a linear search: for the few offsets of one batch). */
    boolean contains(long offset) {
        for (int i = 0; i < size; i++) {
            if (offsets[i] == offset) {
                return true;
            }
        }
        return false;
    }

    long[] toArray() {
        return Arrays.copyOf(offsets, size);
    }

    @Override
    public String toString() {
        return Arrays.toString(toArray());
    }
}
