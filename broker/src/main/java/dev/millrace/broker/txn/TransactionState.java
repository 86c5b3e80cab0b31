package dev.millrace.broker.txn;

/**
 * The state of one transactional id, as the coordinator keeps it and writes it to
 * {@code __transaction_state}:
 *
 * <pre>
 *            InitProducerId               AddPartitions / AddOffsets
 *   (new) ----------------> EMPTY -----------------------------------> ONGOING
 *                             ^                                          |  EndTxn(commit)  EndTxn(abort),
 *                             |                                          |                  timeout, fencing
 *                             |                                          v                      v
 *       InitProducerId        |                                 PREPARE_COMMIT           PREPARE_ABORT
 *   COMPLETE_* -------------- +                                          | markers written       | markers written
 *       AddPartitions: ONGOING (next transaction)                        v                       v
 *                                                               COMPLETE_COMMIT          COMPLETE_ABORT
 * </pre>
 *
 * A PREPARE state is durable before any marker is written, so a coordinator that restarts finds
 * it and finishes writing the markers; an ONGOING transaction found at restart stays open until
 * its timeout aborts it (its producer may still be alive).
 *
 * <p>XA (see {@link XaBranches}): XaPrepare moves an ONGOING transaction out of its transactional id into an
 * {@link XaBranch} of its own, keyed by its Xid, and leaves the id in PREPARED_XA: its producer id now belongs to the
 * branch, so the id's producer can start nothing new (AddPartitions and its batches are refused), and the id's
 * next InitProducerId gives it a new producer id with epoch 0 (EMPTY), without touching the branch. The producer
 * that prepared the branch may commit it with EndTxn commit (its abort is refused); once the branch's markers are
 * written by whichever completion (that EndTxn or XaComplete, not a heuristic one), the id moves on to
 * COMPLETE_COMMIT or COMPLETE_ABORT with the same producer id and epoch, and that producer can begin its next
 * transaction:
 *
 * <pre>
 *   ONGOING --XaPrepare--> PREPARED_XA --InitProducerId (new producer id)--> EMPTY
 *                              |
 *                              +--branch's markers written (its producer's EndTxn commit, or XaComplete)-->
 *                                 COMPLETE_COMMIT or COMPLETE_ABORT (same producer id and epoch)
 * </pre>
 */
public enum TransactionState {
    EMPTY(0),
    ONGOING(1),
    PREPARE_COMMIT(2),
    PREPARE_ABORT(3),
    COMPLETE_COMMIT(4),
    COMPLETE_ABORT(5),
    PREPARED_XA(6);

    private final byte id;

    TransactionState(int id) {
        this.id = (byte) id;
    }

    public byte id() {
        return id;
    }

    public static TransactionState forId(byte id) {
        for (TransactionState state : values()) {
            if (state.id == id) {
                return state;
            }
        }
        throw new IllegalArgumentException("Unknown transaction state id " + id);
    }

    boolean isPrepare() {
        return this == PREPARE_COMMIT || this == PREPARE_ABORT;
    }

    /** The name Kafka's admin tools show for this state. */
    public String kafkaName() {
        return switch (this) {
            case EMPTY -> "Empty";
            case ONGOING -> "Ongoing";
            case PREPARE_COMMIT -> "PrepareCommit";
            case PREPARE_ABORT -> "PrepareAbort";
            case COMPLETE_COMMIT -> "CompleteCommit";
            case COMPLETE_ABORT -> "CompleteAbort";
            case PREPARED_XA -> "PreparedXa";
        };
    }
}
