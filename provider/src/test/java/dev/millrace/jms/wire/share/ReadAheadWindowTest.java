package dev.millrace.jms.wire.share;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class ReadAheadWindowTest {

    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    private static final int LOCK_MS = 30_000;

    @Test
    void shouldReadAheadTheWholePrefetchUntilTheApplicationsPaceIsKnown() {
        ReadAheadWindow window = new ReadAheadWindow(1000, 0);
        assertThat(window.window(0, LOCK_MS)).isEqualTo(1000);
        assertThat(window.window(SECOND / 2, LOCK_MS)).isEqualTo(1000);
    }

    @Test
    void shouldHoldWhatASlowApplicationTakesInAQuarterOfTheLockDuration() {
        ReadAheadWindow window = new ReadAheadWindow(1000, 0);
        for (int i = 0; i < 13; i++) {
            window.taken(true); // 13 a second, records always waiting: the application sets the pace
        }
        assertThat(window.window(SECOND, LOCK_MS)).as("13/s for 7.5 s").isEqualTo(98);
        assertThat(window.window(SECOND, 4_000)).as("a 4 s lock: 13/s for 1 s").isEqualTo(13);
    }

    @Test
    void shouldKeepTheWholePrefetchForAFastApplication() {
        ReadAheadWindow window = new ReadAheadWindow(1000, 0);
        for (int i = 0; i < 5_000; i++) {
            window.taken(true);
        }
        assertThat(window.window(SECOND, LOCK_MS)).isEqualTo(1000);
    }

    @Test
    void shouldNotShrinkForAnApplicationThatWaitsForRecords() {
        ReadAheadWindow window = new ReadAheadWindow(1000, 0);
        for (int i = 0; i < 3; i++) {
            window.taken(false); // each take emptied the buffer: the producers set the pace
        }
        assertThat(window.window(SECOND, LOCK_MS)).isEqualTo(1000);
    }

    @Test
    void shouldFollowAChangeOfPaceHalfAPeriodAtATime() {
        ReadAheadWindow window = new ReadAheadWindow(1000, 0);
        for (int i = 0; i < 20; i++) {
            window.taken(true);
        }
        assertThat(window.window(SECOND, LOCK_MS)).isEqualTo(150); // 20/s
        for (int i = 0; i < 100; i++) {
            window.taken(true);
        }
        assertThat(window.window(2 * SECOND, LOCK_MS)).as("(20 + 100) / 2 = 60/s").isEqualTo(450);
        assertThat(window.window(2 * SECOND + SECOND / 2, LOCK_MS)).as("within a period: unchanged").isEqualTo(450);
        assertThat(window.window(3 * SECOND, LOCK_MS)).as("a period without takes while buffered: unchanged")
                .isEqualTo(450);
    }

    @Test
    void shouldReadAheadAtLeastOneRecord() {
        ReadAheadWindow window = new ReadAheadWindow(1000, 0);
        window.taken(true);
        assertThat(window.window(100 * SECOND, LOCK_MS)).as("one in 100 s").isEqualTo(1);
    }
}
