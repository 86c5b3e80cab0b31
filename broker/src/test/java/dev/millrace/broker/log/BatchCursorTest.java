package dev.millrace.broker.log;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

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

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(20)
class BatchCursorTest {

    private static RecordBatch batch(TimestampType type, long logAppendTime, long... offsets) {
        ByteBuffer buffer = ByteBuffer.allocate(4096);
        MemoryRecordsBuilder builder = MemoryRecords.builder(buffer, RecordBatch.CURRENT_MAGIC_VALUE,
                Compression.NONE, type, 100, logAppendTime, 7L, (short) 1, 0, false, 3);
        for (long offset : offsets) {
            Header[] headers = {new RecordHeader("h", ("x" + offset).getBytes(StandardCharsets.UTF_8)),
                    new RecordHeader("n", null)};
            byte[] key = offset % 2 == 0 ? ("k" + offset).getBytes(StandardCharsets.UTF_8) : null;
            builder.appendWithOffset(offset, 1_000 + offset * 3, key, ("v" + offset).getBytes(StandardCharsets.UTF_8),
                    headers);
        }
        return builder.build().batches().iterator().next();
    }

    @Test
    void walksTheRecordsKafkaReadsWithTheirOffsetsTimestampsKeysAndHeaders() {
        RecordBatch batch = batch(TimestampType.CREATE_TIME, RecordBatch.NO_TIMESTAMP, 100, 101, 104, 130);
        BatchCursor cursor = new BatchCursor();
        assertThat(BatchCursor.canWalk(batch)).isTrue();
        cursor.load(batch);
        List<Record> expected = new ArrayList<>();
        batch.forEach(expected::add);
        for (Record r : expected) {
            assertThat(cursor.next()).isTrue();
            assertThat(cursor.offset()).isEqualTo(r.offset());
            assertThat(cursor.timestamp()).isEqualTo(r.timestamp());
            assertThat(cursor.key()).isEqualTo(r.hasKey() ? Utils.toArray(r.key()) : null);
            assertThat(cursor.headerCount()).isEqualTo(2);
            // the first header's key length (zigzag 1 -> 2), then its key
            assertThat(cursor.buffer().get(cursor.headersPosition())).isEqualTo((byte) 2);
            assertThat(cursor.buffer().get(cursor.headersPosition() + 1)).isEqualTo((byte) 'h');
            Record copy = cursor.record();
            assertThat(copy.offset()).isEqualTo(r.offset());
            assertThat(Utils.toArray(copy.value())).isEqualTo(Utils.toArray(r.value()));
            assertThat(copy.headers()).isEqualTo(r.headers());
        }
        assertThat(cursor.next()).isFalse();
    }

    @Test
    void takesEveryTimestampFromTheBatchWhenTheLogAppendedIt() {
        RecordBatch batch = batch(TimestampType.LOG_APPEND_TIME, 55_555L, 100, 101);
        BatchCursor cursor = new BatchCursor();
        cursor.load(batch);
        assertThat(cursor.next()).isTrue();
        assertThat(cursor.timestamp()).isEqualTo(55_555L);
        assertThat(cursor.next()).isTrue();
        assertThat(cursor.timestamp()).isEqualTo(55_555L);
    }

    @Test
    void reusesItsBufferAndGrowsItForALargeBatch() {
        BatchCursor cursor = new BatchCursor();
        ByteBuffer big = ByteBuffer.allocate(300_000);
        MemoryRecordsBuilder builder = MemoryRecords.builder(big, Compression.NONE, TimestampType.CREATE_TIME, 0);
        builder.append(1L, null, new byte[200_000]);
        builder.append(2L, null, new byte[10]);
        cursor.load(builder.build().batches().iterator().next());
        assertThat(cursor.next()).isTrue();
        assertThat(cursor.next()).isTrue();
        assertThat(cursor.offset()).isEqualTo(1);
        cursor.load(batch(TimestampType.CREATE_TIME, RecordBatch.NO_TIMESTAMP, 100));
        assertThat(cursor.next()).isTrue();
        assertThat(cursor.offset()).isEqualTo(100);
    }

    @Test
    void namesTheBatchAndPositionOfARecordThatRunsPastTheBatch() {
        RecordBatch batch = batch(TimestampType.CREATE_TIME, RecordBatch.NO_TIMESTAMP, 100, 101);
        ByteBuffer bytes = ByteBuffer.allocate(batch.sizeInBytes());
        batch.writeTo(bytes);
        bytes.flip();
        bytes.put(61, (byte) 0x7e); // the first record's length: 63 bytes, more than the batch holds after it
        RecordBatch corrupt = MemoryRecords.readableRecords(bytes).batches().iterator().next();
        BatchCursor cursor = new BatchCursor();
        cursor.load(corrupt);
        assertThatThrownBy(cursor::next).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("byte 61 of the batch at offset 100");
    }

