package dev.millrace.broker.delay;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What one delivery round carries: due records of every partition, earliest first, within its bounds. */
@Timeout(10)
class DueDelaysTest {

    private final DelayPartition p0 = new DelayPartition(new TopicPartition("__millrace_delayed", 0));
    private final DelayPartition p1 = new DelayPartition(new TopicPartition("__millrace_delayed", 1));
    private final DelayPartition[] partitions = {p0, p1};

    private static PendingDelay pending(DelayPartition p, long offset, long dueMs, int sizeInBytes) {
        PendingDelay pending = new PendingDelay(offset, dueMs, "t", -1, sizeInBytes);
        p.add(pending);
        return pending;
    }

    @Test
    void shouldCarryTheDueRecordsOfEveryPartitionWhenTheyAreDueTogether() {
        PendingDelay a = pending(p0, 0, 100, 10);
        PendingDelay b = pending(p1, 0, 90, 10);
        PendingDelay c = pending(p1, 1, 100, 10);
        pending(p0, 1, 101, 10);

        Map<DelayPartition, List<PendingDelay>> round = DueDelays.select(partitions, 100, 100, 1 << 20);

        assertThat(round).containsOnlyKeys(p0, p1);
        assertThat(round.get(p0)).containsExactly(a);
        assertThat(round.get(p1)).containsExactly(b, c);
    }

    @Test
    void shouldTakeTheEarliestDueFirstWhenTheRecordBoundCuts() {
        pending(p0, 0, 50, 10);
        PendingDelay earliest = pending(p1, 0, 10, 10);
        PendingDelay second = pending(p0, 1, 20, 10);
        pending(p1, 1, 60, 10);

        Map<DelayPartition, List<PendingDelay>> round = DueDelays.select(partitions, 100, 2, 1 << 20);

        assertThat(round.get(p1)).containsExactly(earliest);
        assertThat(round.get(p0)).containsExactly(second);
    }

    @Test
    void shouldStopAtTheByteBoundButAlwaysCarryOneRecordWhenTheFirstIsLarger() {
        PendingDelay large = pending(p0, 0, 10, 5_000);
        pending(p1, 0, 20, 10);

        assertThat(DueDelays.select(partitions, 100, 100, 1_000)).containsExactly(Map.entry(p0, List.of(large)));

        p0.remove(0);
        PendingDelay small = p1.earliest();
        pending(p0, 1, 30, 990);
        pending(p0, 2, 40, 1);
        assertThat(DueDelays.select(partitions, 100, 100, 1_000))
                .as("10 + 990 bytes fit, one more byte does not")
                .containsOnlyKeys(p0, p1)
                .satisfies(round -> assertThat(round.get(p1)).containsExactly(small))
                .satisfies(round -> assertThat(round.get(p0)).extracting(d -> d.offset).containsExactly(1L));
    }

    @Test
    void shouldCarryNothingWhenNothingIsDue() {
        pending(p0, 0, 101, 10);
        pending(p1, 0, 200, 10);

        assertThat(DueDelays.select(partitions, 100, 100, 1 << 20)).isEmpty();
    }
}
