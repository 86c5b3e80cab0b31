package dev.millrace.jms.wire.share;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.millrace.protocol.ext.ShareSettle;

/**
 * Collects settlements (offset, type) of one share consumer's topic and turns them into ShareSettle batches: per
 * partition, runs of consecutive offsets with one type become one batch, so acknowledging 10,000 consecutive
 * messages is one range on the wire.
 *
 * <p>Not thread-safe: the owning consumer's event loop uses it.
 */
public final class SettleBatches {

    private final String topic;
    /** partition -> offset -> type. */
    private final Map<Integer, TreeMap<Long, Byte>> byPartition = new TreeMap<>();
    private int size;

    public SettleBatches(String topic) {
        this.topic = topic;
    }

    public void add(int partition, long offset, byte type) {
        if (byPartition.computeIfAbsent(partition, p -> new TreeMap<>()).put(offset, type) == null) {
            size++;
        }
    }

    public boolean isEmpty() {
        return size == 0;
    }

    public int size() {
        return size;
    }

    /** Moves every settlement collected here into {@code into} (a later one of an offset wins there). */
    public void moveTo(SettleBatches into) {
        byPartition.forEach((partition, offsets) -> offsets.forEach((offset, type) -> into.add(partition, offset,
                type)));
        byPartition.clear();
        size = 0;
    }

    /** The partitions that have settlements here. */
    public java.util.Set<Integer> partitions() {
        return java.util.Set.copyOf(byPartition.keySet());
    }

    /** Forgets the settlements of {@code partition} (its leader is gone, and with it the locks they settle). */
    public void removePartition(int partition) {
        TreeMap<Long, Byte> offsets = byPartition.remove(partition);
        if (offsets != null) {
            size -= offsets.size();
        }
    }

    /** The settlements of the partitions in {@code only} as ShareSettle partitions, and forgets them. */
    public List<ShareSettle.PartitionBatches> drain(java.util.Set<Integer> only) {
        List<ShareSettle.PartitionBatches> out = new ArrayList<>();
        for (int partition : only) {
            TreeMap<Long, Byte> offsets = byPartition.remove(partition);
            if (offsets != null) {
                size -= offsets.size();
                out.add(new ShareSettle.PartitionBatches(topic, partition, ranges(offsets)));
            }
        }
        return out;
    }

    /** The collected settlements as ShareSettle partitions, and forgets them. */
    public List<ShareSettle.PartitionBatches> drain() {
        List<ShareSettle.PartitionBatches> out = new ArrayList<>();
        for (Map.Entry<Integer, TreeMap<Long, Byte>> e : byPartition.entrySet()) {
            out.add(new ShareSettle.PartitionBatches(topic, e.getKey(), ranges(e.getValue())));
        }
        byPartition.clear();
        size = 0;
        return out;
    }

    /** Runs of consecutive offsets of one type, in offset order. */
    static List<ShareSettle.Batch> ranges(TreeMap<Long, Byte> offsets) {
        List<ShareSettle.Batch> out = new ArrayList<>();
        long first = -1;
        long last = -1;
        byte type = 0;
        for (Map.Entry<Long, Byte> e : offsets.entrySet()) {
            long o = e.getKey();
            byte t = e.getValue();
            if (first >= 0 && o == last + 1 && t == type) {
                last = o;
                continue;
            }
            if (first >= 0) {
                out.add(new ShareSettle.Batch(first, last, type));
            }
            first = o;
            last = o;
            type = t;
        }
        if (first >= 0) {
            out.add(new ShareSettle.Batch(first, last, type));
        }
        return out;
    }
}
