package dev.millrace.broker.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(20)
class BatchCutTest {

    private final BatchCursor cursor = new BatchCursor();
    private final BatchCut cut = new BatchCut(cursor);

    private static RecordBatch batch(TimestampType type, long logAppendTime) {
        ByteBuffer buffer = ByteBuffer.allocate(4096);
        MemoryRecordsBuilder builder = MemoryRecords.builder(buffer, RecordBatch.CURRENT_MAGIC_VALUE,
                Compression.NONE, type, 100, logAppendTime, 7L, (short) 1, 5, true, 3);
        for (long offset = 100; offset < 105; offset++) {
            Header[] headers = {new RecordHeader("jms.prop.kind", ("k" + offset).getBytes(StandardCharsets.UTF_8)),
                    new RecordHeader("n", null)};
            byte[] key = offset % 2 == 0 ? ("key" + offset).getBytes(StandardCharsets.UTF_8) : null;
            // timestamps out of order, so the cut's max is not simply its last record's
            builder.appendWithOffset(offset, 1_000 + (offset == 101 ? 150 : offset), key,
                    ("value" + offset).getBytes(StandardCharsets.UTF_8), headers);
        }
        return builder.build().batches().iterator().next();
    }

    private ByteBuffer cutTo(RecordBatch batch, Set<Long> offsets, boolean keepSpan) {
        cursor.load(batch);
        while (cursor.next()) {
            if (offsets.contains(cursor.offset())) {
                cut.pick();
            }
        }
        assertThat(cut.picked()).isEqualTo(offsets.size());
        return cut.take(keepSpan);
    }

    private static RecordBatch read(ByteBuffer bytes) {
        List<RecordBatch> batches = new ArrayList<>();
        MemoryRecords.readableRecords(bytes.duplicate()).batches().forEach(batches::add);
        assertThat(batches).hasSize(1);
        return batches.get(0);
    }

    @Test
    void keepsThePickedRecordsAsKafkaReadsThemWithAValidCrc() {
        RecordBatch stored = batch(TimestampType.CREATE_TIME, RecordBatch.NO_TIMESTAMP);
        List<Record> expected = new ArrayList<>();
        stored.forEach(r -> {
            if (r.offset() == 101 || r.offset() == 103) {
                expected.add(r);
            }
        });

        RecordBatch batch = read(cutTo(stored, Set.of(101L, 103L), false));

        batch.ensureValid();
        assertThat(batch.baseOffset()).isEqualTo(100);
        assertThat(batch.lastOffset()).as("ends at its last picked record").isEqualTo(103);
        assertThat(batch.countOrNull()).isEqualTo(2);
        assertThat(batch.maxTimestamp()).isEqualTo(1_150);
        assertThat(batch.producerId()).isEqualTo(7L);
        assertThat(batch.producerEpoch()).isEqualTo((short) 1);
        assertThat(batch.baseSequence()).isEqualTo(5);
        assertThat(batch.isTransactional()).isTrue();
        assertThat(batch.partitionLeaderEpoch()).isEqualTo(3);
        List<Record> records = new ArrayList<>();
        batch.forEach(records::add);
        assertThat(records).hasSize(2);
        for (int i = 0; i < 2; i++) {
            Record r = records.get(i);
            Record e = expected.get(i);
            assertThat(r.offset()).isEqualTo(e.offset());
            assertThat(r.timestamp()).isEqualTo(e.timestamp());
            assertThat(r.sequence()).isEqualTo(e.sequence());
            assertThat(r.hasKey()).isEqualTo(e.hasKey());
            assertThat(Utils.toArray(r.value())).isEqualTo(Utils.toArray(e.value()));
            assertThat(r.headers()).isEqualTo(e.headers());
        }
    }

    @Test
    void keepsTheStoredSpanWhenAsked() {
        RecordBatch stored = batch(TimestampType.CREATE_TIME, RecordBatch.NO_TIMESTAMP);

        RecordBatch batch = read(cutTo(stored, Set.of(100L, 102L), true));

        batch.ensureValid();
        assertThat(batch.lastOffset()).isEqualTo(104);
        assertThat(batch.maxTimestamp()).isEqualTo(stored.maxTimestamp());
        assertThat(batch.countOrNull()).isEqualTo(2);
    }

    @Test
    void keepsTheLogAppendTimeOfEveryRecord() {
        RecordBatch stored = batch(TimestampType.LOG_APPEND_TIME, 9_999);

        RecordBatch batch = read(cutTo(stored, Set.of(103L), false));

        batch.ensureValid();
        assertThat(batch.maxTimestamp()).isEqualTo(9_999);
        assertThat(batch.iterator().next().timestamp()).isEqualTo(9_999);
        assertThat(batch.lastOffset()).isEqualTo(103);
    }

    @Test
    void isACopyOfTheStoredBatchWhenEveryRecordIsPicked() {
        RecordBatch stored = batch(TimestampType.CREATE_TIME, RecordBatch.NO_TIMESTAMP);
        ByteBuffer original = ByteBuffer.allocate(stored.sizeInBytes());
        stored.writeTo(original);

        ByteBuffer all = cutTo(stored, Set.of(100L, 101L, 102L, 103L, 104L), false);

        assertThat(all).isEqualTo(original.flip());
    }

    @Test
    void startsAfreshAfterEachTakeAndRefusesAnEmptyCut() {
        RecordBatch stored = batch(TimestampType.CREATE_TIME, RecordBatch.NO_TIMESTAMP);
        cutTo(stored, Set.of(100L), false);

        RecordBatch second = read(cutTo(stored, Set.of(104L), false));
        assertThat(second.countOrNull()).isEqualTo(1);
        assertThat(second.iterator().next().offset()).isEqualTo(104);

        cursor.load(stored);
        assertThatThrownBy(() -> cut.take(false)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("offset 100");
    }

    @Test
    void dropsPicksOfABatchWhoseWalkWasNotTaken() {
        RecordBatch stored = batch(TimestampType.CREATE_TIME, RecordBatch.NO_TIMESTAMP);
        cursor.load(stored);
        cursor.next();
        cut.pick(); // a walk that fails here (say, a malformed record later in the batch) never takes its cut

        cursor.load(stored);
        assertThat(cut.picked()).isZero();
        assertThatThrownBy(() -> cut.take(false)).isInstanceOf(IllegalStateException.class);
        cursor.next();
        cursor.next();
        cut.pick();
        RecordBatch batch = read(cut.take(false));
        assertThat(batch.countOrNull()).isEqualTo(1);
        assertThat(batch.iterator().next().offset()).isEqualTo(101);
    }
}
