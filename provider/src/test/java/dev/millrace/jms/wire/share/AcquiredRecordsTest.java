package dev.millrace.jms.wire.share;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A ShareFetch partition decoded into what the member acquired: whole batches arrive, only the acquired offsets come
 * out as records, and acquired offsets without a record come out as gaps to settle.
 */
@Timeout(10)
class AcquiredRecordsTest {

    private static SimpleRecord record(long offset) {
        return new SimpleRecord(1_000 + offset, ("k" + offset).getBytes(StandardCharsets.UTF_8),
                ("v" + offset).getBytes(StandardCharsets.UTF_8),
                new Header[] {new RecordHeader("h", new byte[] {(byte) offset})});
    }

    /** One batch holding {@code count} records from {@code baseOffset}. */
    private static MemoryRecords batch(long baseOffset, int count) {
        SimpleRecord[] records = new SimpleRecord[count];
        for (int i = 0; i < count; i++) {
            records[i] = record(baseOffset + i);
        }
        return MemoryRecords.withRecords(baseOffset, Compression.NONE, records);
    }

    /** A transaction's commit marker at {@code offset}. */
    private static MemoryRecords commitMarker(long offset) {
        return MemoryRecords.withEndTransactionMarker(offset, 2_000L, RecordBatch.NO_PARTITION_LEADER_EPOCH, 9L,
                (short) 0, new EndTransactionMarker(ControlRecordType.COMMIT, 0));
    }

    private static MemoryRecords concat(MemoryRecords... parts) {
        int size = 0;
        for (MemoryRecords part : parts) {
            size += part.sizeInBytes();
        }
        ByteBuffer all = ByteBuffer.allocate(size);
        for (MemoryRecords part : parts) {
            all.put(part.buffer().duplicate());
        }
        return MemoryRecords.readableRecords(all.flip());
    }

    private static ShareFetchResponseData.AcquiredRecords range(long first, long last, int deliveryCount) {
        return new ShareFetchResponseData.AcquiredRecords().setFirstOffset(first).setLastOffset(last)
                .setDeliveryCount((short) deliveryCount);
    }

    private static ShareFetchResponseData.PartitionData partition(MemoryRecords records,
                                                                  ShareFetchResponseData.AcquiredRecords... ranges) {
        ShareFetchResponseData.PartitionData data = new ShareFetchResponseData.PartitionData().setPartitionIndex(3)
                .setAcquiredRecords(List.of(ranges));
        return records == null ? data : data.setRecords(records);
    }

    private static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    @Test
    void shouldKeepOnlyAcquiredRecordsWithTheirRangesDeliveryCountWhenBatchesHoldMore() {
        // batches 0-4, a commit marker at 5, 6-9; acquired: 1-2, 4-7 and 9-11 (10 and 11 hold no record)
        MemoryRecords records = concat(batch(0, 5), commitMarker(5), batch(6, 4));

        AcquiredRecords.Decoded decoded = AcquiredRecords.decode("q", partition(records, range(1, 2, 1),
                range(4, 7, 3), range(9, 11, 2)));

        assertThat(decoded.records()).extracting(a -> a.record().offset(), AcquiredRecords.Acquired::deliveryCount)
                .containsExactly(tuple(1L, 1), tuple(2L, 1), tuple(4L, 3), tuple(6L, 3), tuple(7L, 3),
                        tuple(9L, 2));
        assertThat(decoded.gaps()).containsExactlyInAnyOrder(5L, 10L, 11L);
    }

    @Test
    void shouldCarryEachRecordsFieldsWhenDecoded() {
        AcquiredRecords.Decoded decoded = AcquiredRecords.decode("q", partition(batch(40, 3), range(41, 41, 1)));

        assertThat(decoded.gaps()).isEmpty();
        assertThat(decoded.records()).hasSize(1);
        ConsumerRecord<byte[], byte[]> record = decoded.records().get(0).record();
        assertThat(record.topic()).isEqualTo("q");
        assertThat(record.partition()).isEqualTo(3);
        assertThat(record.offset()).isEqualTo(41);
        assertThat(record.timestamp()).isEqualTo(1_041);
        assertThat(text(record.key())).isEqualTo("k41");
        assertThat(text(record.value())).isEqualTo("v41");
        assertThat(record.headers().lastHeader("h").value()).containsExactly((byte) 41);
    }

    @Test
    void shouldReturnEveryAcquiredOffsetAsAGapWhenTheResponseHoldsNoRecords() {
        AcquiredRecords.Decoded none = AcquiredRecords.decode("q", partition(null, range(3, 4, 1)));
        AcquiredRecords.Decoded empty = AcquiredRecords.decode("q", partition(MemoryRecords.EMPTY, range(7, 7, 2)));
        // a batch wholly below the acquired range: its records are not the member's
        AcquiredRecords.Decoded below = AcquiredRecords.decode("q", partition(batch(0, 3), range(3, 3, 1)));

        assertThat(none.records()).isEmpty();
        assertThat(none.gaps()).containsExactly(3L, 4L);
        assertThat(empty.records()).isEmpty();
        assertThat(empty.gaps()).containsExactly(7L);
        assertThat(below.records()).isEmpty();
        assertThat(below.gaps()).containsExactly(3L);
    }

    @Test
    void shouldDecodeNothingWhenNothingWasAcquired() {
        AcquiredRecords.Decoded decoded = AcquiredRecords.decode("q", partition(batch(0, 3)));

        assertThat(decoded.records()).isEmpty();
        assertThat(decoded.gaps()).isEmpty();
    }

    @Test
    void shouldMakeAControlRecordInsideARangeAGapWhenATransactionEndsBetweenRecords() {
        // a transaction's records 0-1 and its marker at 2, then record 3: all acquired as one range
        MemoryRecords records = concat(batch(0, 2), commitMarker(2), batch(3, 1));

        AcquiredRecords.Decoded decoded = AcquiredRecords.decode("q", partition(records, range(0, 3, 1)));

        assertThat(decoded.records()).extracting(a -> text(a.record().value())).containsExactly("v0", "v1", "v3");
        assertThat(decoded.gaps()).containsExactly(2L);
    }
}
