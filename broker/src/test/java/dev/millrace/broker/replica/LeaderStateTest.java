package dev.millrace.broker.replica;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class LeaderStateTest {

    private static final long LAG_MS = 1000;

    private final LeaderState state = new LeaderState(1, 5, List.of(1, 2, 3), List.of(1, 2, 3), 10, 10, 0);

    @Test
    void shouldTakeTheHighWatermarkFromTheSlowestIsrMemberAndNeverLowerIt() {
        assertThat(state.highWatermark(20)).isEqualTo(10); // followers have not fetched in this epoch yet
        state.onFollowerFetch(2, 15, 20, 1);
        assertThat(state.highWatermark(20)).isEqualTo(10);
        state.onFollowerFetch(3, 18, 20, 1);
        assertThat(state.highWatermark(20)).isEqualTo(15);
        state.onFollowerFetch(2, 12, 20, 2); // a follower that truncated
        assertThat(state.highWatermark(20)).isEqualTo(15);
    }

    @Test
    void shouldHoldTheHighWatermarkForAShrunkFollowerUntilTheShrinkIsCommitted() {
        state.onFollowerFetch(2, 20, 20, 0);
        state.onFollowerFetch(3, 12, 20, 0);
        assertThat(state.highWatermark(20)).isEqualTo(12);

        state.onFollowerFetch(2, 20, 20, LAG_MS + 1);
        List<Integer> proposed = state.proposeShrink(LAG_MS + 1, LAG_MS).orElseThrow();
        assertThat(proposed).containsExactly(1, 2);
        assertThat(state.highWatermark(20)).as("the shrink is not committed yet").isEqualTo(12);
        assertThat(state.proposeShrink(LAG_MS + 1, LAG_MS)).as("one change in flight").isEmpty();

        state.applyCommitted(List.of(1, 2, 3), proposed, 20, LAG_MS + 1);
        state.onIsrChangeDone();
        assertThat(state.highWatermark(20)).isEqualTo(20);
        assertThat(state.committedIsrSize()).isEqualTo(2);
    }

    @Test
    void shouldNotShrinkAFollowerThatCaughtUpWithinTheLagTime() {
        state.onFollowerFetch(2, 20, 20, 500);
        state.onFollowerFetch(3, 20, 20, 500);

        assertThat(state.proposeShrink(500 + LAG_MS, LAG_MS)).isEmpty();
        assertThat(state.proposeShrink(501 + LAG_MS, LAG_MS)).contains(List.of(1));
    }

    @Test
    void shouldCountAFollowerAsCaughtUpAtItsPreviousFetchWhenItReachesWhereTheLeaderEndedThen() {
        state.onFollowerFetch(2, 10, 20, 100); // behind
        state.onFollowerFetch(2, 20, 30, 900); // has all the leader had at 100, the leader has moved on since
        state.onFollowerFetch(3, 30, 30, 900);

        assertThat(state.followerLastCaughtUpTimeMs(2)).isEqualTo(100);
    }

    @Test
    void shouldAddBackAFollowerOnlyOnceItReachesTheHighWatermarkAndTheEpochStart() {
        LeaderState shrunk = new LeaderState(1, 5, List.of(1, 2, 3), List.of(1, 2), 10, 25, 0);
        shrunk.onFollowerFetch(2, 30, 30, 0);
        assertThat(shrunk.highWatermark(30)).isEqualTo(30);

        shrunk.onFollowerFetch(3, 24, 30, 0);
        assertThat(shrunk.proposeExpansion(3, 30, 0)).as("below the HW").isEmpty();
        shrunk.onFollowerFetch(3, 30, 30, 0);
        assertThat(shrunk.proposeExpansion(3, 30, 0)).contains(List.of(1, 2, 3));
        // while in flight, the new member holds the HW back but does not move it
        shrunk.onFollowerFetch(2, 40, 40, 1);
        assertThat(shrunk.highWatermark(40)).isEqualTo(30);
    }

    @Test
    void shouldWaitAfterARefusedChangeUnlessTheCommittedIsrChanges() {
        LeaderState shrunk = new LeaderState(1, 5, List.of(1, 2, 3), List.of(1, 2), 10, 25, 0);
        shrunk.onFollowerFetch(2, 30, 30, 0);
        shrunk.onFollowerFetch(3, 30, 30, 0);
        assertThat(shrunk.proposeExpansion(3, 30, 0)).contains(List.of(1, 2, 3));
        shrunk.onIsrChangeRefused(100); // e.g. node 3 still fenced, or a partition epoch the controller moved past

        long backoff = LeaderState.REFUSED_CHANGE_BACKOFF_MS;
        assertThat(shrunk.proposeExpansion(3, 30, 100)).as("at the next follower fetch").isEmpty();
        assertThat(shrunk.proposeExpansion(3, 30, 100 + backoff - 1)).isEmpty();
        assertThat(shrunk.proposeShrink(100 + backoff - 1, LAG_MS)).as("no shrink either").isEmpty();
        assertThat(shrunk.proposeExpansion(3, 30, 100 + backoff)).contains(List.of(1, 2, 3));

        shrunk.onIsrChangeRefused(5_000);
        shrunk.applyCommitted(List.of(1, 2, 3), List.of(1, 2), 30, 5_001);
        assertThat(shrunk.proposeExpansion(3, 30, 5_001)).as("the same committed state changes nothing").isEmpty();
        shrunk.applyCommitted(List.of(1, 2, 3), List.of(1), 30, 5_002);
        assertThat(shrunk.proposeExpansion(3, 30, 5_002)).as("a new committed ISR ends the wait")
                .contains(List.of(1, 3));
    }

    @Test
    void shouldMakeTheLogEndTheHighWatermarkWithTheLeaderAloneInTheIsr() {
        LeaderState alone = new LeaderState(1, 0, List.of(1), List.of(1), 0, 0, 0);

        assertThat(alone.isrIsLeaderOnly()).isTrue();
        assertThat(alone.highWatermark(7)).isEqualTo(7);
        assertThat(alone.proposeShrink(1_000_000, LAG_MS)).isEmpty();
    }
}
