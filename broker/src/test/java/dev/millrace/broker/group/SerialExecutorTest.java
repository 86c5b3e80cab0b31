package dev.millrace.broker.group;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class SerialExecutorTest {

    @Test
    void shouldRunTasksSubmittedFromATaskAfterIt() {
        SerialExecutor executor = new SerialExecutor(Runnable::run, "test");
        List<String> order = new ArrayList<>();

        executor.execute(() -> {
            order.add("outer-start");
            executor.execute(() -> order.add("inner"));
            order.add("outer-end");
        });

        assertThat(order).containsExactly("outer-start", "outer-end", "inner");
    }

    @Test
    void shouldKeepRunningAfterATaskThrows() {
        SerialExecutor executor = new SerialExecutor(Runnable::run, "test");
        List<String> order = new ArrayList<>();

        executor.execute(() -> {
            executor.execute(() -> order.add("after"));
            throw new IllegalStateException("boom");
        });

        assertThat(order).containsExactly("after");
    }

    @Test
    void shouldPassOnRejectionAndAcceptTasksAgainLater() {
        boolean[] reject = {true};
        SerialExecutor executor = new SerialExecutor(task -> {
            if (reject[0]) {
                throw new RejectedExecutionException("shut down");
            }
            task.run();
        }, "test");
        List<String> order = new ArrayList<>();

        assertThatThrownBy(() -> executor.execute(() -> order.add("lost")))
                .isInstanceOf(RejectedExecutionException.class);
        reject[0] = false;
        executor.execute(() -> order.add("ran"));

        assertThat(order).containsExactly("ran");
    }
}
