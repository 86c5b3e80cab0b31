package dev.millrace.chaos;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A consumer's thread: runs {@code step} until closed. A step blocks for at most about a second (a receive or poll
 * with a timeout); an exception from it is counted and the loop goes on, as an application's consumer would.
 */
final class ConsumerLoop implements AutoCloseable {

    /** One receive (or poll) and its handling. */
    @FunctionalInterface
    interface Step {
        void run() throws Exception;
    }

    private final AtomicBoolean running = new AtomicBoolean(true);
    private final Thread thread;
    private volatile long errors;
    private volatile String lastError = "";

    ConsumerLoop(String name, Step step) {
        thread = new Thread(() -> {
            while (running.get()) {
                try {
                    step.run();
                } catch (Exception e) {
                    errors++;
                    lastError = e.toString();
                }
            }
        }, name);
        thread.setDaemon(true);
        thread.start();
    }

    long errors() {
        return errors;
    }

    String lastError() {
        return lastError;
    }

    @Override
    public void close() throws InterruptedException {
        running.set(false);
        thread.join(60_000);
    }
}
