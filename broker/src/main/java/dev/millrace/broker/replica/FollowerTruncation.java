package dev.millrace.broker.replica;

/**
 * Where a follower cuts its log before fetching from a new leader, from the leader's OffsetsForLeaderEpoch answer
 * (the leader-epoch model of KIP-101, with KIP-279's fix for leaders that changed several times).
 *
 * <p>The follower asks about its latest epoch E. The leader answers with the largest epoch L &lt;= E that it has and
 * the offset where L ends in its log (where its next epoch starts, or its log end). Then:
 * <ul>
 *   <li>The follower has L too: both logs agree up to where L ends in <em>both</em>, so it keeps
 *       {@code min(leader's end of L, own end of L)} and is done.</li>
 *   <li>The follower does not have L (its largest epoch at or below L is some F &lt; L): its records after the end of
 *       F belong to epochs the leader never had, so it cuts there (and no further than the leader's end of L); the
 *       next round asks about F. Each round lowers the latest epoch, so this ends.</li>
 *   <li>The leader has no epoch at or below E (undefined): nothing beyond the follower's high watermark is known to
 *       be shared, so it keeps only what it knew to be committed (the pre-epoch rule).</li>
 * </ul>
 * A round that cuts nothing also ends the truncation. A cut below the log start empties the log, which starts again
 * at the cut.
 *
 * <p>Stateless and thread-safe; runs under the partition's write lock ({@link FollowerPartition#truncate}).
 */
public final class FollowerTruncation {

    private FollowerTruncation() {
    }

    /** The cut to make: truncate to {@code offset} (when below the log end); {@code done} ends the rounds. */
    public record Cut(long offset, boolean done) {
    }

    /** Decides the cut for a follower whose log is {@code own}, given the leader's answer. */
    public static Cut decide(EpochLog own, long ownLogEndOffset, long ownHighWatermark, EpochEnd leaderAnswer) {
        if (leaderAnswer.isUndefined() || leaderAnswer.endOffset() < 0) {
            return new Cut(Math.min(ownHighWatermark, ownLogEndOffset), true);
        }
        EpochEnd mine = own.endOffsetForEpoch(leaderAnswer.epoch());
        if (mine.isUndefined()) {
            return new Cut(Math.min(leaderAnswer.endOffset(), ownLogEndOffset), true);
        }
        long offset = Math.min(Math.min(leaderAnswer.endOffset(), mine.endOffset()), ownLogEndOffset);
        boolean done = mine.epoch() == leaderAnswer.epoch() || offset >= ownLogEndOffset;
        return new Cut(offset, done);
    }

    /**
     * Applies the leader's answer to {@code own}: truncates it and returns whether truncation is over.
     */
    public static boolean apply(EpochLog own, long ownLogEndOffset, long ownHighWatermark, EpochEnd leaderAnswer) {
        Cut cut = decide(own, ownLogEndOffset, ownHighWatermark, leaderAnswer);
        if (cut.offset() < own.logStartOffset()) {
            own.truncateFullyAndStartAt(Math.max(0, cut.offset())); // nothing of this log is shared
        } else if (cut.offset() < ownLogEndOffset) {
            own.truncateTo(cut.offset());
        }
        return cut.done();
    }
}
