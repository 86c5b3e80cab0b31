package dev.millrace.jms.wire.failover;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** When a connection's ExceptionListener hears of an outage, on a manual clock. */
@Timeout(10)
class OutageTest {

    private long nowNanos = 5_000;
    private final Outage outage = new Outage(1000, () -> nowNanos);

    private void advanceMs(long ms) {
        nowNanos += TimeUnit.MILLISECONDS.toNanos(ms);
    }

    @Test
    void shouldReportAnOutageOnceWhenItOutlastsTheWindow() {
        long start = outage.now();
        advanceMs(400);
        assertThat(outage.onFailure(start)).as("within the window").isFalse();
        start = outage.now();
        advanceMs(600);
        assertThat(outage.onFailure(start)).as("exactly the window").isFalse();
        start = outage.now();
        advanceMs(1);
        assertThat(outage.onFailure(start)).as("longer than the window").isTrue();
        assertThat(outage.isReported()).isTrue();
        advanceMs(5000);
        assertThat(outage.onFailure(outage.now())).as("once per outage").isFalse();
        assertThat(outage.checks(true)).isEqualTo(4);
    }

    @Test
    void shouldNeverReportAnOutageTheWindowCoversEvenIfTheyRepeat() {
        for (int i = 0; i < 5; i++) {
            long start = outage.now();
            advanceMs(900);
            assertThat(outage.onFailure(start)).isFalse();
            outage.onSuccess();
        }
        assertThat(outage.isReported()).isFalse();
        assertThat(outage.checks(false)).isEqualTo(5);
    }

    @Test
    void shouldReportANewOutageAfterARecovery() {
        long start = outage.now();
        advanceMs(1500);
        assertThat(outage.onFailure(start)).isTrue();
        outage.onSuccess();
        start = outage.now();
        advanceMs(1500);
        assertThat(outage.onFailure(start)).isTrue();
    }

    @Test
    void shouldReportTheFirstFailureWithAWindowOfZero() {
        Outage none = new Outage(0, () -> nowNanos);
        assertThat(none.onFailure(none.now())).isTrue();
        assertThat(none.onFailure(none.now())).isFalse();
    }
}
