package dev.millrace.broker.share;

/**
 * What a {@link SharePartition} tells the rest of the broker. Called after the partition's monitor
 * is released, on the thread that caused the change (a request thread or the timer's executor).
 */
public interface SharePartitionListener {

    /** Records may have become acquirable (released, lock expired, backoff passed, window moved). */
    void onRecordsAvailable(SharePartitionKey key);

    /** A record was archived without being accepted (reported once its archive is saved). */
    void onArchived(DeadLetter deadLetter);

    /**
     * {@code partition} owes dead-letter copies ({@link SharePartition#nextDeadLetterCopy()}), some of them new or
     * restored: have them made. Reported after the save that made them owed.
     */
    default void onDeadLetterCopiesOwed(SharePartition partition) {
    }

    /** The partition's state changed (to persist it). */
    default void onStateChanged(SharePartition partition) {
    }

    SharePartitionListener NONE = new SharePartitionListener() {
        @Override
        public void onRecordsAvailable(SharePartitionKey key) {
        }

        @Override
        public void onArchived(DeadLetter deadLetter) {
        }
    };
}
