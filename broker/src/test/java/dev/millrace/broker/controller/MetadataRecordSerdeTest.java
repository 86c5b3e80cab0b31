package dev.millrace.broker.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;

import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.broker.controller.MetadataRecord.BrokerRegistrationRecord;
import dev.millrace.broker.controller.MetadataRecord.BrokerStateRecord;
import dev.millrace.broker.controller.MetadataRecord.ClusterIdRecord;
import dev.millrace.broker.controller.MetadataRecord.ConfigRecord;
import dev.millrace.broker.controller.MetadataRecord.GroupConfigRecord;
import dev.millrace.broker.controller.MetadataRecord.PartitionRecord;
import dev.millrace.broker.controller.MetadataRecord.ProducerIdsRecord;
import dev.millrace.broker.controller.MetadataRecord.RemoveTopicRecord;
import dev.millrace.broker.controller.MetadataRecord.TopicRecord;

class MetadataRecordSerdeTest {

    private static final Uuid ID = new Uuid(0x1234_5678_9abc_def0L, 0x0fed_cba9_8765_4321L);

    private static final List<MetadataRecord> ALL_TYPES = List.of(
            new TopicRecord("orders-é", ID),
            new ConfigRecord("orders-é", "retention.ms", "1000"),
            new ConfigRecord("orders-é", "cleanup.policy", null),
            new PartitionRecord(ID, 7, List.of(1, 2, 3), List.of(1, 3), 1, 4, 9),
            new RemoveTopicRecord(ID),
            new ProducerIdsRecord(3, 2000),
            new ProducerIdsRecord(-1, Long.MAX_VALUE),
            new PartitionRecord(ID, 1, List.of(1, 4, 2), List.of(1, 2), 1, 0, 3, List.of(4), List.of(2)),
            new ClusterIdRecord("cluster-é"),
            new BrokerRegistrationRecord(3, ID, 77, "10.0.0.3", 9092, "rack-a"),
            new BrokerRegistrationRecord(4, ID, Long.MAX_VALUE, "h", 1, null),
            new BrokerStateRecord(3, 77, BrokerState.FENCED),
            new BrokerStateRecord(3, 77, BrokerState.UNFENCED),
            new BrokerStateRecord(3, 77, BrokerState.CONTROLLED_SHUTDOWN),
            new GroupConfigRecord("queue-é", "share.delivery.count.limit", "3"),
            new GroupConfigRecord("queue-é", "share.auto.offset.reset", null));

    @Test
    @Timeout(10)
    void shouldRoundTripEveryRecordTypeWhenEncodedAsOneBatch() {
        byte[] bytes = MetadataRecordSerde.encode(ALL_TYPES);

        assertThat(MetadataRecordSerde.decode(ByteBuffer.wrap(bytes))).isEqualTo(ALL_TYPES);
    }

    @Test
    @Timeout(10)
    void shouldWriteTheDocumentedLayoutWhenEncodingAGroupConfigRecord() {
        byte[] bytes = MetadataRecordSerde.encode(List.of(new GroupConfigRecord("g", "n", null)));

        ByteBuffer buf = ByteBuffer.wrap(bytes);
        buf.position(1 + 4);
        assertThat(buf.get()).as("type").isEqualTo((byte) 9);
        assertThat(buf.get()).as("record version").isEqualTo((byte) 0);
        assertThat(buf.getInt()).as("body length").isEqualTo(4 + 1 + 4 + 1 + 4);
        assertThat(buf.getInt()).as("group id length").isEqualTo(1);
        assertThat(buf.get()).isEqualTo((byte) 'g');
        assertThat(buf.getInt()).as("name length").isEqualTo(1);
        assertThat(buf.get()).isEqualTo((byte) 'n');
        assertThat(buf.getInt()).as("null value").isEqualTo(-1);
        assertThat(buf.hasRemaining()).isFalse();
    }

    @Test
    @Timeout(10)
    void shouldLeaveBufferPositionAloneWhenDecoding() {
        ByteBuffer buffer = ByteBuffer.wrap(MetadataRecordSerde.encode(ALL_TYPES));

        MetadataRecordSerde.decode(buffer);

        assertThat(buffer.position()).isZero();
    }

