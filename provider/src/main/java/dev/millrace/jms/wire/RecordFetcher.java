package dev.millrace.jms.wire;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.WakeupException;

import dev.millrace.jms.JmsExceptions;
import jakarta.jms.JMSException;

/**
 * Fetches the records of one JMS consumer ahead of the application into a buffer of at most one poll (the prefetch),
 * on a thread of its own that alone touches the Kafka client (kafka-clients consumers are not thread-safe).
 *
 * <pre>
 *   fetcher thread:  run commands -> poll client (when the buffer is empty and the subclass allows) -> buffer
 *   any thread:      take() from the buffer;  call(command) runs a command on the fetcher thread and waits
 * </pre>
 *
 * <p>Commands (acknowledge, rewind, release, close) wake the client out of its poll, so they run promptly.
 * Thread-safe.
 */
public abstract class RecordFetcher implements Fetcher {

    private static final Duration POLL_TIMEOUT = Duration.ofMillis(500);

    private final BlockingQueue<Runnable> commands = new LinkedBlockingQueue<>();
    /** Commands queued without waking the fetcher thread ({@link #submitQuietly}); run before {@link #commands}. */
    private final Queue<Runnable> quiet = new ConcurrentLinkedQueue<>();
    private final LinkedBlockingDeque<Delivery> buffer = new LinkedBlockingDeque<>();
    private final Thread thread;
    private final int timeoutMs;
    private volatile Runnable onArrival = () -> { };
    private volatile boolean running = true;
    private volatile boolean polling;
    private volatile Throwable failure;

    protected RecordFetcher(String name, int timeoutMs) {
        this.timeoutMs = timeoutMs;
        this.thread = new Thread(this::run, name);
        this.thread.setDaemon(true);
    }

    /** Starts the fetcher thread and runs {@code init} on it, waiting for it. */
    protected final void start(Callable<Void> init) throws JMSException {
        CompletableFuture<Void> started = new CompletableFuture<>();
        commands.offer(() -> {
            try {
                init.call();
                started.complete(null);
            } catch (Throwable t) {
                failure = t;
                started.completeExceptionally(t);
            }
        });
        thread.start();
        try {
            started.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw JmsExceptions.fromClient("start consumer", e);
        } catch (Exception e) {
            throw JmsExceptions.fromClient("start consumer", e);
        }
    }

    protected final int timeoutMs() {
        return timeoutMs;
    }

    /** Called (on the fetcher thread) when records arrive in the buffer. */
    public void onArrival(Runnable onArrival) {
        this.onArrival = onArrival;
    }

    /** The next buffered record, waiting up to {@code timeoutMs} (0 = no wait, negative = forever), or null. */
    public Delivery take(long timeoutMs) throws InterruptedException {
        Delivery d;
        if (timeoutMs == 0) {
            d = buffer.pollFirst();
        } else if (timeoutMs < 0) {
            d = null;
            while (d == null && running) {
                d = buffer.pollFirst(100, TimeUnit.MILLISECONDS);
            }
        } else {
            d = buffer.pollFirst(timeoutMs, TimeUnit.MILLISECONDS);
        }
        if (d != null && buffer.isEmpty()) {
            commands.offer(() -> { });
        }
        return d;
    }

    /** Puts records back at the front of the buffer, in their order (delivery was refused or stopped). */
    public void putBack(List<Delivery> deliveries) {
        for (int i = deliveries.size() - 1; i >= 0; i--) {
            buffer.addFirst(deliveries.get(i));
        }
    }

    public boolean hasBuffered() {
        return !buffer.isEmpty();
    }

    /** Empties the buffer, returning what was in it in order. */
    protected final List<Delivery> drainBuffer() {
        List<Delivery> drained = new java.util.ArrayList<>();
        buffer.drainTo(drained);
        return drained;
    }

