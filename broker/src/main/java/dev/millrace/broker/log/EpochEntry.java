package dev.millrace.broker.log;

/**
 * One entry of a {@link LeaderEpochCache}: {@code startOffset} is the first offset written to the
 * partition while {@code epoch} was the leader epoch. The epoch covers offsets from its start up to
 * the next entry's start (or the log end, for the latest epoch).
 */
public record EpochEntry(int epoch, long startOffset) {
}
