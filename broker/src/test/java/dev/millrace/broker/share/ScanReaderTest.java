package dev.millrace.broker.share;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(20)
class ScanReaderTest {

    @Test
    void mapsTheReadsRegionOfTheFileAndLeavesOutABatchThatDoesNotFitWhole(@TempDir Path dir) throws Exception {
        InMemoryShareLog memory = new InMemoryShareLog();
        for (int i = 0; i < 4; i++) {
            memory.appendColors("red", "blue", "blue"); // offsets 3i .. 3i+2, one batch each
        }
        try (FileRecords file = FileRecords.open(dir.resolve("00.log").toFile())) {
            file.append((MemoryRecords) memory.read(0, Integer.MAX_VALUE));
            int batchBytes = file.batches().iterator().next().sizeInBytes();
            ScanReader reader = new ScanReader();

            // from offset 4 (the second batch), two and a half batches' bytes: the second and third batches
            Records read = reader.read(new FileShareLog(file, memory::highWatermark), 4, batchBytes * 5 / 2);

            ByteBuffer holder = reader.holder();
            assertThat(holder).isNotNull();
            assertThat(holder.isDirect()).as("mapped, not copied into the heap").isTrue();
            List<Long> baseOffsets = new ArrayList<>();
            List<String> values = new ArrayList<>();
            for (RecordBatch batch : read.batches()) {
                baseOffsets.add(batch.baseOffset());
                batch.ensureValid();
                for (Record r : batch) {
                    values.add(Utils.utf8(r.value()));
                }
            }
            assertThat(baseOffsets).containsExactly(3L, 6L);
            assertThat(values).containsExactly("v3", "v4", "v5", "v6", "v7", "v8");
            assertThat(holder.getLong(0)).as("the holder starts at the first batch").isEqualTo(3L);
        }
    }

    @Test
    void leavesAFirstBatchLargerThanTheReadToTheFile(@TempDir Path dir) throws Exception {
        InMemoryShareLog memory = new InMemoryShareLog();
        memory.appendLarge("blue", 10_000);
        memory.appendColors("red");
        try (FileRecords file = FileRecords.open(dir.resolve("00.log").toFile())) {
            file.append((MemoryRecords) memory.read(0, Integer.MAX_VALUE));
            ScanReader reader = new ScanReader();

            Records read = reader.read(new FileShareLog(file, memory::highWatermark), 0, 4096);

            assertThat(reader.holder()).isNull();
            assertThat(read).isInstanceOf(FileRecords.class);
            RecordBatch whole = read.batches().iterator().next();
            assertThat(whole.baseOffset()).isZero();
            assertThat(whole.sizeInBytes()).isGreaterThan(10_000);
        }
    }
}