    /** Runs {@code command} on the fetcher thread and waits for its result, up to the request timeout. */
    public final <T> T call(String what, Callable<T> command) throws JMSException {
        if (Thread.currentThread() == thread) {
            try {
                return command.call();
            } catch (Exception e) {
                throw JmsExceptions.fromClient(what, e);
            }
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        commands.offer(() -> {
            try {
                result.complete(command.call());
            } catch (Throwable t) {
                result.completeExceptionally(t);
            }
        });
        if (polling) {
            wakeupClient();
        }
        try {
            return result.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw JmsExceptions.fromClient(what, e);
        } catch (Exception e) {
            throw JmsExceptions.fromClient(what, e);
        }
    }

    /**
     * Like {@link #submit}, but without waking the fetcher thread: the command runs when the thread next looks at its
     * commands (woken by another command or {@link #wake}, or at the end of its idle wait, {@link #idleWaitMs}). The
     * thread does not start an idle wait while quiet commands are queued.
     */
    protected final void submitQuietly(Runnable command) {
        quiet.offer(() -> {
            try {
                command.run();
            } catch (RuntimeException e) {
                failure = e;
            }
        });
    }

    /** Wakes the fetcher thread to run its queued commands (quiet ones too). Any thread. */
    protected final void wake() {
        submit(() -> { });
    }

    /** Runs {@code command} on the fetcher thread later, without waiting; a failure is only kept as {@link #failure}. */
    protected final void submit(Runnable command) {
        commands.offer(() -> {
            try {
                command.run();
            } catch (RuntimeException e) {
                failure = e;
            }
        });
        if (polling) {
            wakeupClient();
        }
    }

    private void run() {
        try {
            while (running) {
                Runnable command;
                while ((command = quiet.poll()) != null) {
                    command.run();
                }
                while ((command = commands.poll()) != null) {
                    command.run();
                }
                try {
                    afterCommands();
                } catch (RuntimeException e) {
                    // a subclass's deferred work failed; what it left undone is redone by the broker (lock expiry)
                }
                if (!running) {
                    break;
                }
                if (!buffer.isEmpty() || !readyToPoll() || failure != null) {
                    long waitMs = idleWaitMs(); // before looking at the quiet queue (see submitQuietly)
                    if (!quiet.isEmpty()) {
                        continue;
                    }
                    command = commands.poll(Math.max(1, Math.min(100, waitMs)), TimeUnit.MILLISECONDS);
                    if (command != null) {
                        command.run();
                    }
                    continue;
                }
                polling = true;
                if (!commands.isEmpty()) {
                    polling = false;
                    continue;
                }
                try {
                    Collection<Delivery> fetched = poll(POLL_TIMEOUT);
                    // before the records can reach the application: a command it submits for them must not wake a
                    // client that is no longer polling (the wakeup would stay pending and break the next commit)
                    polling = false;
                    if (!fetched.isEmpty()) {
                        buffer.addAll(fetched);
                        onArrival.run();
                    }
                } catch (WakeupException | InterruptException e) {
                    // a command is waiting
                } catch (RuntimeException e) {
                    failure = e;
                } finally {
                    polling = false;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            Runnable left;
            while ((left = quiet.poll()) != null) {
                left.run();
            }
            while ((left = commands.poll()) != null) {
                left.run(); // e.g. acknowledgements submitted before close
            }
            try {
                closeClient();
            } catch (RuntimeException e) {
                failure = e;
            }
        }
    }

    /**
     * Runs a blocking client call, once more if a wakeup meant for a poll that had already returned interrupts it
     * (kafka-clients keeps a wakeup until the next blocking call).
     */
    protected static <T> T awake(java.util.function.Supplier<T> call) {
        try {
            return call.get();
        } catch (WakeupException e) {
            return call.get();
        }
    }

    /** The failure of the last poll, if it failed; the fetcher stops polling after one. */
    public Throwable failure() {
        return failure;
    }

    /**
     * How long the fetcher thread may wait for a command while it does not poll, before it runs
     * {@link #afterCommands} again (at most 100 ms). Fetcher thread.
     */
    protected long idleWaitMs() {
        return 100;
    }

    /** Called on the fetcher thread after each run of queued commands, before a poll. */
    protected void afterCommands() {
    }

    /** Whether the subclass lets the fetcher poll again (all records of the last poll settled). Fetcher thread. */
    protected boolean readyToPoll() {
        return true;
    }

    /** Polls the client. Fetcher thread. */
    protected abstract Collection<Delivery> poll(Duration timeout);

    /** Interrupts a poll in progress; any thread. */
    protected abstract void wakeupClient();

    /** Closes the client. Fetcher thread, last. */
    protected abstract void closeClient();

    /** Stops the fetcher thread and closes the client, waiting up to the request timeout. Idempotent. */
    @Override
    public void close() {
        if (!running) {
            return;
        }
        running = false;
        commands.offer(() -> { });
        if (polling) {
            wakeupClient(); // only then: a wakeup left pending would break the closing commit instead
        }
        if (Thread.currentThread() != thread) {
            try {
                thread.join(timeoutMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
