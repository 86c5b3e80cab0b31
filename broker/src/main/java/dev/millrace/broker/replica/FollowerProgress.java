package dev.millrace.broker.replica;

/**
 * What the leader knows of one follower: its log end offset (the offset of its last fetch; -1 until it fetches in this
 * leader epoch) and when it last caught up with the leader's log end.
 *
 * <p>Not thread-safe: owned by {@link LeaderState}, under its lock.
 */
final class FollowerProgress {

    long logEndOffset = -1;
    /** The last time the follower's fetch offset reached the leader's log end (as it was then). */
    long lastCaughtUpTimeMs;
    /** When the previous fetch arrived, and the leader's log end at that moment. */
    long lastFetchTimeMs;
    long lastFetchLeaderLogEndOffset = -1;

    FollowerProgress(long nowMs) {
        this.lastCaughtUpTimeMs = nowMs;
        this.lastFetchTimeMs = nowMs;
    }

    /**
     * A fetch at {@code fetchOffset} arrived at {@code nowMs}, the leader's log end being {@code leaderLogEndOffset}.
     * The follower was caught up now if it asks from the leader's log end, or at the previous fetch if it asks from
     * where the leader's log ended then (everything the leader had then is in the follower now).
     */
    void onFetch(long fetchOffset, long leaderLogEndOffset, long nowMs) {
        if (fetchOffset >= leaderLogEndOffset) {
            lastCaughtUpTimeMs = Math.max(lastCaughtUpTimeMs, nowMs);
        } else if (lastFetchLeaderLogEndOffset >= 0 && fetchOffset >= lastFetchLeaderLogEndOffset) {
            lastCaughtUpTimeMs = Math.max(lastCaughtUpTimeMs, lastFetchTimeMs);
        }
        logEndOffset = fetchOffset;
        lastFetchTimeMs = nowMs;
        lastFetchLeaderLogEndOffset = leaderLogEndOffset;
    }
}
