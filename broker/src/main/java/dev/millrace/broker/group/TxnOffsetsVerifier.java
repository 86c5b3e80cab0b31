package dev.millrace.broker.group;

import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;

/**
 * Asks the transaction coordinator of a TxnOffsetCommit whether the group's {@code __consumer_offsets} partition is in
 * the producer's ongoing transaction (AddOffsetsToTxn put it there), before the offsets are appended: a TxnOffsetCommit
 * that arrives after its transaction's marker would otherwise open a transaction on the partition that no marker
 * closes, and every read-committed OffsetFetch of the partition's groups would answer UNSTABLE_OFFSET_COMMIT for good
 * (see {@link dev.millrace.broker.log.TxnVerification}).
 */
@FunctionalInterface
public interface TxnOffsetsVerifier {

    /** Answers everything as verified: for a coordinator without transaction coordinators (tests). */
    TxnOffsetsVerifier NONE = (transactionalId, producerId, epoch, partition) ->
            CompletableFuture.completedFuture(Errors.NONE);

    /**
     * NONE when {@code partition} is in the ongoing transaction of {@code producerId} at {@code epoch}; otherwise the
     * coordinator's error (INVALID_TXN_STATE, PRODUCER_FENCED, or a retriable coordinator error). Never completes
     * exceptionally.
     */
    CompletableFuture<Errors> verify(String transactionalId, long producerId, short epoch, TopicPartition partition);
}
