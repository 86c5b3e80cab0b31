package dev.millrace.jms.wire.share;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.TimestampType;

/**
 * Decodes one partition of a ShareFetch response: the records whose offsets the member acquired (the response's
 * batches may hold more, since the broker sends whole batches), each with the delivery count of its acquired range,
 * and the acquired offsets that hold no record for a client (transaction markers, records compacted away), which the
 * consumer settles as GAP.
 *
 * <p>Stateless; thread-safe.
 */
public final class AcquiredRecords {

    /** The decoded partition: records in offset order, and the acquired offsets without a record. */
    public record Decoded(List<Acquired> records, List<Long> gaps) {
    }

    /** One acquired record and its delivery count (this delivery included). */
    public record Acquired(ConsumerRecord<byte[], byte[]> record, int deliveryCount) {
    }

    private AcquiredRecords() {
    }

    public static Decoded decode(String topic, ShareFetchResponseData.PartitionData partition) {
        List<ShareFetchResponseData.AcquiredRecords> ranges = partition.acquiredRecords();
        List<Acquired> records = new ArrayList<>();
        List<Long> gaps = new ArrayList<>();
        if (ranges.isEmpty()) {
            return new Decoded(records, gaps);
        }
        MemoryRecords memory = partition.records() instanceof MemoryRecords m ? m : MemoryRecords.EMPTY;
        java.util.Set<Long> seen = new java.util.HashSet<>();
        int rangeIndex = 0;
        for (RecordBatch batch : memory.batches()) {
            for (Record r : batch) {
                long offset = r.offset();
                while (rangeIndex < ranges.size() && offset > ranges.get(rangeIndex).lastOffset()) {
                    rangeIndex++;
                }
                if (rangeIndex >= ranges.size()) {
                    break;
                }
                ShareFetchResponseData.AcquiredRecords range = ranges.get(rangeIndex);
                if (offset < range.firstOffset() || !seen.add(offset)) {
                    continue;
                }
                if (batch.isControlBatch()) {
                    gaps.add(offset);
                } else {
                    records.add(new Acquired(toConsumerRecord(topic, partition.partitionIndex(), batch, r),
                            range.deliveryCount()));
                }
            }
        }
        for (ShareFetchResponseData.AcquiredRecords range : ranges) {
            for (long o = range.firstOffset(); o <= range.lastOffset(); o++) {
                if (!seen.contains(o)) {
                    gaps.add(o);
                }
            }
        }
        return new Decoded(records, gaps);
    }

    private static ConsumerRecord<byte[], byte[]> toConsumerRecord(String topic, int partition, RecordBatch batch,
                                                                   Record r) {
        byte[] key = r.hasKey() ? bytes(r.key()) : null;
        byte[] value = r.hasValue() ? bytes(r.value()) : null;
        TimestampType type = batch.timestampType();
        return new ConsumerRecord<>(topic, partition, r.offset(), r.timestamp(), type,
                key == null ? -1 : key.length, value == null ? -1 : value.length, key, value,
                new RecordHeaders(r.headers()), Optional.of(batch.partitionLeaderEpoch()));
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }
}
