package dev.millrace.broker.server;

import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.apache.kafka.common.TopicPartition;

import dev.millrace.delay.Timer;

/**
 * {@code acks=all} produces waiting for their partitions' high watermarks: each {@link DelayedProduce} is watched on
 * its partitions and sits in the timing wheel until the request's timeout. A change to a partition (high watermark,
 * ISR, role: {@link PartitionManager#addChangeListener}) re-checks the produces watching it.
 *
 * <p>Thread-safe.
 */
final class ProducePurgatory {

    private final Timer timer;
    private final Map<TopicPartition, Queue<DelayedProduce>> watchers = new ConcurrentHashMap<>();

    ProducePurgatory(Timer timer) {
        this.timer = timer;
    }

    /** Completes {@code produce} at once if it can, otherwise watches it and starts its timeout. */
    void watch(DelayedProduce produce) {
        if (produce.tryComplete()) {
            return;
        }
        for (DelayedProduce.Waiting w : produce.waiting()) {
            watchers.computeIfAbsent(w.partition().topicPartition(), k -> new ConcurrentLinkedQueue<>()).add(produce);
        }
        timer.add(produce);
        produce.tryComplete(); // a change between the first check and the watch
    }

    /** Re-checks the produces waiting on {@code tp}. */
    void onPartitionChange(TopicPartition tp) {
        Queue<DelayedProduce> waiting = watchers.get(tp);
        if (waiting == null || waiting.isEmpty()) {
            return;
        }
        waiting.removeIf(produce -> produce.isCompleted() || produce.tryComplete());
    }

    /** Drops completed produces left in the watcher lists of partitions that saw no change. */
    void purgeCompleted() {
        watchers.values().forEach(q -> q.removeIf(DelayedProduce::isCompleted));
    }
}
