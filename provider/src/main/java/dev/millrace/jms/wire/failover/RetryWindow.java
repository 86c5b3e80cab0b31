package dev.millrace.jms.wire.failover;

import java.io.IOException;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.protocol.Errors;

import jakarta.jms.InvalidDestinationException;
import jakarta.jms.JMSException;

/**
 * The failover window of a connection ({@code failoverTimeoutMs}): how long a blocking call keeps retrying while
 * brokers are unreachable or leaders and coordinators move, before it gives up with the last failure.
 *
 * <pre>
 *   call(what, attempt):  attempt -> ok                                   -> return
 *                                 -> retriable failure, window left       -> back off, attempt again
 *                                 -> retriable failure, window used up    -> throw it (naming the window)
 *                                 -> any other failure                    -> throw it at once
 * </pre>
 *
 * The window starts at the first failure of a call, not at the call: a call that waits for a slow answer within the
 * request timeout has used none of it. Retriable are I/O failures (a lost connection), kafka-clients'
 * {@link RetriableException}s (NOT_LEADER_OR_FOLLOWER, NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE,
 * COORDINATOR_LOAD_IN_PROGRESS, timeouts, disconnects) and JMSExceptions whose error code names one of those errors
 * ({@link #isRetriable}).
 *
 * <p>Time comes from an injected nanosecond clock and back-off from an injected sleeper, so tests drive both.
 * Thread-safe (immutable); each {@link #call} keeps its own deadline.
 */
public final class RetryWindow {

    /** Pauses a caller between attempts. */
    @FunctionalInterface
    public interface Sleeper {
        void sleep(long millis) throws InterruptedException;
    }

    /** One attempt of a blocking call. */
    @FunctionalInterface
    public interface Attempt<T> {
        T run() throws Exception;
    }

    /** First pause between attempts; it doubles up to {@link #MAX_BACKOFF_MS}. */
    static final long FIRST_BACKOFF_MS = 50;
    static final long MAX_BACKOFF_MS = 1000;

    /** Error names of a broker answer that mean "ask again, maybe elsewhere". */
    private static final Set<String> RETRIABLE_ERRORS = Set.of(Errors.NOT_LEADER_OR_FOLLOWER.name(),
            Errors.NOT_COORDINATOR.name(), Errors.COORDINATOR_NOT_AVAILABLE.name(),
            Errors.COORDINATOR_LOAD_IN_PROGRESS.name(), Errors.LEADER_NOT_AVAILABLE.name(),
            Errors.NETWORK_EXCEPTION.name(), Errors.REQUEST_TIMED_OUT.name(), Errors.NOT_ENOUGH_REPLICAS.name(),
            Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND.name(), Errors.CONCURRENT_TRANSACTIONS.name());

    private final long windowMs;
    private final LongSupplier nanoClock;
    private final Sleeper sleeper;

    /**
     * @param windowMs  how long retriable failures are retried; 0 = not at all (fail at the first one)
     * @param nanoClock {@link System#nanoTime} outside tests
     * @param sleeper   {@link Thread#sleep(long)} outside tests
     */
    public RetryWindow(long windowMs, LongSupplier nanoClock, Sleeper sleeper) {
        if (windowMs < 0) {
            throw new IllegalArgumentException("failoverTimeoutMs must be at least 0, not " + windowMs);
        }
        this.windowMs = windowMs;
        this.nanoClock = nanoClock;
        this.sleeper = sleeper;
    }

    /** The window of a connection, on the system clock. */
    public static RetryWindow of(long windowMs) {
        return new RetryWindow(windowMs, System::nanoTime, Thread::sleep);
    }

    public long windowMs() {
        return windowMs;
    }

    /**
     * Runs {@code attempt}, again after each retriable failure until the window (counted from the first failure) is
     * used up.
     *
     * @throws JMSException the last failure (converted by {@code convert}), or the interruption of a back-off
     */
    public <T> T call(String what, Attempt<T> attempt) throws JMSException {
        long firstFailure = 0;
        boolean failed = false;
        long backoffMs = FIRST_BACKOFF_MS;
        while (true) {
            try {
                return attempt.run();
            } catch (Exception e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                    throw convert(what, e);
                }
                long now = nanoClock.getAsLong();
                if (!failed) {
                    failed = true;
                    firstFailure = now;
                }
                long leftMs = windowMs - TimeUnit.NANOSECONDS.toMillis(now - firstFailure);
                if (!isRetriable(e) || leftMs <= 0) {
                    throw convert(windowMs > 0 && isRetriable(e) ? what + " (retried for the failover window of "
                            + windowMs + " ms)" : what, e);
                }
                try {
                    sleeper.sleep(Math.min(backoffMs, leftMs));
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw convert(what, e);
                }
                backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
            }
        }
    }

    /** Whether a broker's answer {@code error} means "ask again, maybe elsewhere": a leader or coordinator moved. */
    public static boolean isRetriableError(Errors error) {
        return RETRIABLE_ERRORS.contains(error.name());
    }

    /** Whether {@code failure} (or what it wraps) is worth retrying within the window; see the class comment. */
    public static boolean isRetriable(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof UnknownTopicOrPartitionException || t instanceof InvalidDestinationException) {
                return false; // a destination that does not exist (kafka-clients counts it as retriable metadata)
            }
            if (t instanceof IOException || t instanceof RetriableException
                    || t instanceof java.util.concurrent.TimeoutException) {
                return true;
            }
            if (t instanceof JMSException j && j.getErrorCode() != null
                    && RETRIABLE_ERRORS.contains(j.getErrorCode())) {
                return true;
            }
            if (!(t instanceof ExecutionException || t instanceof CompletionException || t instanceof JMSException
                    || t instanceof org.apache.kafka.common.KafkaException)) {
                return false;
            }
            if (t instanceof JMSException j && j.getLinkedException() != null && j.getCause() == null) {
                return isRetriable(j.getLinkedException());
            }
        }
        return false;
    }

    private static JMSException convert(String what, Throwable failure) {
        return dev.millrace.jms.JmsExceptions.fromClient(what, failure);
    }
}
