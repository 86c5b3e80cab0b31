package dev.millrace.broker.share;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;

import dev.millrace.protocol.jms.JmsHeaders;
import dev.millrace.protocol.jms.TypedValueCodec;

/** A {@link ShareLog} over batches held in memory; values are "v&lt;offset&gt;". */
final class InMemoryShareLog implements ShareLog {

    private final List<MemoryRecords> batches = new ArrayList<>();
    private long endOffset;
    private volatile String deadLetterTopic;

    /** Appends one batch of {@code count} records. */
    synchronized void append(int count) {
        ByteBuffer buffer = ByteBuffer.allocate(64 + count * 64);
        MemoryRecordsBuilder builder = MemoryRecords.builder(buffer, Compression.NONE, TimestampType.CREATE_TIME,
                endOffset);
        for (int i = 0; i < count; i++) {
            builder.append(0L, null, ("v" + (endOffset + i)).getBytes(StandardCharsets.UTF_8));
        }
        batches.add(builder.build());
        endOffset += count;
    }

    /** Appends one batch with a record per entry, the entry being its JMS property {@code color} (null: none). */
    synchronized void appendColors(String... colors) {
        ByteBuffer buffer = ByteBuffer.allocate(256 + colors.length * 128);
        MemoryRecordsBuilder builder = MemoryRecords.builder(buffer, Compression.NONE, TimestampType.CREATE_TIME,
                endOffset);
        for (int i = 0; i < colors.length; i++) {
            Header[] headers = colors[i] == null ? new Header[0] : new Header[] {new RecordHeader(
                    JmsHeaders.propertyKey("color"), TypedValueCodec.encodeProperty(colors[i]))};
            builder.append(0L, null, ("v" + (endOffset + i)).getBytes(StandardCharsets.UTF_8), headers);
        }
        batches.add(builder.build());
        endOffset += colors.length;
    }

    /** Appends one batch of one record with JMS property {@code color} and a value of {@code valueBytes} bytes. */
    synchronized void appendLarge(String color, int valueBytes) {
        ByteBuffer buffer = ByteBuffer.allocate(valueBytes + 512);
        MemoryRecordsBuilder builder = MemoryRecords.builder(buffer, Compression.NONE, TimestampType.CREATE_TIME,
                endOffset);
        builder.append(0L, null, new byte[valueBytes], new Header[] {new RecordHeader(
                JmsHeaders.propertyKey("color"), TypedValueCodec.encodeProperty(color))});
        batches.add(builder.build());
        endOffset += 1;
    }

    /** Appends the records of {@code records} as one batch at the end of the log, keys, values and tombstones kept. */
    synchronized void appendRecords(MemoryRecords records) {
        ByteBuffer buffer = ByteBuffer.allocate(records.sizeInBytes() + 256);
        MemoryRecordsBuilder builder = MemoryRecords.builder(buffer, Compression.NONE, TimestampType.CREATE_TIME,
                endOffset);
        int count = 0;
        for (org.apache.kafka.common.record.internal.Record record : records.records()) {
            builder.append(record.timestamp(), record.hasKey() ? org.apache.kafka.common.utils.Utils.toArray(
                    record.key()) : null, record.hasValue() ? org.apache.kafka.common.utils.Utils.toArray(
                    record.value()) : null);
            count++;
        }
        batches.add(builder.build());
        endOffset += count;
    }

    /** Appends a transaction marker of {@code producerId} (commit or abort) as a control batch of one record. */
    synchronized void appendMarker(long producerId, boolean commit) {
        batches.add(MemoryRecords.withEndTransactionMarker(endOffset, 0L, 0, producerId, (short) 0,
                new org.apache.kafka.common.record.internal.EndTransactionMarker(commit
                        ? org.apache.kafka.common.record.internal.ControlRecordType.COMMIT
                        : org.apache.kafka.common.record.internal.ControlRecordType.ABORT, 0)));
        endOffset += 1;
    }

    void setDeadLetterTopic(String topic) {
        deadLetterTopic = topic;
    }

    @Override
    public long logStartOffset() {
        return 0;
    }

    @Override
    public synchronized long highWatermark() {
        return endOffset;
    }

    @Override
    public synchronized Records read(long offset, int maxBytes) {
        ByteBuffer out = ByteBuffer.allocate(Math.max(0, (int) Math.min(Integer.MAX_VALUE, totalBytes())));
        for (MemoryRecords records : batches) {
            for (RecordBatch batch : records.batches()) {
                if (batch.lastOffset() < offset) {
                    continue;
                }
                if (out.position() > 0 && out.position() + batch.sizeInBytes() > maxBytes) {
                    break;
                }
                batch.writeTo(out);
            }
        }
        out.flip();
        return MemoryRecords.readableRecords(out);
    }

    private long totalBytes() {
        return batches.stream().mapToLong(MemoryRecords::sizeInBytes).sum();
    }

    @Override
    public Optional<String> deadLetterTopic() {
        return Optional.ofNullable(deadLetterTopic);
    }
}
