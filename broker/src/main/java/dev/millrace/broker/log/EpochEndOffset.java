package dev.millrace.broker.log;

/**
 * The answer to an OffsetsForLeaderEpoch question ({@link LeaderEpochCache#endOffsetFor}): the largest
 * epoch at or below the one asked for that this log knows, and the offset after its last record (the
 * start of the next epoch, or the log end for the latest epoch). {@link #UNDEFINED} (-1, -1) when the
 * log knows no such epoch.
 */
public record EpochEndOffset(int epoch, long endOffset) {

    /** No epoch at or below the one asked for is known (also: the cache is empty). */
    public static final EpochEndOffset UNDEFINED = new EpochEndOffset(-1, -1L);

    public boolean isUndefined() {
        return epoch < 0;
    }
}
