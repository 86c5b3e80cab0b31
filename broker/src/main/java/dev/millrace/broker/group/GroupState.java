package dev.millrace.broker.group;

import java.util.EnumSet;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * The states of a classic group and which transitions are legal.
 *
 * <pre>
 *                 first join / member change
 *   Empty ───────────────────────────────────▶ PreparingRebalance ◀──────────────┐
 *     ▲                                          │          │                     │ join, leave, expiry,
 *     │  join phase ends with no member          │          │ join phase ends     │ sync timeout
 *     └──────────────────────────────────────────┘          ▼                     │
 *                                                  CompletingRebalance ──▶ Stable ┘
 *                                                           (leader's SyncGroup)
 *   Dead: from any state, when the group is deleted; a Dead group is never used again.
 * </pre>
 *
 * <p>{@link #toString()} is the name Kafka reports in DescribeGroups and ListGroups.
 */
enum GroupState {
    EMPTY("Empty"),
    PREPARING_REBALANCE("PreparingRebalance"),
    COMPLETING_REBALANCE("CompletingRebalance"),
    STABLE("Stable"),
    DEAD("Dead");

    private final String displayName;

    GroupState(String displayName) {
        this.displayName = displayName;
    }

    /** Whether a group in {@code from} may move to this state. */
    boolean canFollow(GroupState from) {
        return predecessors().contains(from);
    }

    private Set<GroupState> predecessors() {
        return switch (this) {
            case EMPTY -> EnumSet.of(PREPARING_REBALANCE);
            case PREPARING_REBALANCE -> EnumSet.of(EMPTY, COMPLETING_REBALANCE, STABLE);
            case COMPLETING_REBALANCE -> EnumSet.of(PREPARING_REBALANCE);
            case STABLE -> EnumSet.of(COMPLETING_REBALANCE);
            case DEAD -> EnumSet.allOf(GroupState.class);
        };
    }

    /** The state named {@code name} as Kafka spells it, ignoring case. */
    static Optional<GroupState> parse(String name) {
        String wanted = name.toLowerCase(Locale.ROOT);
        for (GroupState state : values()) {
            if (state.displayName.toLowerCase(Locale.ROOT).equals(wanted)) {
                return Optional.of(state);
            }
        }
        return Optional.empty();
    }

    @Override
    public String toString() {
        return displayName;
    }
}
