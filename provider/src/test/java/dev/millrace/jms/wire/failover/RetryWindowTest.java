package dev.millrace.jms.wire.failover;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.common.errors.NotCoordinatorException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import jakarta.jms.InvalidDestinationException;
import jakarta.jms.JMSException;

/** The failover window on a manual clock: what is retried, for how long, and what is not. */
@Timeout(10)
class RetryWindowTest {

    private long nowNanos = 1_000;
    private final List<Long> pauses = new ArrayList<>();
    private final RetryWindow window = new RetryWindow(1000, () -> nowNanos, ms -> {
        pauses.add(ms);
        nowNanos += TimeUnit.MILLISECONDS.toNanos(ms);
    });

    @Test
    void shouldRetryALostConnectionUntilItSucceedsWithinTheWindow() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        String result = window.call("send", () -> {
            if (attempts.incrementAndGet() < 4) {
                throw new IOException("broker 127.0.0.1:1 closed the connection");
            }
            return "done";
        });
        assertThat(result).isEqualTo("done");
        assertThat(attempts).hasValue(4);
        assertThat(pauses).containsExactly(50L, 100L, 200L);
    }

    @Test
    void shouldGiveUpWithTheLastFailureOnceTheWindowIsUsedUp() {
        AtomicInteger attempts = new AtomicInteger();
        assertThatThrownBy(() -> window.call("commit", () -> {
            attempts.incrementAndGet();
            throw new NotCoordinatorException("coordinator moved");
        })).isInstanceOf(JMSException.class).hasMessageContaining("commit")
                .hasMessageContaining("failover window of 1000 ms").hasMessageContaining("coordinator moved");
        assertThat(pauses.stream().mapToLong(Long::longValue).sum()).isEqualTo(1000);
        assertThat(attempts.get()).isGreaterThan(2);
    }

    @Test
    void shouldCountTheWindowFromTheFirstFailureNotFromTheCall() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        String result = window.call("receive", () -> {
            if (attempts.incrementAndGet() == 1) {
                nowNanos += TimeUnit.SECONDS.toNanos(5); // a slow first answer, then a lost connection
                throw new IOException("lost");
            }
            return "ok";
        });
        assertThat(result).isEqualTo("ok");
    }

    @Test
    void shouldFailAtOnceOnWhatNoRetryCanFix() {
        AtomicInteger attempts = new AtomicInteger();
        assertThatThrownBy(() -> window.call("create", () -> {
            attempts.incrementAndGet();
            throw new InvalidDestinationException("queue q does not exist");
        })).isInstanceOf(InvalidDestinationException.class);
        assertThatThrownBy(() -> window.call("create", () -> {
            attempts.incrementAndGet();
            throw new UnknownTopicOrPartitionException("q");
        })).isInstanceOf(InvalidDestinationException.class);
        assertThatThrownBy(() -> window.call("settle", () -> {
            attempts.incrementAndGet();
            throw new JMSException("refused", Errors.INVALID_RECORD_STATE.name());
        })).isInstanceOf(JMSException.class).hasMessage("refused");
        assertThat(attempts).hasValue(3);
        assertThat(pauses).isEmpty();
    }

    @Test
    void shouldRetryBrokerAnswersThatNameAMovedLeaderOrCoordinator() {
        assertThat(RetryWindow.isRetriable(new JMSException("x", Errors.NOT_LEADER_OR_FOLLOWER.name()))).isTrue();
        assertThat(RetryWindow.isRetriable(new JMSException("x", Errors.COORDINATOR_LOAD_IN_PROGRESS.name())))
                .isTrue();
        assertThat(RetryWindow.isRetriable(new java.util.concurrent.ExecutionException(
                new org.apache.kafka.common.errors.TimeoutException("t")))).isTrue();
        assertThat(RetryWindow.isRetriable(new IllegalStateException("bug"))).isFalse();
        assertThat(RetryWindow.isRetriableError(Errors.NOT_COORDINATOR)).isTrue();
        assertThat(RetryWindow.isRetriableError(Errors.INVALID_RECORD_STATE)).isFalse();
    }

    @Test
    void shouldNotRetryAtAllWithAWindowOfZero() {
        RetryWindow none = new RetryWindow(0, () -> nowNanos, pauses::add);
        assertThatThrownBy(() -> none.call("send", () -> {
            throw new IOException("lost");
        })).isInstanceOf(JMSException.class).hasMessageNotContaining("failover window");
        assertThat(pauses).isEmpty();
        assertThatThrownBy(() -> new RetryWindow(-1, () -> 0, ms -> { }))
                .hasMessageContaining("failoverTimeoutMs");
    }
}
