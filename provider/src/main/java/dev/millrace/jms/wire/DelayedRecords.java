package dev.millrace.jms.wire;

import java.nio.charset.StandardCharsets;

import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Utils;

import dev.millrace.protocol.delay.DelayedDelivery;

/**
 * Delivery delay (JMS 3.1 section 7.9) on the wire: a message sent with a delay is not written to its destination but
 * to the broker's internal delay topic {@value DelayedDelivery#TOPIC}, with the {@link DelayedDelivery} headers
 * naming the destination, the partition the session keeps for it and the due time (JMSDeliveryTime). The broker's
 * delay service appends a copy, with the same key, value, timestamp and headers, to that partition when it is due,
 * exactly once and also across broker restarts; until then no consumer can see it.
 *
 * <p>Order: every delayed message for one partition of one destination goes to the same partition of the delay
 * topic (a hash of destination and partition), and the service appends the due records of a delay partition in
 * offset order, so messages of one session to one destination with equal delays arrive in send order.
 *
 * <p>Stateless and thread-safe.
 */
public final class DelayedRecords {

    private DelayedRecords() {
    }

    /**
     * The record that schedules {@code target} (which names its topic and partition) for {@code dueMs}.
     *
     * @param producer the producer that will send it; asked (from its metadata cache) how many partitions the delay
     *                 topic has
     */
    public static ProducerRecord<byte[], byte[]> schedule(ProducerRecord<byte[], byte[]> target, long dueMs,
                                                          Producer<byte[], byte[]> producer) {
        if (target.partition() == null) {
            throw new IllegalArgumentException("a delayed record needs its target partition");
        }
        RecordHeaders headers = new RecordHeaders(target.headers().toArray());
        headers.add(DelayedDelivery.TARGET_TOPIC, target.topic().getBytes(StandardCharsets.UTF_8));
        headers.add(DelayedDelivery.TARGET_PARTITION, DelayedDelivery.encodeInt(target.partition()));
        headers.add(DelayedDelivery.DUE_MS, DelayedDelivery.encodeLong(dueMs));
        int delayPartitions = producer.partitionsFor(DelayedDelivery.TOPIC).size();
        return new ProducerRecord<>(DelayedDelivery.TOPIC, delayPartition(target.topic(), target.partition(),
                delayPartitions), target.timestamp(), target.key(), target.value(), headers);
    }

    /** The partition of the delay topic that carries the delayed records of {@code topic}'s {@code partition}. */
    static int delayPartition(String topic, int partition, int delayPartitions) {
        byte[] name = (topic + "\u0000" + partition).getBytes(StandardCharsets.UTF_8);
        return Utils.toPositive(Utils.murmur2(name)) % delayPartitions;
    }
}
