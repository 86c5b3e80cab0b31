package dev.millrace.protocol.jms;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

/**
 * The parts of one Kafka record that the JMS mapping reads and writes: key, value, timestamp and headers. Topic,
 * partition and offset belong to the transport, not to the mapping.
 *
 * <p>Instances are immutable and thread-safe as long as callers do not modify the arrays they passed in or got out
 * (they are not copied, to avoid copying bodies on the send and receive paths).
 */
public final class JmsRecord {

    private final byte[] key;
    private final byte[] value;
    private final Long timestamp;
    private final List<Header> headers;

    /**
     * @param timestamp the record timestamp in ms, or {@code null} to let the Kafka producer stamp the send time
     */
    public JmsRecord(byte[] key, byte[] value, Long timestamp, Iterable<Header> headers) {
        this.key = key;
        this.value = value;
        this.timestamp = timestamp;
        List<Header> copy = new ArrayList<>();
        if (headers != null) {
            headers.forEach(h -> copy.add(Objects.requireNonNull(h, "header")));
        }
        this.headers = Collections.unmodifiableList(copy);
    }

    /** The parts of a record read by a Kafka consumer; a negative timestamp (Kafka's "none", -1) becomes null. */
    public static JmsRecord of(ConsumerRecord<byte[], byte[]> record) {
        long ts = record.timestamp();
        return new JmsRecord(record.key(), record.value(), ts < 0 ? null : ts,
                record.headers());
    }

    /** A producer record for {@code topic}; {@code partition} may be null to let the producer choose. */
    public ProducerRecord<byte[], byte[]> toProducerRecord(String topic, Integer partition) {
        return new ProducerRecord<>(topic, partition, timestamp, key, value, headers);
    }

    public byte[] key() {
        return key;
    }

    public byte[] value() {
        return value;
    }

    /** Timestamp in ms, or {@code null} when none is set. */
    public Long timestamp() {
        return timestamp;
    }

    /** Headers in record order. */
    public List<Header> headers() {
        return headers;
    }

    /** The value of the last header called {@code key}, or {@code null}. */
    public byte[] lastHeader(String key) {
        byte[] found = null;
        for (Header h : headers) {
            if (h.key().equals(key)) {
                found = h.value();
            }
        }
        return found;
    }

    static Header header(String key, byte[] value) {
        return new RecordHeader(key, value);
    }

    @Override
    public String toString() {
        return "JmsRecord{key=" + (key == null ? "null" : key.length + " bytes") + ", value="
                + (value == null ? "null" : value.length + " bytes") + ", timestamp=" + timestamp + ", headers="
                + headers.stream().map(Header::key).toList() + "}";
    }
}
