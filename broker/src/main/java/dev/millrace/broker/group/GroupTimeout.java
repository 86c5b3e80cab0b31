package dev.millrace.broker.group;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;

import dev.millrace.delay.TimerTask;

/**
 * A coordinator timeout in the timing wheel: session expiry, join-phase end, initial rebalance
 * delay, sync deadline or pending member expiry. When due it hands {@code action} to its shard's
 * {@link SerialExecutor}, which calls it with the task itself so the action can check that it is
 * still the timer in force (a timer replaced or cancelled meanwhile does nothing).
 *
 * <p>Threading: {@link #run()} is called on the timer's executor; the action runs on the shard.
 */
final class GroupTimeout extends TimerTask {

    private final String description;
    private final Executor shardExecutor;
    private final Consumer<GroupTimeout> action;

    GroupTimeout(String description, long delayMs, Executor shardExecutor, Consumer<GroupTimeout> action) {
        super(delayMs);
        this.description = description;
        this.shardExecutor = shardExecutor;
        this.action = action;
    }

    @Override
    public void run() {
        try {
            shardExecutor.execute(() -> action.accept(this));
        } catch (RejectedExecutionException e) {
            // the coordinator is shutting down: nothing left to time out
        }
    }

    @Override
    public String toString() {
        return "GroupTimeout[" + description + ", delayMs=" + delayMs() + "]";
    }
}
