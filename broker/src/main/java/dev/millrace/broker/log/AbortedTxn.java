package dev.millrace.broker.log;

/**
 * One aborted transaction of one producer on one partition: its data lies between
 * {@code firstOffset} and the abort marker at {@code lastOffset}. {@code lastStableOffset} is the
 * partition's last stable offset right after the marker was written (kept for diagnostics, as
 * Kafka's index does).
 */
public record AbortedTxn(long producerId, long firstOffset, long lastOffset, long lastStableOffset) {
}
