package dev.millrace.jms.wire;

import org.apache.kafka.clients.consumer.ConsumerRecord;

import dev.millrace.protocol.jms.JmsRecord;

/**
 * One record handed to the JMS layer: where it came from and how often it has been delivered, counting this
 * delivery. Immutable apart from the delivery count, which local redelivery raises (on the thread that owns it), and
 * the priority it caches once read.
 */
public final class Delivery {

    final ConsumerRecord<byte[], byte[]> record;
    private int deliveryCount;
    /** {@link #priority()} once read (a fetch sorts by it, which asks each record several times); -1 before. */
    private int priority = -1;

    Delivery(ConsumerRecord<byte[], byte[]> record, int deliveryCount) {
        this.record = record;
        this.deliveryCount = deliveryCount;
    }

    public JmsRecord jmsRecord() {
        return JmsRecord.of(record);
    }

    public int partition() {
        return record.partition();
    }

    public long offset() {
        return record.offset();
    }

    public int deliveryCount() {
        return deliveryCount;
    }

    void redelivered() {
        deliveryCount++;
    }

    /**
     * The message's JMSPriority as the record carries it ({@code jms.priority}, one byte 0..9); 4,
     * the JMS default, when the header is absent or not one byte (records of plain Kafka producers).
     */
    public int priority() {
        if (priority < 0) {
            byte[] value = header(dev.millrace.protocol.jms.JmsHeaders.PRIORITY);
            priority = value != null && value.length == 1 && value[0] >= 0 && value[0] <= 9 ? value[0] : 4;
        }
        return priority;
    }

    /**
     * The message's JMSDeliveryTime as the record carries it ({@code jms.delivery.time}, int64), else its timestamp
     * (JMSTimestamp, which it equals when absent); 0 when neither says.
     */
    public long deliveryTimeMs() {
        byte[] value = header(dev.millrace.protocol.jms.JmsHeaders.DELIVERY_TIME);
        if (value != null && value.length == 8) {
            return java.nio.ByteBuffer.wrap(value).getLong();
        }
        return Math.max(0, record.timestamp());
    }

    /** The destination (topic) the record was read from. */
    public String topic() {
        return record.topic();
    }

    /** The value of a header, or null. */
    public byte[] header(String key) {
        var h = record.headers().lastHeader(key);
        return h == null ? null : h.value();
    }

    @Override
    public String toString() {
        return record.topic() + "-" + record.partition() + "@" + record.offset() + " (delivery " + deliveryCount + ")";
    }
}
