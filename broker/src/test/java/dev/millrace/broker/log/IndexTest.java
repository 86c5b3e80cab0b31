package dev.millrace.broker.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;

import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(10)
class IndexTest {

    @TempDir
    Path tmp;

    @Test
    void shouldLookUpTheLastOffsetEntryAtOrBelowTheTarget() throws IOException {
        try (OffsetIndex index = new OffsetIndex(tmp.resolve("a.index").toFile(), 100, 80)) {
            assertThat(index.lookup(150)).isEqualTo(new OffsetIndex.Entry(100, 0));
            index.append(110, 400);
            index.append(120, 800);
            index.append(130, 1200);
            assertThat(index.lookup(105)).isEqualTo(new OffsetIndex.Entry(100, 0));
            assertThat(index.lookup(110)).isEqualTo(new OffsetIndex.Entry(110, 400));
            assertThat(index.lookup(129)).isEqualTo(new OffsetIndex.Entry(120, 800));
            assertThat(index.lookup(10_000)).isEqualTo(new OffsetIndex.Entry(130, 1200));
            assertThatThrownBy(() -> index.append(125, 1600)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("offset 125").hasMessageContaining("last entry (offset 130");
        }
    }

    @Test
    void shouldFillUpAndKeepEntriesAcrossReopen() throws IOException {
        File file = tmp.resolve("b.index").toFile();
        try (OffsetIndex index = new OffsetIndex(file, 0, 20)) {
            assertThat(index.maxEntries()).isEqualTo(2);
            index.append(1, 10);
            index.append(2, 20);
            assertThat(index.isFull()).isTrue();
            assertThatThrownBy(() -> index.append(3, 30)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("full");
        }
        assertThat(file.length()).isEqualTo(16);
        try (OffsetIndex index = new OffsetIndex(file, 0, 20)) {
            assertThat(index.entries()).isEqualTo(2);
            assertThat(index.lastEntry()).isEqualTo(new OffsetIndex.Entry(2, 20));
            index.sanityCheck(21);
            assertThatThrownBy(() -> index.sanityCheck(20)).isInstanceOf(CorruptIndexException.class)
                    .hasMessageContaining("position 20");
        }
    }

    @Test
    void shouldTrackTheLargestTimestampAndFindTheEntryBelowATarget() throws IOException {
        try (TimeIndex index = new TimeIndex(tmp.resolve("c.timeindex").toFile(), 50, 120)) {
            assertThat(index.lookupBelow(5)).isEqualTo(new TimeIndex.Entry(RecordBatch.NO_TIMESTAMP, 50));
            index.maybeAppend(1000, 52);
            index.maybeAppend(900, 53);
            index.maybeAppend(2000, 60);
            assertThat(index.entries()).isEqualTo(2);
            assertThat(index.lookupBelow(1000)).isEqualTo(new TimeIndex.Entry(RecordBatch.NO_TIMESTAMP, 50));
            assertThat(index.lookupBelow(1001)).isEqualTo(new TimeIndex.Entry(1000, 52));
            assertThat(index.lookupBelow(5000)).isEqualTo(new TimeIndex.Entry(2000, 60));
            assertThatThrownBy(() -> index.maybeAppend(3000, 55)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("offset 55");
            index.sanityCheck(1000, 60);
            assertThatThrownBy(() -> index.sanityCheck(1000, 59)).isInstanceOf(CorruptIndexException.class)
                    .hasMessageContaining("last offset 59");
        }
    }
}
