package dev.millrace.broker.share;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Random;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The in-flight window against a {@code TreeMap} doing the same operations, and its memory following the span. */
@Timeout(30)
class InFlightWindowTest {

    @Test
    void shouldAgreeWithATreeMapUnderRandomOperations() {
        int sparseOps = 0;
        int ringOps = 0;
        for (long seed = 1; seed <= 30; seed++) {
            Random random = new Random(seed);
            InFlightWindow window = new InFlightWindow();
            TreeMap<Long, InFlightRecord> model = new TreeMap<>();
            long base = random.nextInt(1_000_000);
            int spread = 1 + random.nextInt(seed % 3 == 0 ? 100 : seed % 3 == 1 ? 5_000 : 200_000);
            for (int op = 0; op < 5_000; op++) {
                int kind = random.nextInt(10);
                if (kind < 5) {
                    long offset = base + random.nextInt(spread);
                    InFlightRecord record = new InFlightRecord(RecordState.AVAILABLE, op);
                    window.put(offset, record);
                    model.put(offset, record);
                } else if (kind == 5 && !model.isEmpty()) {
                    window.pollFirst();
                    model.pollFirstEntry();
                } else if (kind == 6) {
                    long offset = base + random.nextInt(spread);
                    window.remove(offset);
                    model.remove(offset);
                } else if (kind == 7) {
                    long below = base + random.nextInt(spread / 4 + 1);
                    window.removeBelow(below);
                    model.headMap(below).clear();
                } else if (kind == 8) {
                    base += random.nextInt(spread / 2 + 1); // the window moves up, as a partition's start does
                } else if (random.nextInt(50) == 0) {
                    window.clear();
                    model.clear();
                }
                assertThat(window.size()).isEqualTo(model.size());
                if (window.isSparse()) {
                    sparseOps++;
                } else {
                    ringOps++;
                }
                if (op % 25 == 0 || model.size() < 3) {
                    assertSame(window, model, "seed " + seed + " op " + op);
                }
            }
        }
        assertThat(sparseOps).as("operations on a tree").isGreaterThan(10_000);
        assertThat(ringOps).as("operations on a ring").isGreaterThan(10_000);
    }

    @Test
    void shouldVisitEntriesInOffsetOrderAcrossTheRingsWrap() {
        InFlightWindow window = new InFlightWindow();
        // 60 entries starting near the end of a 64-slot ring, so the span wraps past slot 63
        for (long offset = 1_000_050; offset < 1_000_110; offset += 3) {
            window.put(offset, new InFlightRecord(RecordState.ACQUIRED, 1));
        }
        List<Long> visited = new ArrayList<>();
        window.forEach((offset, record) -> visited.add(offset));

        List<Long> expected = new ArrayList<>();
        for (long offset = 1_000_050; offset < 1_000_110; offset += 3) {
            expected.add(offset);
        }
        assertThat(visited).isEqualTo(expected);
        assertThat(window.nextKey(1_000_051)).isEqualTo(1_000_053);
        assertThat(window.nextKey(1_000_108)).isEqualTo(-1);
        assertThat(window.capacity()).isEqualTo(InFlightWindow.MIN_CAPACITY);
    }

    @Test
    void shouldGrowWithTheSpanAndShrinkBackOnceTheStartPassesIt() {
        InFlightWindow window = new InFlightWindow();
        for (long offset = 0; offset <= 100_000; offset += 4) { // a selective queue matching one record in four
            window.put(offset, new InFlightRecord(RecordState.ACKNOWLEDGED, 1));
        }
        assertThat(window.isSparse()).isFalse();
        assertThat(window.capacity()).isGreaterThanOrEqualTo(100_001);
        assertThat(window.get(0).state).isEqualTo(RecordState.ACKNOWLEDGED);
        assertThat(window.get(100_000).state).isEqualTo(RecordState.ACKNOWLEDGED);
        assertThat(window.get(50_001)).isNull();

        window.removeBelow(100_000);

        assertThat(window.size()).isEqualTo(1);
        assertThat(window.firstKey()).isEqualTo(100_000);
        assertThat(window.capacity()).isEqualTo(InFlightWindow.KEEP_CAPACITY);
        assertThat(window.get(100_000).state).isEqualTo(RecordState.ACKNOWLEDGED);

        window.pollFirst();
        window.put(200, new InFlightRecord(RecordState.ACQUIRED, 1));
        assertThat(window.capacity()).isEqualTo(InFlightWindow.KEEP_CAPACITY); // emptied and refilled: kept
    }

