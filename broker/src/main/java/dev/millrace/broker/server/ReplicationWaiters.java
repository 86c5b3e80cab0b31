package dev.millrace.broker.server;

import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.CoordinatorNotAvailableException;
import org.apache.kafka.common.errors.NotCoordinatorException;

import dev.millrace.broker.coordinator.ReplicationAwaiter;
import dev.millrace.delay.Timer;
import dev.millrace.delay.TimerTask;

/**
 * The broker's {@link ReplicationAwaiter}s: coordinator appends waiting for their partition's high watermark. Each
 * wait is kept on its partition and in the timing wheel until {@code timeoutMs}; every change to the partition (high
 * watermark, role, ISR: {@link PartitionManager#addChangeListener}) re-checks the waits kept on it.
 *
 * <p>Thread-safe.
 */
final class ReplicationWaiters {

    private final PartitionManager partitions;
    private final Timer timer;
    private final long timeoutMs;
    private final Map<TopicPartition, Queue<Wait>> waits = new ConcurrentHashMap<>();

    /**
     * @param timeoutMs how long a wait may take before it fails with COORDINATOR_NOT_AVAILABLE; longer than
     *                  {@code replica.lag.time.max.ms}, after which a follower that holds up the high watermark
     *                  leaves the ISR
     */
    ReplicationWaiters(PartitionManager partitions, Timer timer, long timeoutMs) {
        this.partitions = partitions;
        this.timer = timer;
        this.timeoutMs = timeoutMs;
    }

    /** The awaiter of {@code topic}'s partitions. */
    ReplicationAwaiter forTopic(String topic) {
        return partition -> awaitLogEnd(new TopicPartition(topic, partition));
    }

    CompletableFuture<Void> awaitLogEnd(TopicPartition tp) {
        Partition partition = partitions.partition(tp).orElse(null);
        if (partition == null || !partition.isLeader()) {
            return CompletableFuture.failedFuture(notCoordinator(tp));
        }
        int leaderEpoch = partition.leaderEpoch();
        long target = partition.logEndOffset();
        if (partition.highWatermark() >= target) {
            return CompletableFuture.completedFuture(null);
        }
        Wait wait = new Wait(tp, leaderEpoch, target, timeoutMs);
        waits.computeIfAbsent(tp, k -> new ConcurrentLinkedQueue<>()).add(wait);
        timer.add(wait);
        wait.check(partition); // a change between the first look and the add
        return wait.future;
    }

    /** Re-checks the waits kept on {@code tp}. */
    void onPartitionChange(TopicPartition tp) {
        Queue<Wait> kept = waits.get(tp);
        if (kept == null || kept.isEmpty()) {
            return;
        }
        Partition partition = partitions.partition(tp).orElse(null);
        kept.removeIf(wait -> wait.check(partition));
    }

    /** Drops finished waits from partitions that saw no change since. */
    void purgeCompleted() {
        waits.values().forEach(q -> q.removeIf(w -> w.future.isDone()));
    }

    private static NotCoordinatorException notCoordinator(TopicPartition tp) {
        return new NotCoordinatorException("This broker no longer leads " + tp + ", whose coordinator moved");
    }

    private static final class Wait extends TimerTask {
        private final TopicPartition tp;
        private final int leaderEpoch;
        private final long target;
        private final CompletableFuture<Void> future = new CompletableFuture<>();

        Wait(TopicPartition tp, int leaderEpoch, long target, long timeoutMs) {
            super(timeoutMs);
            this.tp = tp;
            this.leaderEpoch = leaderEpoch;
            this.target = target;
        }

        /** Completes or fails the wait if its partition allows it now; true once the wait is finished. */
        boolean check(Partition partition) {
            if (future.isDone()) {
                return true;
            }
            if (partition == null || !partition.isLeader() || partition.leaderEpoch() != leaderEpoch) {
                finish(notCoordinator(tp));
            } else if (partition.highWatermark() >= target) {
                finish(null);
            }
            return future.isDone();
        }

        private void finish(RuntimeException error) {
            cancel();
            if (error == null) {
                future.complete(null);
            } else {
                future.completeExceptionally(error);
            }
        }

        @Override
        public void run() {
            future.completeExceptionally(new CoordinatorNotAvailableException("The in-sync replicas of " + tp
                    + " did not reach offset " + target + " in time; try again"));
        }
    }
}
