package dev.millrace.broker.share;

/**
 * The mutable state of one offset between a share-partition's start and end offsets. Guarded by
 * the monitor of the {@link SharePartition} that holds it; not thread-safe on its own.
 */
final class InFlightRecord {

    RecordState state;
    int deliveryCount;
    /** The member holding the lock while {@link RecordState#ACQUIRED}, else null. */
    String memberId;
    /** Which acquisition holds the lock, so a stale lock timer leaves a newer acquisition alone. */
    long acquisitionId;
    /** When the lock expires, on the monotonic clock, while acquired. */
    long lockExpiresAtMs;
    /** When an available record may be acquired again (redelivery backoff), on the monotonic clock. */
    long availableAtMs;
    /**
     * While acquired: the producer id of the transaction the record is held for (TxnShareAcknowledge), else -1.
     * A held record's lock does not expire, its member leaving does not release it, and only that transaction's
     * marker settles it.
     */
    long transactionProducerId = -1;
    /**
     * AVAILABLE because its lock was lost without its holder settling it, and not acquired since: a new leader restored
     * it from a lock lost with the old leader ({@link SharePartition#restore}), the lock expired, or its member was
     * removed. That acquisition still counts in {@link #deliveryCount}, and one RETURN may undo it
     * ({@link SharePartition#returnAcquired}). Not saved: a record restored again from a save made meanwhile cannot
     * be returned (it keeps the count, the safe side).
     */
    boolean lockLost;

    InFlightRecord(RecordState state, int deliveryCount) {
        this.state = state;
        this.deliveryCount = deliveryCount;
    }

    boolean isAcquirable(long nowMs) {
        return state == RecordState.AVAILABLE && availableAtMs <= nowMs;
    }

    boolean isHeldBy(String member) {
        return state == RecordState.ACQUIRED && member.equals(memberId);
    }

    boolean isHeldForTransaction() {
        return state == RecordState.ACQUIRED && transactionProducerId >= 0;
    }

    @Override
    public String toString() {
        return state + "(deliveries=" + deliveryCount + (memberId == null ? "" : ", member=" + memberId) + ")";
    }
}
