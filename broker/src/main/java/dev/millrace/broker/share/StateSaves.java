package dev.millrace.broker.share;

import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Where a share-partition's state change goes to be saved: straight to the {@link ShareStateStore}, or, while the
 * changing thread has a {@link Batch} open, into that batch, which saves each changed partition once when it is
 * flushed. A ShareFetch opens one around its piggy-backed acknowledgements and its acquisitions, so that a fetch
 * writes one state record per partition instead of one for the acknowledgements and another for the acquisition.
 *
 * <p>A save returns once the store wrote it (in a cluster: on every in-sync replica of the share-state partition,
 * {@link ShareStateCoordinator}), so an acquisition is durable before its records are handed out, and an
 * acknowledgement before it is answered. A partition dropped because its leadership moved saves nothing (the save
 * throws NOT_LEADER_OR_FOLLOWER, and the request fails rather than report a change that was not saved).
 *
 * <p>A save is a snapshot of the partition as it stands when it is taken, so one save after several changes records
 * all of them. The request that caused the changes must not be answered before its batch is flushed (the store's
 * promise that state is written before the request that changed it is answered).
 *
 * <p>Thread-safe: a batch belongs to the thread that opened it (partitions call {@link #changed} on the thread that
 * caused the change, {@link SharePartitionListener}).
 */
final class StateSaves {

    private final ShareStateStore store;
    private final ThreadLocal<Batch> open = new ThreadLocal<>();

    StateSaves(ShareStateStore store) {
        this.store = Objects.requireNonNull(store, "store");
    }

    /** {@code partition}'s state changed: saves it now, or with the calling thread's open batch. */
    void changed(SharePartition partition) {
        Batch batch = open.get();
        if (batch == null) {
            checkOpen(partition);
            store.save(partition);
        } else {
            batch.changed.add(partition);
        }
    }

    /**
     * Runs {@code action} once {@code partition}'s change made on this thread is saved: now if no batch is open (the
     * partition was saved already: partitions save before they report what must follow a save, such as owed
     * dead-letter copies), else once the batch saved it, and not at all if that save failed.
     */
    void afterSave(SharePartition partition, Runnable action) {
        Batch batch = open.get();
        if (batch == null) {
            action.run();
        } else {
            batch.afterSave.add(action);
            batch.afterSaveKeys.add(partition.key());
        }
    }

    /** A dropped share-partition ({@link SharePartition#close()}) saves nothing: its new leader owns the state. */
    private static void checkOpen(SharePartition partition) {
        if (partition.isClosed()) {
            throw new org.apache.kafka.common.errors.NotLeaderOrFollowerException(partition.key()
                    + " moved to another leader; this change to it was not saved");
        }
    }

    /**
     * Opens a batch on the calling thread; if one is open already, the returned batch belongs to it (its flush and
     * close do nothing, the outer batch saves).
     */
    Batch open() {
        if (open.get() != null) {
            return new Batch(false);
        }
        Batch batch = new Batch(true);
        open.set(batch);
        return batch;
    }

    /** The partitions changed on one thread since it opened the batch; try-with-resources. */
    final class Batch implements AutoCloseable {
        private final boolean owner;
        private final Set<SharePartition> changed = new LinkedHashSet<>();
        /** Actions waiting for their partitions' saves, and those partitions (parallel lists). */
        private final java.util.List<Runnable> afterSave = new java.util.ArrayList<>();
        private final java.util.List<SharePartitionKey> afterSaveKeys = new java.util.ArrayList<>();

        private Batch(boolean owner) {
            this.owner = owner;
        }

        /** Saves every partition changed so far, each once; the batch stays open; throws the first failure. */
        void flush() {
            Map<SharePartitionKey, RuntimeException> failures = flushFailures();
            if (failures.isEmpty()) {
                return;
            }
            RuntimeException first = null;
            for (RuntimeException e : failures.values()) {
                if (first == null) {
                    first = e;
                } else if (e != first) {
                    first.addSuppressed(e);
                }
            }
            throw first;
        }

        /**
         * Saves every partition changed so far, each once, and runs the after-save actions of those saved; the batch stays
         * open. Returns the partitions whose save failed, with the failure (empty when all were saved): a ShareFetch
         * answers each of them with its error and the others as usual, rather than failing the whole response for
         * one share-partition (which withheld every other partition's records and acknowledgement results, and, for
         * a share-partition fenced by a newer leader, did so on every fetch of the member).
         */
        Map<SharePartitionKey, RuntimeException> flushFailures() {
            if (!owner || changed.isEmpty() && afterSave.isEmpty()) {
                return Map.of();
            }
            Map<SharePartitionKey, RuntimeException> failures = new java.util.LinkedHashMap<>();
            for (SharePartition partition : changed) {
                try {
                    checkOpen(partition);
                    store.save(partition);
                } catch (RuntimeException e) {
                    failures.put(partition.key(), e);
                }
            }
            changed.clear();
            for (int i = 0; i < afterSave.size(); i++) {
                if (!failures.containsKey(afterSaveKeys.get(i))) {
                    afterSave.get(i).run();
                }
            }
            afterSave.clear();
            afterSaveKeys.clear();
            return failures;
        }

        /** Flushes, then closes: later changes on this thread are saved at once again. */
        @Override
        public void close() {
            if (!owner) {
                return;
            }
            try {
                flush();
            } finally {
                open.remove();
            }
        }
    }
}
