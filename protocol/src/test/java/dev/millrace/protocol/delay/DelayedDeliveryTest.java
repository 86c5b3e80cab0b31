package dev.millrace.protocol.delay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;

import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class DelayedDeliveryTest {

    private static RecordHeaders valid() {
        RecordHeaders headers = new RecordHeaders();
        headers.add(DelayedDelivery.TARGET_TOPIC, "orders".getBytes(StandardCharsets.UTF_8));
        headers.add(DelayedDelivery.DUE_MS, DelayedDelivery.encodeLong(1_767_225_600_123L));
        return headers;
    }

    @Test
    void readsTheTargetAndDueTimeWithAnOptionalPartition() {
        assertThat(DelayedDelivery.parse(valid()))
                .isEqualTo(new DelayedDelivery.Request("orders", -1, 1_767_225_600_123L));
        RecordHeaders withPartition = valid();
        withPartition.add(DelayedDelivery.TARGET_PARTITION, DelayedDelivery.encodeInt(2));
        assertThat(DelayedDelivery.parse(withPartition).targetPartition()).isEqualTo(2);
        assertThat(DelayedDelivery.encodeLong(0x0102030405060708L)).containsExactly(1, 2, 3, 4, 5, 6, 7, 8);
    }

    @Test
    void namesTheHeaderThatIsMissingRepeatedMalformedOrReserved() {
        RecordHeaders noDue = new RecordHeaders();
        noDue.add(DelayedDelivery.TARGET_TOPIC, "orders".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> DelayedDelivery.parse(noDue)).hasMessage("header 'millrace.delay.due.ms' is missing");

        RecordHeaders twice = valid();
        twice.add(DelayedDelivery.DUE_MS, DelayedDelivery.encodeLong(1));
        assertThatThrownBy(() -> DelayedDelivery.parse(twice)).hasMessageContaining("appears 2 times");

        RecordHeaders shortDue = new RecordHeaders();
        shortDue.add(DelayedDelivery.TARGET_TOPIC, "orders".getBytes(StandardCharsets.UTF_8));
        shortDue.add(DelayedDelivery.DUE_MS, new byte[] {1, 2, 3});
        assertThatThrownBy(() -> DelayedDelivery.parse(shortDue))
                .hasMessage("header 'millrace.delay.due.ms' must be an 8-byte big-endian int64, got 3 bytes");

        RecordHeaders badPartition = valid();
        badPartition.add(DelayedDelivery.TARGET_PARTITION, new byte[] {1});
        assertThatThrownBy(() -> DelayedDelivery.parse(badPartition)).hasMessageContaining("target.partition");

        RecordHeaders badTopic = new RecordHeaders();
        badTopic.add(DelayedDelivery.TARGET_TOPIC, new byte[] {(byte) 0xC3, (byte) 0x28});
        badTopic.add(DelayedDelivery.DUE_MS, DelayedDelivery.encodeLong(1));
        assertThatThrownBy(() -> DelayedDelivery.parse(badTopic)).hasMessageContaining("not valid UTF-8");

        RecordHeaders reserved = valid();
        reserved.add(DelayedDelivery.DONE_OFFSET, DelayedDelivery.encodeLong(5));
        assertThatThrownBy(() -> DelayedDelivery.parse(reserved)).hasMessageContaining("reserved for the broker");
    }
}