    @Test
    @Timeout(10)
    void shouldWriteTheDocumentedLayoutWhenEncodingATopicRecord() {
        byte[] bytes = MetadataRecordSerde.encode(List.of(new TopicRecord("t", ID)));

        ByteBuffer buf = ByteBuffer.wrap(bytes);
        assertThat(buf.get()).as("batch version").isEqualTo((byte) 0);
        assertThat(buf.getInt()).as("count").isEqualTo(1);
        assertThat(buf.get()).as("type").isEqualTo(MetadataRecordSerde.TYPE_TOPIC);
        assertThat(buf.get()).as("record version").isEqualTo((byte) 0);
        assertThat(buf.getInt()).as("body length").isEqualTo(4 + 1 + 16);
        assertThat(buf.getInt()).as("name length").isEqualTo(1);
        assertThat(buf.get()).isEqualTo((byte) 't');
        assertThat(buf.getLong()).isEqualTo(ID.getMostSignificantBits());
        assertThat(buf.getLong()).isEqualTo(ID.getLeastSignificantBits());
        assertThat(buf.hasRemaining()).isFalse();
    }

    @Test
    @Timeout(10)
    void shouldRejectEveryTruncationWhenDecoding() {
        byte[] bytes = MetadataRecordSerde.encode(ALL_TYPES);
        for (int length = 0; length < bytes.length; length++) {
            byte[] truncated = Arrays.copyOf(bytes, length);
            assertThatThrownBy(() -> MetadataRecordSerde.decode(ByteBuffer.wrap(truncated)))
                    .as("batch cut to %d of %d bytes", length, bytes.length)
                    .isInstanceOf(MetadataCodecException.class);
        }
    }

    @Test
    @Timeout(10)
    void shouldNameTheProblemWhenTypeIsUnknown() {
        byte[] bytes = MetadataRecordSerde.encode(List.of(new RemoveTopicRecord(ID)));
        bytes[5] = 42;

        assertThatThrownBy(() -> MetadataRecordSerde.decode(ByteBuffer.wrap(bytes)))
                .isInstanceOf(MetadataCodecException.class)
                .hasMessageContaining("Record 0 (type 42) at byte 5")
                .hasMessageContaining("unknown record type 42");
    }

    @Test
    @Timeout(10)
    void shouldRejectUnknownVersionsWhenDecoding() {
        byte[] batchVersion = MetadataRecordSerde.encode(List.of(new RemoveTopicRecord(ID)));
        batchVersion[0] = 1;
        byte[] recordVersion = MetadataRecordSerde.encode(List.of(new RemoveTopicRecord(ID)));
        recordVersion[6] = 3;

        assertThatThrownBy(() -> MetadataRecordSerde.decode(ByteBuffer.wrap(batchVersion)))
                .hasMessageContaining("Unknown metadata batch version 1");
        assertThatThrownBy(() -> MetadataRecordSerde.decode(ByteBuffer.wrap(recordVersion)))
                .hasMessageContaining("unknown version 3");
    }

    @Test
    @Timeout(10)
    void shouldRejectTrailingBytesWhenDecoding() {
        byte[] bytes = MetadataRecordSerde.encode(List.of(new RemoveTopicRecord(ID)));
        byte[] longer = Arrays.copyOf(bytes, bytes.length + 3);

        assertThatThrownBy(() -> MetadataRecordSerde.decode(ByteBuffer.wrap(longer)))
                .isInstanceOf(MetadataCodecException.class)
                .hasMessageContaining("3 trailing bytes");
    }

    @Test
    @Timeout(10)
    void shouldRejectBodyLongerThanItsFieldsWhenDecoding() {
        byte[] bytes = MetadataRecordSerde.encode(List.of(new RemoveTopicRecord(ID)));
        ByteBuffer buf = ByteBuffer.allocate(bytes.length + 2).put(bytes).put((byte) 0).put((byte) 0);
        buf.putInt(7, 16 + 2);

        assertThatThrownBy(() -> MetadataRecordSerde.decode(ByteBuffer.wrap(buf.array())))
                .isInstanceOf(MetadataCodecException.class)
                .hasMessageContaining("body length 18 but only 16 bytes were read");
    }

    @Test
    @Timeout(10)
    void shouldRejectHugeCountsWithoutAllocatingWhenDecoding() {
        ByteBuffer buf = ByteBuffer.allocate(5).put((byte) 0).putInt(Integer.MAX_VALUE);

        assertThatThrownBy(() -> MetadataRecordSerde.decode(ByteBuffer.wrap(buf.array())))
                .isInstanceOf(MetadataCodecException.class)
                .hasMessageContaining("claims 2147483647 records");
    }

