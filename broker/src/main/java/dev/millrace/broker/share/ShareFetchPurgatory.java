package dev.millrace.broker.share;

import java.util.Collection;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.apache.kafka.common.TopicPartition;

import dev.millrace.delay.Timer;

/**
 * ShareFetches waiting for acquirable records, watched per topic partition. An append to the
 * partition or a share-partition event (records released, locks expired, backoff over, the window
 * moved) re-tries the fetches watching it; the timing wheel completes the rest at their max wait.
 * Nothing polls.
 *
 * <p>Thread-safe.
 */
final class ShareFetchPurgatory {

    private final Timer timer;
    private final Map<TopicPartition, Queue<DelayedShareFetch>> watchers = new ConcurrentHashMap<>();

    ShareFetchPurgatory(Timer timer) {
        this.timer = timer;
    }

    /** Watches {@code fetch} on {@code partitions}, starts its timeout, and tries it once more. */
    void watch(DelayedShareFetch fetch, Collection<TopicPartition> partitions) {
        for (TopicPartition tp : partitions) {
            watchers.computeIfAbsent(tp, k -> new ConcurrentLinkedQueue<>()).add(fetch);
        }
        timer.add(fetch);
        fetch.tryComplete();
    }

    /** Something may have become acquirable on {@code tp}: re-try the fetches watching it. */
    void onChange(TopicPartition tp) {
        Queue<DelayedShareFetch> waiting = watchers.get(tp);
        if (waiting == null || waiting.isEmpty()) {
            return;
        }
        waiting.removeIf(fetch -> fetch.isCompleted() || fetch.tryComplete());
    }

    /** Drops completed fetches from partitions that saw no event. */
    void purgeCompleted() {
        watchers.values().forEach(q -> q.removeIf(DelayedShareFetch::isCompleted));
    }
}
