package dev.millrace.delay;

import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The single named daemon thread on which a {@link SystemTimer} that owns it runs expired tasks, in
 * the order they expired. {@link #close()} lets the tasks already queued run and waits for them, the
 * way {@code ExecutorService.close()} does in later JDKs, except when called from this very thread
 * (a task closing its own timer), which cannot wait for itself.
 *
 * <p>Threading: thread-safe.
 */
final class TaskExecutor implements Executor {

    private final ThreadPoolExecutor pool;
    private volatile Thread thread;

    TaskExecutor(String threadName) {
        pool = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), runnable -> {
            Thread created = new Thread(runnable, threadName);
            created.setDaemon(true);
            thread = created;
            return created;
        });
    }

    @Override
    public void execute(Runnable task) {
        pool.execute(task);
    }

    /** Runs what is queued, then stops the thread; waits for that unless called on the thread itself. */
    void close() {
        pool.shutdown();
        if (Thread.currentThread() == thread) {
            return;
        }
        try {
            while (!pool.awaitTermination(1, TimeUnit.DAYS)) {
                // keep waiting: queued tasks are allowed to finish
            }
        } catch (InterruptedException e) {
            pool.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    /** For tests: the thread, once started. */
    Thread thread() {
        return thread;
    }
}
