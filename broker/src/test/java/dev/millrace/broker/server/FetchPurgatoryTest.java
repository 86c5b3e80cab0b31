package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.broker.group.ManualClock;
import dev.millrace.delay.SystemTimer;

@Timeout(20)
class FetchPurgatoryTest {

    private static final TopicPartition TP = new TopicPartition("t", 0);

    private final ExecutorService wakeups = Executors.newSingleThreadExecutor(r -> new Thread(r, "test-wakeups"));
    private final SystemTimer timer = new SystemTimer(1, 20, new ManualClock(), Runnable::run);
    private final FetchPurgatory purgatory = new FetchPurgatory(timer, wakeups);

    @AfterEach
    void stop() throws InterruptedException {
        wakeups.shutdownNow();
        wakeups.awaitTermination(5, TimeUnit.SECONDS);
        timer.close();
    }

    @Test
    void shouldRunListenersOnTheWakeupThreadWhenAnAppendIsReportedLater() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch heard = new CountDownLatch(1);
        AtomicReference<String> listenerThread = new AtomicReference<>();
        purgatory.addAppendListener(tp -> {
            listenerThread.set(Thread.currentThread().getName());
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            heard.countDown();
        });

        purgatory.onAppendLater(TP); // returns although the listener is still blocked

        release.countDown();
        assertThat(heard.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(listenerThread.get()).isEqualTo("test-wakeups");
    }

    @Test
    void shouldRunListenersOnTheCallerWhenAnAppendIsReported() {
        AtomicReference<String> listenerThread = new AtomicReference<>();
        purgatory.addAppendListener(tp -> listenerThread.set(Thread.currentThread().getName()));

        purgatory.onAppend(TP);

        assertThat(listenerThread.get()).isEqualTo(Thread.currentThread().getName());
    }

    @Test
    void shouldDropALaterWakeupOnceTheWakeupThreadIsStopped() {
        AtomicReference<String> listenerThread = new AtomicReference<>();
        purgatory.addAppendListener(tp -> listenerThread.set(Thread.currentThread().getName()));
        wakeups.shutdown();

        purgatory.onAppendLater(TP);

        assertThat(listenerThread.get()).isNull();
    }
}
