package dev.millrace.broker.replica;

import java.util.OptionalInt;

import dev.millrace.broker.log.EpochEndOffset;
import dev.millrace.broker.log.PartitionLog;

/**
 * {@link EpochLog} over a {@link PartitionLog}: its {@code LeaderEpochCache} (kept by the log's appends and
 * truncations, checkpointed in the partition's directory) and its truncation methods.
 *
 * <p>Thread-safe, as the log is.
 */
final class PartitionLogEpochs implements EpochLog {

    private final PartitionLog log;

    PartitionLogEpochs(PartitionLog log) {
        this.log = log;
    }

    @Override
    public long logStartOffset() {
        return log.logStartOffset();
    }

    @Override
    public OptionalInt latestEpoch() {
        return log.leaderEpochCache().latestEpoch();
    }

    @Override
    public EpochEnd endOffsetForEpoch(int epoch) {
        EpochEndOffset end = log.endOffsetForEpoch(epoch);
        return end.isUndefined() ? EpochEnd.UNDEFINED : new EpochEnd(end.epoch(), end.endOffset());
    }

    @Override
    public void assignAtLogEnd(int epoch) {
        log.assignLeaderEpochAtLogEnd(epoch);
    }

    @Override
    public void truncateTo(long offset) {
        log.truncateTo(offset);
    }

    @Override
    public void truncateFullyAndStartAt(long offset) {
        log.truncateFullyAndStartAt(offset);
    }
}
