package dev.millrace.broker.txn;

/**
 * The state of an {@link XaBranch}, as written to {@code __transaction_state}:
 *
 * <pre>
 *   (XaPrepare)                                XaComplete(commit)       markers written
 *   ONGOING transaction ----------> PREPARED ---------------------> COMMITTING -----------> COMMITTED
 *   of a transactional id               |     XaComplete(rollback)                markers written
 *                                       +-------------------------> ROLLING_BACK ---------> ROLLED_BACK
 * </pre>
 * PREPARED never times out. COMMITTING and ROLLING_BACK are durable before any marker is written (a coordinator
 * that takes over finishes the markers). A completed branch is removed (a tombstone) after the coordinator's
 * retention, or, if an administrator decided it ({@link XaBranch#heuristic()}), when the transaction manager forgets
 * it.
 */
public enum XaBranchState {
    PREPARED(0),
    COMMITTING(1),
    ROLLING_BACK(2),
    COMMITTED(3),
    ROLLED_BACK(4);

    private final byte id;

    XaBranchState(int id) {
        this.id = (byte) id;
    }

    public byte id() {
        return id;
    }

    public static XaBranchState forId(byte id) {
        for (XaBranchState state : values()) {
            if (state.id == id) {
                return state;
            }
        }
        throw new IllegalArgumentException("Unknown XA branch state id " + id);
    }

    boolean isCompleting() {
        return this == COMMITTING || this == ROLLING_BACK;
    }

    boolean isCompleted() {
        return this == COMMITTED || this == ROLLED_BACK;
    }
}