    @Test
    void shouldRefuseWhatItCannotHold() {
        InFlightWindow window = new InFlightWindow();
        assertThatThrownBy(window::firstKey).isInstanceOf(NoSuchElementException.class);
        assertThatThrownBy(() -> window.put(-1, new InFlightRecord(RecordState.AVAILABLE, 0)))
                .hasMessageContaining("offset -1 is negative");
        assertThatThrownBy(() -> window.put(5, null)).hasMessageContaining("null entry for offset 5");
        assertThat(window.size()).isZero();
    }

    @Test
    void shouldHoldASparseStateInATreeAndGoBackToARingWhenItThickens() {
        InFlightWindow window = new InFlightWindow();
        // one entry in a thousand across a million offsets, as a selective queue with a rare match can hold
        for (long offset = 0; offset < 1_000_000; offset += 1_000) {
            window.put(offset, new InFlightRecord(RecordState.ACKNOWLEDGED, 1));
        }
        assertThat(window.isSparse()).isTrue();
        assertThat(window.capacity()).isZero();
        assertThat(window.size()).isEqualTo(1_000);
        assertThat(window.nextKey(1)).isEqualTo(1_000);
        window.put(1L << 40, new InFlightRecord(RecordState.ACQUIRED, 1)); // any span, in a tree
        assertThat(window.lastKey()).isEqualTo(1L << 40);
        window.remove(1L << 40);

        window.removeBelow(990_000); // the start passes most of them: ten left over 9,001 offsets, still sparse
        assertThat(window.isSparse()).isTrue();
        assertThat(window.size()).isEqualTo(10);
        window.removeBelow(997_500); // two left, 1,001 offsets apart: a ring of the kept size holds them
        assertThat(window.isSparse()).isFalse();
        assertThat(window.capacity()).isBetween(1_001, InFlightWindow.KEEP_CAPACITY);
        assertThat(window.firstKey()).isEqualTo(998_000);
        assertThat(window.get(999_000).state).isEqualTo(RecordState.ACKNOWLEDGED);
        assertThat(window.nextKey(998_001)).isEqualTo(999_000);
    }

    private static void assertSame(InFlightWindow window, TreeMap<Long, InFlightRecord> model, String where) {
        assertThat(window.size()).as(where).isEqualTo(model.size());
        assertThat(window.isEmpty()).as(where).isEqualTo(model.isEmpty());
        if (model.isEmpty()) {
            return;
        }
        assertThat(window.firstKey()).as(where).isEqualTo(model.firstKey());
        assertThat(window.lastKey()).as(where).isEqualTo(model.lastKey());
        assertThat(window.first()).as(where).isSameAs(model.firstEntry().getValue());
        List<Map.Entry<Long, InFlightRecord>> visited = new ArrayList<>();
        window.forEach((offset, record) -> visited.add(Map.entry(offset, record)));
        assertThat(visited).as(where).containsExactlyElementsOf(model.entrySet().stream()
                .map(e -> Map.entry(e.getKey(), e.getValue())).toList());
        for (long probe = model.firstKey() - 2; probe <= model.lastKey() + 2; probe += 7) {
            assertThat(window.get(probe)).as(where + " get " + probe).isSameAs(model.get(probe));
            Long next = model.ceilingKey(probe);
            assertThat(window.nextKey(probe)).as(where + " nextKey " + probe).isEqualTo(next == null ? -1 : next);
        }
    }
}
