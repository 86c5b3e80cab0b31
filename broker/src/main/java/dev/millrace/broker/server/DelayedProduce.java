package dev.millrace.broker.server;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.common.errors.NotEnoughReplicasAfterAppendException;
import org.apache.kafka.common.message.ProduceResponseData.PartitionProduceResponse;
import org.apache.kafka.common.protocol.Errors;

import dev.millrace.delay.TimerTask;

/**
 * An {@code acks=all} produce whose batches are in the leader's log and wait for the ISR: each partition is done when
 * the high watermark reaches the end of its batches ({@code requiredOffset}) with the committed ISR still at
 * {@code min.insync.replicas} or more; it fails with NOT_ENOUGH_REPLICAS_AFTER_APPEND when the committed ISR is below
 * {@code min.insync.replicas} at a check (as Kafka, also when the high watermark got there: the records are then on
 * fewer replicas than the topic asks for), and with
 * NOT_LEADER_OR_FOLLOWER when this broker loses the leadership (or the epoch changes) while it waits. The request's
 * timeout answers the partitions still waiting with REQUEST_TIMED_OUT. Completes exactly once.
 *
 * <p>Thread-safe: {@link #tryComplete} and the timeout may race; the response is built once, under this object's
 * lock.
 */
final class DelayedProduce extends TimerTask {

    /** One partition's wait: its response (filled on success already, error set on failure). */
    record Waiting(Partition partition, int leaderEpoch, long requiredOffset, PartitionProduceResponse response) {
    }

    private final List<Waiting> waiting;
    private final boolean[] done;
    private final CompletableFuture<Void> result;
    private final AtomicBoolean completed = new AtomicBoolean();

    DelayedProduce(long timeoutMs, List<Waiting> waiting, CompletableFuture<Void> result) {
        super(timeoutMs);
        this.waiting = waiting;
        this.done = new boolean[waiting.size()];
        this.result = result;
    }

    List<Waiting> waiting() {
        return waiting;
    }

    boolean isCompleted() {
        return completed.get();
    }

    /** Checks every waiting partition; completes when none waits any more. */
    synchronized boolean tryComplete() {
        if (completed.get()) {
            return true;
        }
        boolean all = true;
        for (int i = 0; i < waiting.size(); i++) {
            if (!done[i]) {
                done[i] = check(waiting.get(i));
                all &= done[i];
            }
        }
        return all && complete();
    }

    private static boolean check(Waiting w) {
        Partition partition = w.partition();
        if (!partition.isLeader() || partition.leaderEpoch() != w.leaderEpoch()) {
            fail(w, Errors.NOT_LEADER_OR_FOLLOWER, partition.notLeader().getMessage());
            return true;
        }
        int minIsr = partition.log().config().minInsyncReplicas();
        if (partition.isrSize() < minIsr) {
            fail(w, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, new NotEnoughReplicasAfterAppendException("The ISR of "
                    + partition.topicPartition() + " shrank to " + partition.isr() + ", below min.insync.replicas "
                    + minIsr + ", while offset " + (w.requiredOffset() - 1) + " waited for it").getMessage());
            return true;
        }
        return partition.highWatermark() >= w.requiredOffset();
    }

    private static void fail(Waiting w, Errors error, String message) {
        w.response().setErrorCode(error.code()).setErrorMessage(message).setBaseOffset(-1).setLogStartOffset(-1);
    }

    private boolean complete() {
        if (!completed.compareAndSet(false, true)) {
            return true;
        }
        cancel();
        result.complete(null);
        return true;
    }

    /** The request's timeout: the partitions still waiting answer REQUEST_TIMED_OUT. */
    @Override
    public synchronized void run() {
        if (completed.get()) {
            return;
        }
        for (int i = 0; i < waiting.size(); i++) {
            if (!done[i] && !check(waiting.get(i))) {
                Waiting w = waiting.get(i);
                fail(w, Errors.REQUEST_TIMED_OUT, "Offset " + (w.requiredOffset() - 1) + " of "
                        + w.partition().topicPartition() + " was not replicated to the ISR within the request timeout");
            }
            done[i] = true;
        }
        complete();
    }
}
