package dev.millrace.chaos;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Sends at a steady rate: calls {@code send(sequence)} every {@code periodMs} on a thread of its own, one call at a
 * time (a send that blocks through a failover delays the next ones; it does not pile them up). A send that throws is
 * counted by the caller and the pace goes on.
 */
final class Pacer implements AutoCloseable {

    /** One paced send. */
    @FunctionalInterface
    interface Send {
        void send(long sequence) throws Exception;
    }

    private final ScheduledExecutorService executor;
    private final AtomicLong sequence = new AtomicLong();

    Pacer(String name, long periodMs, Send send) {
        executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
        executor.scheduleAtFixedRate(() -> {
            try {
                send.send(sequence.getAndIncrement());
            } catch (Exception | AssertionError e) {
                // the flow counted it; keep pacing
            }
        }, 0, periodMs, TimeUnit.MILLISECONDS);
    }

    /** Stops pacing and waits for a send in progress to finish. */
    @Override
    public void close() throws InterruptedException {
        executor.shutdown();
        if (!executor.awaitTermination(2, TimeUnit.MINUTES)) {
            executor.shutdownNow();
        }
    }
}
