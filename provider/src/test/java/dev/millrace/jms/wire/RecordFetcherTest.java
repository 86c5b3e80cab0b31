package dev.millrace.jms.wire;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import jakarta.jms.JMSException;

/** The fetcher thread's hand-over with a client that kafka-clients' wakeup rules apply to. */
@Timeout(20)
class RecordFetcherTest {

    /**
     * A command submitted as soon as records arrive (an AUTO_ACKNOWLEDGE acceptance of a message received at once)
     * must not wake the client once its poll has returned: kafka-clients keeps such a wakeup pending, and it then
     * breaks the next blocking call instead, a commit whose acknowledgements it drops (a queue consumer's close then
     * waited out its 5 s timeout).
     */
    @Test
    void aCommandSubmittedAsRecordsArriveDoesNotWakeAClientThatIsNoLongerPolling() throws Exception {
        try (FakeFetcher fetcher = new FakeFetcher()) {
            fetcher.onArrival(fetcher::acknowledgeAtOnce);
            fetcher.results.add(List.of(new Delivery(new ConsumerRecord<>("queue", 0, 0L, null, new byte[1]), 1)));

            assertThat(fetcher.take(10_000)).isNotNull();

            assertThat(fetcher.acknowledged.await()).isTrue();
            assertThat(fetcher.wakeupsOutsidePoll).hasValue(0);
        }
    }

    /**
     * A quiet command (a queue acceptance while more of the poll is outstanding) must not wake the client or the
     * thread; it runs when something else wakes the thread, before the command that did.
     */
    @Test
    void aQuietCommandWakesNothingAndRunsBeforeTheCommandThatWakesTheThread() throws Exception {
        try (FakeFetcher fetcher = new FakeFetcher()) {
            List<String> ran = new java.util.concurrent.CopyOnWriteArrayList<>();
            Latch both = new Latch();

            fetcher.awaitInPoll(); // so that a submit would wake the client
            fetcher.quietly(() -> ran.add("quiet"));
            assertThat(fetcher.wakeups).hasValue(0);
            fetcher.loudly(() -> {
                ran.add("loud");
                both.open();
            });

            assertThat(both.await()).isTrue();
            assertThat(ran).containsExactly("quiet", "loud");
        }
    }

    /** A client stand-in: {@link #poll} hands out {@link #results}, and a wakeup outside it is counted. */
    private static final class FakeFetcher extends RecordFetcher {
        final BlockingQueue<Collection<Delivery>> results = new LinkedBlockingQueue<>();
        final AtomicInteger wakeupsOutsidePoll = new AtomicInteger();
        final AtomicInteger wakeups = new AtomicInteger();
        final Latch acknowledged = new Latch();
        private final AtomicBoolean inPoll = new AtomicBoolean();

        FakeFetcher() throws JMSException {
            super("fake-fetcher", 10_000);
            start(() -> null);
        }

        void acknowledgeAtOnce() {
            submit(acknowledged::open);
        }

        void awaitInPoll() {
            while (!inPoll.get()) {
                Thread.onSpinWait();
            }
        }

        void quietly(Runnable command) {
            submitQuietly(command);
        }

        void loudly(Runnable command) {
            submit(command);
        }

        @Override
        protected Collection<Delivery> poll(Duration timeout) {
            inPoll.set(true);
            try {
                Collection<Delivery> next = results.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
                return next == null ? List.of() : next;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return List.of();
            } finally {
                inPoll.set(false);
            }
        }

        @Override
        protected void wakeupClient() {
            wakeups.incrementAndGet();
            if (inPoll.get()) {
                results.add(List.of()); // what a real wakeup does to a poll in progress: it ends at once
            } else {
                wakeupsOutsidePoll.incrementAndGet();
            }
        }

        @Override
        protected void closeClient() {
        }
    }

    private static final class Latch {
        private final java.util.concurrent.CountDownLatch latch = new java.util.concurrent.CountDownLatch(1);

        void open() {
            latch.countDown();
        }

        boolean await() throws InterruptedException {
            return latch.await(10, TimeUnit.SECONDS);
        }
    }
}
