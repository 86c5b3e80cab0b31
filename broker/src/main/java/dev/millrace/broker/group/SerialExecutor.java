package dev.millrace.broker.group;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs tasks one at a time, in submission order, on a shared delegate executor: the "thread" of one
 * {@link GroupShard}. Tasks submitted while one runs (also from inside a task) queue behind it, so a
 * task never interleaves with another of the same executor; consecutive tasks may run on different
 * delegate threads, with a happens-before edge between them through the queue's lock.
 *
 * <p>With a direct delegate ({@code Runnable::run}) the submitting thread drains the queue, which
 * makes tests deterministic. A task that throws is logged and does not stop the queue.
 *
 * <p>Threading: thread-safe.
 */
final class SerialExecutor implements Executor {

    private static final Logger log = LoggerFactory.getLogger(SerialExecutor.class);

    private final Executor delegate;
    private final String name;
    private final Queue<Runnable> tasks = new ArrayDeque<>();
    private boolean draining;

    SerialExecutor(Executor delegate, String name) {
        this.delegate = delegate;
        this.name = name;
    }

    /**
     * Queues {@code task}.
     *
     * @throws RejectedExecutionException if the delegate refuses to run the queue (it is shut down)
     */
    @Override
    public void execute(Runnable task) {
        synchronized (tasks) {
            tasks.add(task);
            if (draining) {
                return;
            }
            draining = true;
        }
        try {
            delegate.execute(this::drain);
        } catch (RejectedExecutionException e) {
            synchronized (tasks) {
                tasks.clear();
                draining = false;
            }
            throw e;
        }
    }

    private void drain() {
        while (true) {
            Runnable next;
            synchronized (tasks) {
                next = tasks.poll();
                if (next == null) {
                    draining = false;
                    return;
                }
            }
            try {
                next.run();
            } catch (RuntimeException e) {
                log.error("Task on {} failed", name, e);
            }
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
