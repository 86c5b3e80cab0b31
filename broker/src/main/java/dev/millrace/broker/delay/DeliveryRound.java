package dev.millrace.broker.delay;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;

/**
 * What one delivery round writes in one transaction: the copies for each target partition, and for each delay
 * partition the offsets whose delivery the round marks. {@code stillLed} says whether this broker still leads every
 * delay partition of the round; a writer checks it just before the commit and aborts when it no longer holds.
 *
 * <p>Built and read on the delay service's thread; not thread-safe.
 */
public final class DeliveryRound {

    /** One copy of a delayed record for its target (headers include the delivery time). */
    public record Copy(long timestamp, byte[] key, byte[] value, Header[] headers) {
    }

    private final long nowMs;
    private final Map<TopicPartition, List<Copy>> copies = new LinkedHashMap<>();
    private final Map<TopicPartition, List<Long>> marks = new LinkedHashMap<>();
    private final BooleanSupplier stillLed;

    DeliveryRound(long nowMs, BooleanSupplier stillLed) {
        this.nowMs = nowMs;
        this.stillLed = stillLed;
    }

    void addCopy(TopicPartition target, Copy copy) {
        copies.computeIfAbsent(target, t -> new ArrayList<>()).add(copy);
    }

    void addMark(TopicPartition delayPartition, long deliveredOffset) {
        marks.computeIfAbsent(delayPartition, t -> new ArrayList<>()).add(deliveredOffset);
    }

    /** The round's time: the timestamp of its marks. */
    public long nowMs() {
        return nowMs;
    }

    /** The copies by target partition, in insertion order. */
    public Map<TopicPartition, List<Copy>> copies() {
        return copies;
    }

    /** The delivered offsets to mark, by delay partition. */
    public Map<TopicPartition, List<Long>> marks() {
        return marks;
    }

    /** Whether this broker still leads every delay partition of the round (see the class javadoc). */
    public boolean stillLed() {
        return stillLed.getAsBoolean();
    }
}
