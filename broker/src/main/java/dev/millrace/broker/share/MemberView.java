package dev.millrace.broker.share;

import java.util.Objects;

/**
 * What a share-partition leader knows of a member that fetches from it: a current member (with its selector
 * filter, or none), not a member, or not known yet (its coordinator is being asked). A fetch acquires only for
 * {@link Status#MEMBER}; {@link Status#PENDING} acquires nothing, never unfiltered.
 *
 * @param status what is known
 * @param filter the member's selector filter, null when it has none (always null unless {@link Status#MEMBER})
 */
record MemberView(Status status, MemberFilter filter) {

    enum Status { MEMBER, NOT_MEMBER, PENDING }

    static final MemberView NOT_MEMBER = new MemberView(Status.NOT_MEMBER, null);
    static final MemberView PENDING = new MemberView(Status.PENDING, null);
    static final MemberView UNFILTERED = new MemberView(Status.MEMBER, null);

    MemberView {
        Objects.requireNonNull(status, "status");
        if (status != Status.MEMBER && filter != null) {
            throw new IllegalArgumentException("only a member has a filter, not one that is " + status);
        }
    }

    static MemberView member(MemberFilter filter) {
        return filter == null ? UNFILTERED : new MemberView(Status.MEMBER, filter);
    }
}
