package dev.millrace.broker.log;

/**
 * A verification of a transactional batch with its transaction coordinator, started at the partition's leader by
 * {@link PartitionLog#startTxnVerification} before the batch is appended (Kafka's KIP-890, part 1).
 *
 * <p><b>Why.</b> A transactional batch that reaches a partition after the coordinator wrote that transaction's commit
 * or abort marker there (a Produce retried or held up in a failover, the client having given up on it and aborted)
 * would open a new transaction on the partition that no coordinator knows of and no marker will ever close: the
 * partition's last stable offset would stay behind it for good, and read-committed consumers, queue consumers and the
 * delay service would read nothing past it. So a batch that would open a transaction on the partition is appended only
 * once the coordinator said that the partition is in the producer's ongoing transaction, and only if no marker of that
 * producer was written to the partition since the verification started.
 *
 * <p>The {@link #guard} is the token that carries the second condition: the partition keeps one guard per producer
 * id, handed to every verification started for it, and drops it when a marker of that producer is written (or a batch
 * of it opens a transaction); an append that would open a transaction must present the guard the partition still
 * holds. Guards live in memory only, on the leader; a new leader starts with none, which costs at most one more
 * verification.
 *
 * @param guard  the token to present at the append
 * @param needed false when the producer's transaction is already open on the partition in the batch's epoch: the
 *               append needs no answer from the coordinator (a marker written meanwhile still drops the guard, and
 *               the append is then refused)
 */
public record TxnVerification(Guard guard, boolean needed) {

    /** An identity token: equal only to itself. */
    public static final class Guard {

        private final long producerId;

        Guard(long producerId) {
            this.producerId = producerId;
        }

        @Override
        public String toString() {
            return "TxnVerification.Guard[producer " + producerId + ", " + Integer.toHexString(
                    System.identityHashCode(this)) + "]";
        }
    }
}
