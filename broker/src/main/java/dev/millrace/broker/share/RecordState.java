package dev.millrace.broker.share;

/**
 * The state of one offset of a share-partition. {@link #ACKNOWLEDGED} and {@link #ARCHIVED} are
 * terminal; see {@link SharePartition} for the transitions.
 */
public enum RecordState {
    /** May be handed to a member (at once, or once its redelivery backoff has passed). */
    AVAILABLE,
    /** Handed to one member under a lock that expires. */
    ACQUIRED,
    /** Accepted by the member that held it: done. */
    ACKNOWLEDGED,
    /** Rejected, over the delivery limit, or no record at this offset (a gap): done, never delivered again. */
    ARCHIVED;

    public boolean isTerminal() {
        return this == ACKNOWLEDGED || this == ARCHIVED;
    }
}
