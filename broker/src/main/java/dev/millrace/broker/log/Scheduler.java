package dev.millrace.broker.log;

/** Runs a task later; injected so tests control when deferred work (file deletion) happens. */
@FunctionalInterface
public interface Scheduler {

    /** Runs {@code task} once after {@code delayMs}; a delay of 0 may run it on the calling thread. */
    void schedule(String name, Runnable task, long delayMs);

    /** A scheduler that runs every task at once, on the calling thread. */
    Scheduler IMMEDIATE = (name, task, delayMs) -> task.run();
}
