package dev.millrace.broker.share;

/** A run of consecutive acquired offsets with one delivery count, as AcquiredRecords on the wire. */
public record AcquiredBatch(long firstOffset, long lastOffset, int deliveryCount) {
}
