package dev.millrace.jms.wire;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class ShareCustodyTest {

    private final ShareCustody custody = new ShareCustody();

    @Test
    void shouldLoseHandedOutRecordsAndOrphanReadAheadOnesWhenAPartitionMoves() {
        custody.hold(0, 10);
        custody.hold(0, 11);
        custody.hold(1, 5);
        // 11 was still read ahead when partition 0 moved: orphaned; 10 had been handed out: lost
        assertThat(custody.orphan(0, 11)).isTrue();
        custody.loseHeld(0);
        assertThat(custody.heldPartitions()).containsExactly(1);
        assertThat(custody.unhold(0, 10)).isFalse();
        assertThat(custody.forgetLost(0, 10)).isTrue();
        assertThat(custody.forgetLost(0, 10)).isFalse();
        assertThat(custody.hasOrphaned()).isTrue();
        assertThat(custody.takeOrphaned(0)).containsExactly(11L);
        assertThat(custody.hasOrphaned()).isFalse();
        // an offset not held cannot be orphaned
        assertThat(custody.orphan(1, 6)).isFalse();
    }

    @Test
    void shouldForgetALostRecordOnceThisMemberAcquiresItAgain() {
        custody.hold(2, 7);
        custody.loseAllHeld();
        assertThat(custody.heldPartitions()).isEmpty();
        custody.hold(2, 7);
        assertThat(custody.forgetLost(2, 7)).isFalse();
        assertThat(custody.heldOf(2)).containsExactly(7L);
    }

    @Test
    void shouldOrphanAReturnAgainOnlyWhileItIsRetriableAssignedAndUnderTheLimit() {
        assertThat(custody.returnAnswered(0, List.of(1L, 2L), false, true)).isFalse();
        assertThat(custody.hasOrphaned()).isFalse();
        assertThat(custody.returnAnswered(0, List.of(1L, 2L), true, false)).isFalse();
        assertThat(custody.hasOrphaned()).isFalse();
        for (int attempt = 1; attempt < ShareCustody.MAX_RETURNS - 1; attempt++) {
            assertThat(custody.returnAnswered(0, List.of(1L, 2L), true, true)).isTrue();
            assertThat(custody.takeOrphaned(0)).containsExactly(1L, 2L);
        }
        // the counter also holds the unassigned attempt above: this is the last one
        assertThat(custody.returnAnswered(0, List.of(1L, 2L), true, true)).isFalse();
        assertThat(custody.hasOrphaned()).isFalse();
        // given up: a later return starts counting afresh
        assertThat(custody.returnAnswered(0, List.of(3L), true, true)).isTrue();
    }

    @Test
    void shouldDrainEveryHeldRecordAndForgetTheLostOnesWhenTheConsumerLeaves() {
        custody.hold(0, 1);
        custody.hold(0, 2);
        custody.hold(3, 9);
        custody.loseHeld(3);
        custody.hold(1, 4);
        List<String> drained = new ArrayList<>();
        custody.drainHeld((p, o) -> drained.add(p + ":" + o));
        assertThat(drained).containsExactly("0:1", "0:2", "1:4");
        assertThat(custody.heldPartitions()).isEmpty();
        assertThat(custody.forgetLost(3, 9)).isFalse();
    }

    @Test
    void shouldKeepOrphansOfAssignedPartitionsOnly() {
        custody.hold(0, 1);
        custody.hold(1, 1);
        custody.orphan(0, 1);
        custody.orphan(1, 1);
        custody.retainOrphaned(Set.of(1));
        assertThat(custody.takeOrphaned(0)).isNull();
        assertThat(custody.takeOrphaned(1)).containsExactly(1L);
        custody.hold(2, 1);
        custody.orphan(2, 1);
        custody.retainOrphaned(Set.of());
        assertThat(custody.hasOrphaned()).isFalse();
    }
}
