package dev.millrace.broker.quota;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The rate and throttle math on a clock the test moves: 11 samples of 1 s, a quota of 100 KB/s. */
@Timeout(10)
class SampledRateTest {

    private static final double QUOTA = 100_000;
    private static final long MAX_THROTTLE_MS = 11_000;

    private final SampledRate rate = new SampledRate(11, 1000);

    @Test
    void shouldThrottleTheFirstRequestForTheTimeItsBytesTakeAtTheQuota() {
        rate.record(50_000, 0);
        assertThat(rate.throttleMs(QUOTA, 0, MAX_THROTTLE_MS)).isEqualTo(500);
        assertThat(rate.throttleMs(QUOTA, 200, MAX_THROTTLE_MS)).isEqualTo(300);
        assertThat(rate.throttleMs(QUOTA, 500, MAX_THROTTLE_MS)).isZero();
        assertThat(rate.throttleMs(QUOTA, 900, MAX_THROTTLE_MS)).isZero();
    }

    @Test
    void shouldNotThrottleAClientUnderItsQuota() {
        for (long t = 0; t < 20_000; t += 100) {
            rate.record(5_000, t); // 50 KB/s
            assertThat(rate.throttleMs(QUOTA, t + 100, MAX_THROTTLE_MS)).isZero();
        }
        assertThat(rate.ratePerSecond(20_000)).isBetween(45_000.0, 55_000.0);
    }

    @Test
    void shouldHoldAGreedyClientThatObeysItsThrottleTimesToTheQuota() {
        // a client that sends 16 KB as soon as it may, for 60 s, and waits what it is told each time
        long now = 0;
        long bytes = 0;
        while (now < 60_000) {
            rate.record(16_384, now);
            bytes += 16_384;
            now += Math.max(1, rate.throttleMs(QUOTA, now, MAX_THROTTLE_MS));
        }
        assertThat(bytes * 1000.0 / now).isBetween(QUOTA * 0.98, QUOTA * 1.02);
        // and over any later 10 s stretch too: no burst when old samples are forgotten
        long windowStartBytes = bytes;
        long windowStart = now;
        while (now < windowStart + 10_000) {
            rate.record(16_384, now);
            bytes += 16_384;
            now += Math.max(1, rate.throttleMs(QUOTA, now, MAX_THROTTLE_MS));
        }
        assertThat((bytes - windowStartBytes) * 1000.0 / (now - windowStart)).isBetween(QUOTA * 0.95, QUOTA * 1.05);
    }

    @Test
    void shouldBoundTheThrottleTime() {
        rate.record(10_000_000, 0);
        assertThat(rate.throttleMs(QUOTA, 0, MAX_THROTTLE_MS)).isEqualTo(MAX_THROTTLE_MS);
    }

    @Test
    void shouldForgetSamplesOlderThanTheWholeWindow() {
        rate.record(1_000_000, 0);
        assertThat(rate.throttleMs(QUOTA, 5_000, MAX_THROTTLE_MS)).isEqualTo(5_000);
        assertThat(rate.isIdle(10_999)).isFalse();
        assertThat(rate.throttleMs(QUOTA, 11_000, MAX_THROTTLE_MS)).isZero();
        assertThat(rate.ratePerSecond(11_000)).isZero();
        assertThat(rate.isIdle(11_000)).isTrue();
    }

    @Test
    void shouldStartANewSampleEachWindowAndMeasureOverTheElapsedTime() {
        rate.record(100, 0);
        rate.record(100, 999);
        rate.record(100, 1_000);
        assertThat(rate.ratePerSecond(2_000)).isEqualTo(150.0);
        // the first sample (200) goes once 11 s passed since it started; the second (started at 1 s) stays
        assertThat(rate.ratePerSecond(11_000)).isEqualTo(10.0);
    }

    @Test
    void shouldRefuseABadShape() {
        assertThatThrownBy(() -> new SampledRate(1, 1000)).hasMessageContaining("samples must be at least 2");
        assertThatThrownBy(() -> new SampledRate(11, 0)).hasMessageContaining("windowMs must be positive");
    }
}
