package dev.millrace.jms.wire;

import java.nio.charset.StandardCharsets;

import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;

import dev.millrace.protocol.jms.JmsHeaders;

/**
 * The copy of an expired message that a consumer moves to its destination's expiry queue (topic config
 * {@value DestinationSetup#EXPIRY_TOPIC_CONFIG}): the record's key, value, timestamp and headers, plus these headers
 * (UTF-8 strings, as the broker's dead-letter headers), which a JMS consumer of the expiry queue reads as the
 * properties in brackets:
 *
 * <pre>
 *   millrace.expiry.original.topic       the destination it expired on   (JMS_Millrace_ExpiryOriginalTopic)
 *   millrace.expiry.original.partition   its partition, decimal          (JMS_Millrace_ExpiryOriginalPartition)
 *   millrace.expiry.original.offset      its offset, decimal             (JMS_Millrace_ExpiryOriginalOffset)
 *   millrace.expiry.time.ms              when it was moved, ms, decimal  (JMS_Millrace_ExpiryTime)
 * </pre>
 *
 * The copy goes to partition {@code original partition % expiry queue partitions}. It has no JMSExpiration (header
 * {@code jms.expiration} removed), as Artemis clears it on its expiry address, so it does not expire again.
 *
 * <p>Stateless and thread-safe.
 */
public final class ExpiredRecords {

    public static final String ORIGINAL_TOPIC = "millrace.expiry.original.topic";
    public static final String ORIGINAL_PARTITION = "millrace.expiry.original.partition";
    public static final String ORIGINAL_OFFSET = "millrace.expiry.original.offset";
    public static final String EXPIRY_TIME_MS = "millrace.expiry.time.ms";

    private ExpiredRecords() {
    }

    /** The copy of {@code expired} for {@code expiryTopic}, which has {@code partitions} partitions. */
    public static ProducerRecord<byte[], byte[]> copy(Delivery expired, String expiryTopic, int partitions,
                                                      long nowMs) {
        RecordHeaders headers = new RecordHeaders(expired.record.headers().toArray());
        headers.remove(JmsHeaders.EXPIRATION);
        headers.add(ORIGINAL_TOPIC, utf8(expired.record.topic()));
        headers.add(ORIGINAL_PARTITION, utf8(String.valueOf(expired.partition())));
        headers.add(ORIGINAL_OFFSET, utf8(String.valueOf(expired.offset())));
        headers.add(EXPIRY_TIME_MS, utf8(String.valueOf(nowMs)));
        Long timestamp = expired.record.timestamp() < 0 ? null : expired.record.timestamp();
        return new ProducerRecord<>(expiryTopic, expired.partition() % partitions, timestamp, expired.record.key(),
                expired.record.value(), headers);
    }

    private static byte[] utf8(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }
}
