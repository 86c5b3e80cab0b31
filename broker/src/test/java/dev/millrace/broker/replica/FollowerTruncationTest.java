package dev.millrace.broker.replica;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.OptionalInt;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The truncation rule of {@link FollowerTruncation} on an in-memory epoch cache. */
@Timeout(10)
class FollowerTruncationTest {

    /** Epochs by start offset, and a log end; {@link #endOffsetForEpoch} as OffsetsForLeaderEpoch answers. */
    private static final class MemoryEpochs implements EpochLog {
        final TreeMap<Integer, Long> starts = new TreeMap<>();
        long logEnd;

        MemoryEpochs(long logEnd, Map<Integer, Long> starts) {
            this.logEnd = logEnd;
            this.starts.putAll(starts);
        }

        @Override
        public long logStartOffset() {
            return 0;
        }

        @Override
        public OptionalInt latestEpoch() {
            return starts.isEmpty() ? OptionalInt.empty() : OptionalInt.of(starts.lastKey());
        }

        @Override
        public EpochEnd endOffsetForEpoch(int epoch) {
            Integer floor = starts.floorKey(epoch);
            if (floor == null) {
                return EpochEnd.UNDEFINED;
            }
            Integer next = starts.higherKey(floor);
            return new EpochEnd(floor, next == null ? logEnd : starts.get(next));
        }

        @Override
        public void assignAtLogEnd(int epoch) {
            starts.put(epoch, logEnd);
        }

        @Override
        public void truncateTo(long offset) {
            logEnd = Math.min(logEnd, offset);
            starts.values().removeIf(start -> start >= offset);
        }

        @Override
        public void truncateFullyAndStartAt(long offset) {
            starts.clear();
            logEnd = offset;
        }
    }

    @Test
    void shouldCutADivergentTailOfTheSameEpochAtTheLeadersEnd() {
        // follower wrote 0..9 in epoch 1; the leader had only 0..6 of epoch 1, then epoch 2 from 7
        MemoryEpochs follower = new MemoryEpochs(10, Map.of(1, 0L));
        MemoryEpochs leader = new MemoryEpochs(12, Map.of(1, 0L, 2, 7L));

        boolean done = FollowerTruncation.apply(follower, follower.logEnd, 5, leader.endOffsetForEpoch(1));

        assertThat(done).isTrue();
        assertThat(follower.logEnd).isEqualTo(7);
    }

    @Test
    void shouldKeepALogThatIsAPrefixOfTheLeaders() {
        MemoryEpochs follower = new MemoryEpochs(5, Map.of(1, 0L));
        MemoryEpochs leader = new MemoryEpochs(12, Map.of(1, 0L, 2, 7L));

        assertThat(FollowerTruncation.apply(follower, follower.logEnd, 5, leader.endOffsetForEpoch(1))).isTrue();
        assertThat(follower.logEnd).isEqualTo(5);
    }

    @Test
    void shouldTakeSeveralRoundsWhenTheFollowerHasEpochsTheLeaderNeverHad() {
        // KIP-279: the follower led epoch 3 (offsets 8..11) that no other replica has; the leader went 1 -> 2 -> 4
        MemoryEpochs follower = new MemoryEpochs(12, Map.of(1, 0L, 3, 8L));
        MemoryEpochs leader = new MemoryEpochs(15, Map.of(1, 0L, 2, 6L, 4, 10L));

        EpochEnd first = leader.endOffsetForEpoch(follower.latestEpoch().getAsInt()); // (2, 10)
        boolean done = FollowerTruncation.apply(follower, follower.logEnd, 0, first);
        assertThat(done).isFalse();
        assertThat(follower.logEnd).isEqualTo(8);

        EpochEnd second = leader.endOffsetForEpoch(follower.latestEpoch().getAsInt()); // (1, 6)
        done = FollowerTruncation.apply(follower, follower.logEnd, 0, second);
        assertThat(done).isTrue();
        assertThat(follower.logEnd).isEqualTo(6);
    }

    @Test
    void shouldKeepOnlyTheHighWatermarkWhenTheLeaderKnowsNoEpochAtOrBelowTheFollowers() {
        MemoryEpochs follower = new MemoryEpochs(10, Map.of(1, 0L));

        assertThat(FollowerTruncation.apply(follower, follower.logEnd, 4, EpochEnd.UNDEFINED)).isTrue();
        assertThat(follower.logEnd).isEqualTo(4);
    }
}
