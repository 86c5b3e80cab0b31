package dev.millrace.ra.it.bench;

import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import jakarta.jms.JMSException;
import jakarta.jms.Message;

/**
 * What one side's benchmark MDB saw in the current round: how many messages, the {@link System#nanoTime()} of the
 * first and the last {@code onMessage}, and each message's latency from its send ({@link #SENT_NANOS}, taken by
 * {@link BenchSender} in the same server JVM, so the same clock) to the start of its {@code onMessage}.
 *
 * <p>{@link #reset} starts a round that expects a number of messages; {@link #await} waits until they all came and
 * reports the round as one line of {@code key=value} pairs:
 * <pre>
 *   count=20000 extra=0 firstToLastMs=5123.4 msgsPerSec=3903.8 p50Us=812 p99Us=4021 maxUs=9120
 * </pre>
 * {@code extra} counts deliveries past the expected number (duplicates or left-overs of an earlier round).
 *
 * <p>Thread-safe: {@code onMessage} runs on up to {@code maxSession} container threads at once; a round's state is
 * one immutable-reference {@link Round} replaced by {@link #reset}.
 */
public final class BenchRecorder {

    /** The message property holding the sender's {@link System#nanoTime()} just before {@code send}. */
    public static final String SENT_NANOS = "benchSentNanos";

    public static final BenchRecorder MILLRACE = new BenchRecorder();
    public static final BenchRecorder ARTEMIS = new BenchRecorder();

    private volatile Round round = new Round(0);

    private BenchRecorder() {
    }

    /** The recorder of {@code side} ({@code millrace} or {@code artemis}). */
    public static BenchRecorder of(String side) {
        return switch (side) {
            case "millrace" -> MILLRACE;
            case "artemis" -> ARTEMIS;
            default -> throw new IllegalArgumentException("side must be millrace or artemis, not " + side);
        };
    }

    /** Starts a round expecting {@code expected} messages. */
    public void reset(int expected) {
        round = new Round(expected);
    }

    /** Called at the start of every {@code onMessage}. */
    public void onMessage(Message message) {
        long now = System.nanoTime();
        Round current = round;
        current.firstNanos.compareAndSet(0, now);
        current.lastNanos.accumulateAndGet(now, Math::max);
        int index = current.count.getAndIncrement();
        if (index < current.latenciesNanos.length) {
            try {
                current.latenciesNanos[index] = message.propertyExists(SENT_NANOS)
                        ? now - message.getLongProperty(SENT_NANOS) : -1;
            } catch (JMSException e) {
                current.latenciesNanos[index] = -1;
            }
            current.done.countDown();
        }
    }

    /**
     * Waits up to {@code timeoutMs} for the round's messages, then reports it (whatever arrived, when the wait
     * ran out: {@code count} then says how many).
     */
    public String await(long timeoutMs) throws InterruptedException {
        Round current = round;
        current.done.await(timeoutMs, TimeUnit.MILLISECONDS);
        int count = Math.min(current.count.get(), current.latenciesNanos.length);
        long[] sorted = Arrays.copyOf(current.latenciesNanos, count);
        Arrays.sort(sorted);
        double firstToLastMs = (current.lastNanos.get() - current.firstNanos.get()) / 1e6;
        return "count=" + count
                + " extra=" + Math.max(0, current.count.get() - current.latenciesNanos.length)
                + " firstToLastMs=" + String.format("%.1f", firstToLastMs)
                + " msgsPerSec=" + String.format("%.1f", count > 1 ? (count - 1) / (firstToLastMs / 1000) : 0.0)
                + " p50Us=" + percentileUs(sorted, 0.50)
                + " p99Us=" + percentileUs(sorted, 0.99)
                + " maxUs=" + (count == 0 ? -1 : sorted[count - 1] / 1000);
    }

    private static long percentileUs(long[] sorted, double quantile) {
        if (sorted.length == 0) {
            return -1;
        }
        int index = (int) Math.ceil(quantile * sorted.length) - 1;
        return sorted[Math.max(0, index)] / 1000;
    }

    private static final class Round {
        final AtomicInteger count = new AtomicInteger();
        final AtomicLong firstNanos = new AtomicLong();
        final AtomicLong lastNanos = new AtomicLong();
        final long[] latenciesNanos;
        final CountDownLatch done;

        Round(int expected) {
            latenciesNanos = new long[expected];
            done = new CountDownLatch(expected);
        }
    }
}
