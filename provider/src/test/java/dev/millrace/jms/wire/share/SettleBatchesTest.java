package dev.millrace.jms.wire.share;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.protocol.ext.ShareSettle;

/** Settlements collected one offset at a time leave as the fewest ShareSettle ranges. */
@Timeout(10)
class SettleBatchesTest {

    private static ShareSettle.Batch batch(long first, long last, byte type) {
        return new ShareSettle.Batch(first, last, type);
    }

    @Test
    void shouldMergeConsecutiveOffsetsOfOneTypeWhenDrained() {
        SettleBatches batches = new SettleBatches("q");
        for (long offset = 100; offset < 10_100; offset++) {
            batches.add(0, offset, ShareSettle.ACCEPT);
        }

        assertThat(batches.size()).isEqualTo(10_000);
        assertThat(batches.drain()).containsExactly(new ShareSettle.PartitionBatches("q", 0,
                List.of(batch(100, 10_099, ShareSettle.ACCEPT))));
    }

    @Test
    void shouldSplitRangesWhenTheTypeChangesOrAnOffsetIsMissing() {
        SettleBatches batches = new SettleBatches("q");
        // added out of order: the ranges follow the offsets
        batches.add(0, 7, ShareSettle.RELEASE);
        batches.add(0, 5, ShareSettle.ACCEPT);
        batches.add(0, 6, ShareSettle.ACCEPT);
        batches.add(0, 4, ShareSettle.ACCEPT);
        batches.add(0, 8, ShareSettle.RELEASE);
        batches.add(0, 10, ShareSettle.RELEASE); // 9 is missing
        batches.add(0, 11, ShareSettle.RETURN);
        batches.add(0, 12, ShareSettle.ACCEPT);

        assertThat(batches.drain()).containsExactly(new ShareSettle.PartitionBatches("q", 0, List.of(
                batch(4, 6, ShareSettle.ACCEPT),
                batch(7, 8, ShareSettle.RELEASE),
                batch(10, 10, ShareSettle.RELEASE),
                batch(11, 11, ShareSettle.RETURN),
                batch(12, 12, ShareSettle.ACCEPT))));
    }

    @Test
    void shouldKeepPartitionsApartInPartitionOrderWhenDrained() {
        SettleBatches batches = new SettleBatches("q");
        batches.add(3, 1, ShareSettle.GAP);
        batches.add(0, 1, ShareSettle.ACCEPT);
        batches.add(3, 2, ShareSettle.GAP);
        batches.add(0, 2, ShareSettle.ACCEPT);

        // offset 1 of partition 0 and of partition 3 are different records: no range crosses partitions
        assertThat(batches.drain()).containsExactly(
                new ShareSettle.PartitionBatches("q", 0, List.of(batch(1, 2, ShareSettle.ACCEPT))),
                new ShareSettle.PartitionBatches("q", 3, List.of(batch(1, 2, ShareSettle.GAP))));
    }

    @Test
    void shouldCountAnOffsetOnceAndKeepItsLastTypeWhenAddedTwice() {
        SettleBatches batches = new SettleBatches("q");
        batches.add(0, 1, ShareSettle.RENEW);
        batches.add(0, 1, ShareSettle.ACCEPT);
        batches.add(0, 2, ShareSettle.ACCEPT);

        assertThat(batches.size()).isEqualTo(2);
        assertThat(batches.drain()).containsExactly(new ShareSettle.PartitionBatches("q", 0,
                List.of(batch(1, 2, ShareSettle.ACCEPT))));
    }

    @Test
    void shouldForgetEverythingWhenDrained() {
        SettleBatches batches = new SettleBatches("q");
        assertThat(batches.isEmpty()).isTrue();
        assertThat(batches.drain()).isEmpty();
        batches.add(0, 0, ShareSettle.ACCEPT);
        assertThat(batches.isEmpty()).isFalse();

        assertThat(batches.drain()).hasSize(1);

        assertThat(batches.isEmpty()).isTrue();
        assertThat(batches.size()).isZero();
        assertThat(batches.drain()).isEmpty();
        batches.add(0, 1, ShareSettle.ACCEPT);
        assertThat(batches.drain()).containsExactly(new ShareSettle.PartitionBatches("q", 0,
                List.of(batch(1, 1, ShareSettle.ACCEPT))));
    }

    @Test
    void shouldMoveEverySettlementIntoAnotherAndLeaveItselfEmptyWhenMoved() {
        SettleBatches pending = new SettleBatches("q");
        pending.add(0, 3, ShareSettle.GAP);
        pending.add(1, 9, ShareSettle.ACCEPT);
        SettleBatches into = new SettleBatches("q");
        into.add(0, 2, ShareSettle.RETURN);
        into.add(1, 9, ShareSettle.RELEASE);

        pending.moveTo(into);

        assertThat(pending.isEmpty()).isTrue();
        assertThat(pending.drain()).isEmpty();
        assertThat(into.size()).as("offset 9 of partition 1 once, the moved type winning").isEqualTo(3);
        assertThat(into.drain()).containsExactly(
                new ShareSettle.PartitionBatches("q", 0, List.of(batch(2, 2, ShareSettle.RETURN),
                        batch(3, 3, ShareSettle.GAP))),
                new ShareSettle.PartitionBatches("q", 1, List.of(batch(9, 9, ShareSettle.ACCEPT))));
    }
}
