package dev.millrace.broker.server;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;

import org.apache.kafka.common.TopicPartition;

import dev.millrace.delay.Timer;

/**
 * Long-poll fetches waiting for data: each {@link DelayedFetch} is watched on every partition it
 * reads and sits in the timing wheel until {@code fetch.max.wait.ms}. An append to a partition
 * re-checks the fetches watching it; the first of "enough bytes" or "time is up" completes a fetch,
 * exactly once. No thread polls: waiting costs a timer entry and a watcher entry per partition.
 *
 * <p>Completing a fetch reads the log and builds its response (a share fetch also acquires), on
 * the thread that reports the append. Transaction markers are reported through
 * {@link #onAppendLater}, so that the transaction coordinator's thread, which writes them before
 * EndTxn answers, hands that work to the purgatory's wake-up thread instead of doing it itself.
 *
 * <p>Thread-safe.
 */
final class FetchPurgatory {

    private final Timer timer;
    private final Map<TopicPartition, Queue<DelayedFetch>> watchers = new ConcurrentHashMap<>();
    private final List<Consumer<TopicPartition>> appendListeners = new CopyOnWriteArrayList<>();
    private final Executor wakeups;

    /** @param wakeups runs the wake-ups of {@link #onAppendLater}, one at a time and in order */
    FetchPurgatory(Timer timer, Executor wakeups) {
        this.timer = timer;
        this.wakeups = wakeups;
    }

    /** Watches {@code fetch} on its partitions and starts its timeout; completes it at once if it already can. */
    void watch(DelayedFetch fetch, Collection<TopicPartition> partitions) {
        for (TopicPartition tp : partitions) {
            watchers.computeIfAbsent(tp, k -> new ConcurrentLinkedQueue<>()).add(fetch);
        }
        timer.add(fetch);
        fetch.tryComplete();
    }

    /** Also tells {@code listener} of every append (share groups wake their long-poll fetches). */
    void addAppendListener(Consumer<TopicPartition> listener) {
        appendListeners.add(listener);
    }

    /** Called after an append to {@code tp}: completes the fetches that now have enough data. */
    void onAppend(TopicPartition tp) {
        appendListeners.forEach(listener -> listener.accept(tp));
        Queue<DelayedFetch> waiting = watchers.get(tp);
        if (waiting == null || waiting.isEmpty()) {
            return;
        }
        waiting.removeIf(fetch -> fetch.isCompleted() || fetch.tryComplete());
    }

    /**
     * {@link #onAppend} on the wake-up thread: the caller does not wait for the listeners or for the
     * fetches it completes. Dropped once the wake-up executor is shut down (the broker is stopping).
     */
    void onAppendLater(TopicPartition tp) {
        try {
            wakeups.execute(() -> onAppend(tp));
        } catch (RejectedExecutionException e) {
            // stopping: the waiting fetches end at their max wait
        }
    }

    /** Drops completed fetches left in the watcher lists of partitions that saw no append. */
    void purgeCompleted() {
        watchers.values().forEach(q -> q.removeIf(DelayedFetch::isCompleted));
    }
}
