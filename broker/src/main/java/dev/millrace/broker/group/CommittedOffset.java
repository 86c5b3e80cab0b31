package dev.millrace.broker.group;

import java.util.Objects;

/**
 * One committed offset of a group for one partition, as OffsetFetch returns it.
 *
 * @param offset            the next offset the group will consume
 * @param leaderEpoch       the leader epoch of the last consumed record, or -1 when unknown
 * @param metadata          the client's free-form string, never null (a null commit is stored as "")
 * @param commitTimestampMs wall-clock time at which the coordinator accepted the commit
 */
record CommittedOffset(long offset, int leaderEpoch, String metadata, long commitTimestampMs) {

    static final int NO_LEADER_EPOCH = -1;

    CommittedOffset {
        Objects.requireNonNull(metadata, "metadata");
    }
}
