package dev.millrace.broker.delay;

import java.util.Map;

import org.apache.kafka.common.TopicPartition;

/**
 * Writes the delay service's delivery rounds, each as one transaction under the writer's transactional id: the
 * copies to their targets and the delivery marks to the delay partitions commit together or not at all.
 *
 * <p>Two implementations: {@link LocalRoundWriter} (the broker's own transaction coordinator and local logs: one
 * node, everything led here) and {@link ProducerRoundWriter} (a transactional kafka-clients producer: a cluster,
 * targets led by any broker).
 *
 * <p>Threading: called by one thread at a time, handed over through executors: {@link #ensureReady} on the service's
 * initialising thread (it may block for as long as the transaction coordinator is away), the rest on the service's
 * thread, never both at once; {@link #producerId} from any thread.
 */
public interface RoundWriter extends AutoCloseable {

    /**
     * Makes the transactional id ready for a round; the first call (and the first after a failed round)
     * (re)initialises it, which completes or aborts a round left open under it, so that on return no earlier round
     * of this id is undecided. Does nothing when ready.
     *
     * @throws Exception when the id cannot be initialised now (the service retries later)
     */
    void ensureReady() throws Exception;

    /**
     * Whether the transactional id is initialised, so that {@link #write} needs no {@link #ensureReady} first. Read on
     * the service's thread; {@link #ensureReady} may have run on another thread before, handed over by an executor.
     */
    boolean ready();

    /** The transactional id of the rounds. */
    String transactionalId();

    /** The producer id the rounds' batches carry, or -1 before the first initialisation. Any thread. */
    long producerId();

    /**
     * Writes {@code round} and commits it.
     *
     * @return the base offset of the (first) mark batch written to each delay partition of the round
     * @throws Exception when the round did not commit, or its outcome is unknown; the writer then re-initialises at
     *         the next {@link #ensureReady}, and the service re-reads its partitions before the next round
     */
    Map<TopicPartition, Long> write(DeliveryRound round) throws Exception;

    @Override
    void close();
}
