package dev.millrace.broker.share;

import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Who may acquire on this broker's share-partitions, and through which selector: for a group this broker coordinates,
 * the {@link ShareGroupCoordinator}'s own members; for a group coordinated on another broker, what that coordinator
 * answered ({@link RemoteMemberCache}), so that a member's JMS selector applies on every partition leader. Until a
 * member of a group coordinated elsewhere is known, it is {@link MemberView.Status#PENDING}: its fetches acquire
 * nothing (they wait, or come back empty), never unfiltered.
 *
 * <p>A coordinator that does not follow leadership (built alone, in tests) answers for every group itself. One that
 * follows leadership but has no {@link #lookUpRemoteMembers remote lookup} leaves members of other brokers' groups
 * PENDING: they acquire nothing here.
 *
 * <p>Thread-safe.
 */
final class MemberViews {

    private final ShareGroupCoordinator coordinator;
    private volatile RemoteMemberCache remote;

    MemberViews(ShareGroupCoordinator coordinator) {
        this.coordinator = Objects.requireNonNull(coordinator, "coordinator");
    }

    /** From now on members of groups coordinated elsewhere are looked up through {@code remote}. */
    void lookUpRemoteMembers(RemoteMemberCache remote) {
        this.remote = Objects.requireNonNull(remote, "remote");
    }

    /** What is known of {@code memberId} of {@code groupId}; may start a lookup at the group's coordinator. */
    MemberView view(String groupId, String memberId) {
        Optional<MemberView> local = coordinator.localView(groupId, memberId);
        if (local.isPresent()) {
            return local.get();
        }
        RemoteMemberCache cache = remote;
        return cache == null ? MemberView.PENDING : cache.view(groupId, memberId);
    }

    /**
     * A future completed when the lookup of the member running now ends (then {@link #view} tells); empty when none
     * runs. Callbacks run on the share broker's event thread, which may acquire.
     */
    Optional<CompletableFuture<Void>> whenKnown(String groupId, String memberId) {
        RemoteMemberCache cache = remote;
        return cache == null ? Optional.empty() : cache.whenKnown(groupId, memberId);
    }

    /** The member closed its share session here: what was looked up about it is dropped. */
    void forget(String groupId, String memberId) {
        RemoteMemberCache cache = remote;
        if (cache != null) {
            cache.forget(groupId, memberId);
        }
    }
}
