package dev.millrace.broker.share;

import java.util.List;

/**
 * A share-partition's state at one moment: the start and end offsets and the state and delivery
 * count of every in-flight offset between them, the dead-letter copies it still owes ({@link DeadLetterCopies}) and
 * its records held for producer transactions ({@link TransactionHolds}).
 * {@code version} grows with every snapshot a partition takes, so that of two snapshots the later one wins. Immutable.
 */
public record SharePartitionSnapshot(long startOffset, long endOffset, List<Entry> entries, long version,
                                     DeadLetterCopies.State deadLetters, TransactionHolds.State holds) {

    public SharePartitionSnapshot {
        entries = List.copyOf(entries);
        java.util.Objects.requireNonNull(deadLetters, "deadLetters");
        java.util.Objects.requireNonNull(holds, "holds");
    }

    /** A snapshot that owes no dead-letter copy and holds nothing for a transaction. */
    public SharePartitionSnapshot(long startOffset, long endOffset, List<Entry> entries, long version) {
        this(startOffset, endOffset, entries, version, DeadLetterCopies.State.EMPTY, TransactionHolds.State.EMPTY);
    }

    /** A snapshot that holds nothing for a transaction. */
    public SharePartitionSnapshot(long startOffset, long endOffset, List<Entry> entries, long version,
                                  DeadLetterCopies.State deadLetters) {
        this(startOffset, endOffset, entries, version, deadLetters, TransactionHolds.State.EMPTY);
    }

    /** One in-flight offset. */
    public record Entry(long offset, RecordState state, int deliveryCount) {
    }
}