    @Test
    void leavesCompressedAndControlBatchesToKafkasIterator() {
        ByteBuffer buffer = ByteBuffer.allocate(1024);
        MemoryRecordsBuilder builder = MemoryRecords.builder(buffer, Compression.gzip().build(),
                TimestampType.CREATE_TIME, 0);
        builder.append(1L, null, new byte[10]);
        assertThat(BatchCursor.canWalk(builder.build().batches().iterator().next())).isFalse();
    }

    @Test
    void walksABatchWhereItLiesInAReadAndCopiesOneItIsNotGivenTheRightPlaceOf() {
        RecordBatch first = batch(TimestampType.CREATE_TIME, RecordBatch.NO_TIMESTAMP, 100, 101);
        RecordBatch second = batch(TimestampType.CREATE_TIME, RecordBatch.NO_TIMESTAMP, 102, 105);
        // two batches one after another at an array offset, as a scan's read holds them
        ByteBuffer backing = ByteBuffer.allocate(8 + first.sizeInBytes() + second.sizeInBytes());
        backing.position(8);
        ByteBuffer read = backing.slice();
        first.writeTo(read);
        second.writeTo(read);
        read.flip();
        BatchCursor cursor = new BatchCursor();

        cursor.load(second, read, first.sizeInBytes());
        List<Long> offsets = new ArrayList<>();
        while (cursor.next()) {
            offsets.add(cursor.offset());
            assertThat(cursor.record().value()).isEqualTo(ByteBuffer.wrap(("v" + cursor.offset())
                    .getBytes(StandardCharsets.UTF_8)));
        }
        assertThat(offsets).containsExactly(102L, 105L);
        assertThat(cursor.buffer().array()).as("walked in place").isSameAs(backing.array());

        cursor.load(second, read, first.sizeInBytes() + 10); // it would run past the read: copied instead
        assertThat(cursor.buffer().array()).isNotSameAs(backing.array());
        assertThat(cursor.next()).isTrue();
        assertThat(cursor.offset()).isEqualTo(102);
        cursor.load(first, null, 0);
        assertThat(cursor.next()).isTrue();
        assertThat(cursor.offset()).isEqualTo(100);
    }

    @Test
    void walksABatchWhereItLiesInADirectBufferAsInAMappedRead() {
        RecordBatch first = batch(TimestampType.CREATE_TIME, RecordBatch.NO_TIMESTAMP, 100, 101);
        RecordBatch second = batch(TimestampType.CREATE_TIME, RecordBatch.NO_TIMESTAMP, 102, 105);
        ByteBuffer read = ByteBuffer.allocateDirect(first.sizeInBytes() + second.sizeInBytes());
        first.writeTo(read);
        second.writeTo(read);
        read.flip();
        BatchCursor cursor = new BatchCursor();
        BatchCut cut = new BatchCut(cursor);

        cursor.load(second, read, first.sizeInBytes());
        List<Long> offsets = new ArrayList<>();
        while (cursor.next()) {
            offsets.add(cursor.offset());
            assertThat(cursor.timestamp()).isEqualTo(1_000 + cursor.offset() * 3);
            assertThat(cursor.record().value()).isEqualTo(ByteBuffer.wrap(("v" + cursor.offset())
                    .getBytes(StandardCharsets.UTF_8)));
            if (cursor.offset() == 105) {
                assertThat(cursor.key()).isNull();
                cut.pick();
            } else {
                assertThat(cursor.key()).isEqualTo("k102".getBytes(StandardCharsets.UTF_8));
            }
        }
        assertThat(offsets).containsExactly(102L, 105L);
        assertThat(cursor.buffer().isDirect()).as("walked in place, not copied to the heap").isTrue();
        assertThat(cursor.headerCount()).isEqualTo(2);

        RecordBatch kept = MemoryRecords.readableRecords(cut.take(false)).batches().iterator().next();
        kept.ensureValid();
        List<Long> keptOffsets = new ArrayList<>();
        for (Record r : kept) {
            keptOffsets.add(r.offset());
            assertThat(Utils.utf8(r.value())).isEqualTo("v" + r.offset());
        }
        assertThat(keptOffsets).containsExactly(105L);
    }
}
