package dev.millrace.broker.log;

import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Collections;

import org.apache.kafka.common.record.internal.RecordBatch;

/**
 * What the log remembers about one idempotent producer: its current epoch and the metadata of its
 * most recent batches (at most {@link #MAX_BATCHES}), oldest first, enough to recognise a retried
 * batch and to know the next expected sequence; for a transactional producer also the first offset
 * of its open transaction on this partition (which holds back the last stable offset).
 *
 * <p>Invariants: every remembered batch has the current epoch (an epoch change forgets the older
 * batches); batches are in append order, so the last one holds the producer's last sequence.
 *
 * <p>Not thread-safe: owned by a {@link ProducerStateManager}, used under the log's lock.
 */
final class ProducerStateEntry {

    /** Retried batches are recognised among this many most recent ones, as Kafka producers expect. */
    static final int MAX_BATCHES = 5;

    /** Where one appended batch landed. Sequences wrap from {@link Integer#MAX_VALUE} to 0. */
    record BatchMetadata(int firstSequence, int lastSequence, long firstOffset, long lastOffset,
                         long maxTimestamp) {

        static BatchMetadata of(RecordBatch batch) {
            return new BatchMetadata(batch.baseSequence(), batch.lastSequence(), batch.baseOffset(),
                    batch.lastOffset(), batch.maxTimestamp());
        }
    }

    private final long producerId;
    private short producerEpoch;
    private long currentTxnFirstOffset = -1;
    private final ArrayDeque<BatchMetadata> batches = new ArrayDeque<>(MAX_BATCHES + 1);

    ProducerStateEntry(long producerId, short producerEpoch) {
        this.producerId = producerId;
        this.producerEpoch = producerEpoch;
    }

    long producerId() {
        return producerId;
    }

    short producerEpoch() {
        return producerEpoch;
    }

    /** The first offset of this producer's open transaction on the partition, or -1 if none is open. */
    long currentTxnFirstOffset() {
        return currentTxnFirstOffset;
    }

    void currentTxnFirstOffset(long offset) {
        this.currentTxnFirstOffset = offset;
    }

    /** Takes a newer epoch (from a transaction marker) and forgets the batches of the old one. */
    void bumpEpoch(short epoch) {
        if (epoch != producerEpoch) {
            producerEpoch = epoch;
            batches.clear();
        }
    }

    /** The remembered batches, oldest first. */
    Collection<BatchMetadata> batches() {
        return Collections.unmodifiableCollection(batches);
    }

    /** The last sequence appended in the current epoch, or {@link RecordBatch#NO_SEQUENCE} if none. */
    int lastSequence() {
        BatchMetadata last = batches.peekLast();
        return last == null ? RecordBatch.NO_SEQUENCE : last.lastSequence();
    }

    /** The last offset this producer wrote, or -1 if no batch is remembered. */
    long lastOffset() {
        BatchMetadata last = batches.peekLast();
        return last == null ? -1 : last.lastOffset();
    }

    /** The remembered batch with the same epoch and sequence range as {@code batch}, or null. */
    BatchMetadata findDuplicate(short epoch, int firstSequence, int lastSequence) {
        if (epoch != producerEpoch) {
            return null;
        }
        for (BatchMetadata known : batches) {
            if (known.firstSequence() == firstSequence && known.lastSequence() == lastSequence) {
                return known;
            }
        }
        return null;
    }

    /** Records a batch; a different epoch first forgets the batches of the old one. */
    void add(short epoch, BatchMetadata batch) {
        if (epoch != producerEpoch) {
            producerEpoch = epoch;
            batches.clear();
        }
        batches.addLast(batch);
        while (batches.size() > MAX_BATCHES) {
            batches.removeFirst();
        }
    }

    @Override
    public String toString() {
        return "ProducerStateEntry(producerId=" + producerId + ", epoch=" + producerEpoch + ", txnFirstOffset="
                + currentTxnFirstOffset + ", batches=" + batches
                + ")";
    }
}
