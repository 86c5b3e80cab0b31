package dev.millrace.broker.share;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every {@link SharePartitionSelectorTest} case again with selective members' next scans run ahead
 * ({@link SelectiveLookahead}, here at once on the scheduling thread), plus what only the lookahead can get wrong.
 */
@Timeout(10)
class SharePartitionSelectorLookaheadTest extends SharePartitionSelectorTest {

    private final List<Runnable> pending = new ArrayList<>();
    private boolean deferred;

    @Override
    Executor lookahead() {
        return task -> {
            if (deferred) {
                pending.add(task);
            } else {
                task.run();
            }
        };
    }

    @Test
    void takesTheNextMatchesFromTheLookaheadWithTheSameResultsAsAScan() {
        appendRedEvery(20, 10, 5);
        SharePartition partition = partition(ShareGroupConfig.defaults());
        List<Long> reds = new ArrayList<>();
        for (int fetch = 0; fetch < 10; fetch++) {
            AcquireResult red = partition.acquire("r", RED, 5, 1 << 20);
            red.acquired().forEach(b -> {
                for (long o = b.firstOffset(); o <= b.lastOffset(); o++) {
                    reds.add(o);
                }
            });
            assertThat(offsetsOf(red)).as("the response holds exactly the acquired records")
                    .isEqualTo(reds.subList(reds.size() - red.recordCount(), reds.size()));
        }
        List<Long> expected = new ArrayList<>();
        for (long o = 0; o < 200; o += 5) {
            expected.add(o);
        }
        assertThat(reds).isEqualTo(expected);
        assertThat(partition.acquire("b", BLUE, 1000, 1 << 20).recordCount()).isEqualTo(160);
    }

    /**
     * With a lookahead, a selector's first fetch returns after its first read that found matches (here one stored
     * batch, four of them), and the next fetch, from the lookahead, fills its bytes with matches.
     */
    @Override
    @Test
    void aSelectiveAcquisitionFillsItsBytesWithMatchesNotWithTheBatchesAroundThem() {
        appendRedEvery(25, 40, 10);
        SharePartition partition = partition(ShareGroupConfig.defaults());
        int oneBatch = log.read(0, 1).sizeInBytes();

        AcquireResult first = partition.acquire("r", RED, 1000, oneBatch);
        assertThat(offsetsOf(first)).containsExactly(0L, 10L, 20L, 30L);

        AcquireResult red = partition.acquire("r", RED, 1000, oneBatch);
        assertThat(red.recordCount()).isGreaterThan(4);
        assertThat(red.records().sizeInBytes()).isLessThanOrEqualTo(oneBatch + oneBatch / 4);
        assertThat(offsetsOf(red).get(0)).isEqualTo(40L);
    }

    @Test
    void aSelectorsFirstFetchReadsOnPastReadsWithoutMatchesAndStopsAfterTheFirstWithSome() {
        String[] blues = new String[40];
        java.util.Arrays.fill(blues, "blue");
        log.appendColors(blues);
        log.appendColors(blues);
        String[] someRed = blues.clone();
        someRed[5] = "red";
        someRed[25] = "red";
        log.appendColors(someRed);
        log.appendColors(someRed);
        SharePartition partition = partition(ShareGroupConfig.defaults());
        int oneBatch = log.read(0, 1).sizeInBytes();

        assertThat(offsetsOf(partition.acquire("r", RED, 1000, oneBatch))).containsExactly(85L, 105L);
        assertThat(offsetsOf(partition.acquire("r", RED, 1000, oneBatch))).containsExactly(125L, 145L);
    }

    @Test
    void aLookaheadIsNotUsedOnceARecordBelowItBecameAvailableAgain() {
        log.appendColors("red", "blue", "red", "blue", "red", "blue", "red", "blue");
        SharePartition partition = partition(ShareGroupConfig.defaults());
        AcquireResult first = partition.acquire("r", RED, 2, 1 << 20);
        assertThat(offsetsOf(first)).containsExactly(0L, 2L);
        deferred = true;
        // released: the cursor goes back to 0, so the lookahead scheduled from 3 must not be used
        assertThat(partition.acknowledge("r", List.of(ack(0, 0, AcknowledgeType.RELEASE)))).isNotNull();
        AcquireResult second = partition.acquire("r", RED, 2, 1 << 20);
        assertThat(offsetsOf(second)).containsExactly(0L, 4L);
    }

    @Test
    void aLookaheadStillRunningIsLeftAndTheFetchScansForItself() {
        log.appendColors("red", "blue", "red", "blue", "red", "blue");
        SharePartition partition = partition(ShareGroupConfig.defaults());
        deferred = true;
        assertThat(offsetsOf(partition.acquire("r", RED, 1, 1 << 20))).containsExactly(0L);
        assertThat(pending).hasSize(1);
        assertThat(offsetsOf(partition.acquire("r", RED, 1, 1 << 20))).containsExactly(2L);
        pending.get(0).run(); // finishes late: cancelled, its result unused
        assertThat(offsetsOf(partition.acquire("r", RED, 5, 1 << 20))).containsExactly(4L);
    }
}
