package dev.millrace.delay;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.Executor;

/**
 * An {@link Executor} that only queues: the test decides when queued tasks run, to look at the
 * moment between a task being handed over and it starting. Not thread-safe.
 */
final class ManualExecutor implements Executor {

    private final Queue<Runnable> queued = new ArrayDeque<>();

    @Override
    public void execute(Runnable command) {
        queued.add(command);
    }

    int queued() {
        return queued.size();
    }

    /** Runs everything queued, including what those runs queue. */
    void runAll() {
        Runnable next;
        while ((next = queued.poll()) != null) {
            next.run();
        }
    }
}