    @Test
    @Timeout(10)
    void shouldWriteTheDocumentedLayoutAndReadItBackWhenEncodingAProducerIdsRecord() {
        ProducerIdsRecord record = new ProducerIdsRecord(7, 0x0102_0304_0506_0708L);
        byte[] bytes = MetadataRecordSerde.encode(List.of(record));

        ByteBuffer buf = ByteBuffer.wrap(bytes);
        assertThat(buf.get()).as("batch version").isEqualTo((byte) 0);
        assertThat(buf.getInt()).as("count").isEqualTo(1);
        assertThat(buf.get()).as("type").isEqualTo(MetadataRecordSerde.TYPE_PRODUCER_IDS);
        assertThat(buf.get()).as("record version").isEqualTo((byte) 0);
        assertThat(buf.getInt()).as("body length").isEqualTo(4 + 8);
        assertThat(buf.getInt()).as("brokerId").isEqualTo(7);
        assertThat(buf.getLong()).as("nextProducerId").isEqualTo(0x0102_0304_0506_0708L);
        assertThat(buf.hasRemaining()).isFalse();
        assertThat(MetadataRecordSerde.decode(ByteBuffer.wrap(bytes))).containsExactly(record);
    }

    @Test
    @Timeout(10)
    void shouldWriteTheDocumentedLayoutWhenEncodingABrokerStateRecord() {
        byte[] bytes = MetadataRecordSerde.encode(List.of(new BrokerStateRecord(5, 0x0102_0304_0506_0708L,
                BrokerState.CONTROLLED_SHUTDOWN)));

        ByteBuffer buf = ByteBuffer.wrap(bytes);
        buf.get();
        buf.getInt();
        assertThat(buf.get()).as("type").isEqualTo(MetadataRecordSerde.TYPE_BROKER_STATE);
        assertThat(buf.get()).as("record version").isEqualTo((byte) 0);
        assertThat(buf.getInt()).as("body length").isEqualTo(4 + 8 + 1);
        assertThat(buf.getInt()).as("brokerId").isEqualTo(5);
        assertThat(buf.getLong()).as("brokerEpoch").isEqualTo(0x0102_0304_0506_0708L);
        assertThat(buf.get()).as("state").isEqualTo((byte) 2);
        assertThat(buf.hasRemaining()).isFalse();
    }

    @Test
    @Timeout(10)
    void shouldRejectAnUnknownBrokerStateAndANullHostWhenDecoding() {
        byte[] state = MetadataRecordSerde.encode(List.of(new BrokerStateRecord(5, 1, BrokerState.FENCED)));
        state[state.length - 1] = 9;
        byte[] registration = MetadataRecordSerde.encode(List.of(new BrokerRegistrationRecord(1, ID, 1, "", 1,
                null)));
        ByteBuffer.wrap(registration).putInt(5 + 6 + 4 + 16 + 8, -1);

        assertThatThrownBy(() -> MetadataRecordSerde.decode(ByteBuffer.wrap(state)))
                .isInstanceOf(MetadataCodecException.class)
                .hasMessageContaining("type 8").hasMessageContaining("unknown broker state id 9");
        assertThatThrownBy(() -> MetadataRecordSerde.decode(ByteBuffer.wrap(registration)))
                .isInstanceOf(MetadataCodecException.class)
                .hasMessageContaining("type 7").hasMessageContaining("host is null");
    }

    @Test
    @Timeout(10)
    void shouldWritePartitionsAtVersionZeroUnlessReassigningAndRefuseAnUnknownVersion() {
        byte[] plain = MetadataRecordSerde.encode(List.of(new PartitionRecord(ID, 0, List.of(1), List.of(1), 1, 0, 0)));
        byte[] moving = MetadataRecordSerde.encode(List.of(new PartitionRecord(ID, 0, List.of(2, 1), List.of(1), 1, 0, 1,
                List.of(2), List.of(1))));
        byte[] future = moving.clone();
        future[6] = 2;

        assertThat(plain[6]).as("version of a partition without reassignment").isEqualTo((byte) 0);
        assertThat(moving[6]).as("version of a reassigning partition").isEqualTo((byte) 1);
        assertThat(moving.length - plain.length).as("two more lists").isEqualTo(4 + 4 + 4 + 4 + 4);
        assertThatThrownBy(() -> MetadataRecordSerde.decode(ByteBuffer.wrap(future)))
                .isInstanceOf(MetadataCodecException.class)
                .hasMessageContaining("unknown version 2, expected 0 to 1");
    }
}
