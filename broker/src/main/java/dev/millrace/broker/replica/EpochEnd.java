package dev.millrace.broker.replica;

/**
 * Where a leader epoch ends in a log, in OffsetsForLeaderEpoch's terms (KIP-101, KIP-279): the largest epoch at or
 * below the one asked for, and the first offset after it (the start of the next epoch, or the log end for the latest
 * epoch). {@link #UNDEFINED} when the log knows no such epoch.
 */
public record EpochEnd(int epoch, long endOffset) {

    public static final int UNDEFINED_EPOCH = -1;
    public static final long UNDEFINED_OFFSET = -1;
    public static final EpochEnd UNDEFINED = new EpochEnd(UNDEFINED_EPOCH, UNDEFINED_OFFSET);

    public boolean isUndefined() {
        return epoch == UNDEFINED_EPOCH;
    }
}
