package dev.millrace.broker.share;

import java.util.Optional;

/**
 * Where share-partition state survives a restart. {@link #NONE} keeps nothing (state lives in
 * memory only).
 *
 * <p>Implementations are thread-safe.
 */
public interface ShareStateStore {

    /** The last saved state of {@code key}, if any. */
    Optional<SharePartitionSnapshot> load(SharePartitionKey key);

    /** Saves the current state of {@code partition}; may batch or write asynchronously. */
    void save(SharePartition partition);

    ShareStateStore NONE = new ShareStateStore() {
        @Override
        public Optional<SharePartitionSnapshot> load(SharePartitionKey key) {
            return Optional.empty();
        }

        @Override
        public void save(SharePartition partition) {
        }
    };
}
