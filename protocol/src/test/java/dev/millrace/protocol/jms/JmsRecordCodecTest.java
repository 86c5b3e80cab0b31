package dev.millrace.protocol.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(20)
class JmsRecordCodecTest {

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static JmsRecord record(byte[] key, byte[] value, Header... headers) {
        return new JmsRecord(key, value, 1_000L, List.of(headers));
    }

    private static JmsMessageData everything() {
        return JmsMessageData.builder()
                .body(BodyType.MAP, BodyCodec.encodeMap(java.util.Map.of("k", 1)))
                .messageId("ID:abc")
                .correlationId("corr")
                .type("order")
                .deliveryMode(JmsMessageData.NON_PERSISTENT)
                .priority(9)
                .timestamp(1_700_000_000_000L)
                .expiration(1_700_000_060_000L)
                .deliveryTime(1_700_000_005_000L)
                .destination(new JmsDestination(DestinationType.QUEUE, "orders"))
                .replyTo(new JmsDestination(DestinationType.TEMPORARY_QUEUE, "tmp.q-1"))
                .groupId("group-\u00e9")
                .property("b", true)
                .property("y", (byte) 1)
                .property("s", (short) 2)
                .property("i", 3)
                .property("l", 4L)
                .property("f", 5.5f)
                .property("d", 6.5d)
                .property("str", "seven")
                .property("nothing", null)
                .property("JMSXGroupSeq", 3)
                .build();
    }

    @Test
    void shouldRoundTripEveryHeaderAndPropertyType() {
        JmsMessageData data = everything();
        JmsMessageData back = JmsRecordCodec.decode(JmsRecordCodec.encode(data));
        assertThat(back).isEqualTo(data);
        assertThat(back.properties().keySet()).containsExactlyElementsOf(data.properties().keySet());
    }

    @Test
    void shouldReadTheRecordValueAsTheBodyWithoutCopyingItWhileBuildersKeepCopies() {
        byte[] value = BodyCodec.encodeText("hi");
        JmsRecord record = JmsRecordCodec.encode(JmsMessageData.builder().body(BodyType.TEXT, value).build());
        assertThat(record.value()).isNotSameAs(value).isEqualTo(value); // body() copies what the caller may change

        JmsMessageData decoded = JmsRecordCodec.decode(record);

        assertThat(decoded.bodyUnshared()).isSameAs(record.value()); // received bodies are only read
        assertThat(decoded.body()).isNotSameAs(record.value()).isEqualTo(value);
    }

    @Test
    void shouldLayOutRecordPartsAsDocumented() {
        JmsRecord r = JmsRecordCodec.encode(everything());
        assertThat(r.key()).isEqualTo("group-\u00e9".getBytes(StandardCharsets.UTF_8));
        assertThat(r.timestamp()).isEqualTo(1_700_000_000_000L);
        assertThat(r.lastHeader("jms.body.type")).isEqualTo(ascii("map"));
        assertThat(r.lastHeader("jms.message.id")).isEqualTo(ascii("ID:abc"));
        assertThat(r.lastHeader("jms.delivery.mode")).containsExactly(1);
        assertThat(r.lastHeader("jms.priority")).containsExactly(9);
        assertThat(r.lastHeader("jms.expiration"))
                .isEqualTo(java.nio.ByteBuffer.allocate(8).putLong(1_700_000_060_000L).array());
        assertThat(r.lastHeader("jms.reply.to")).containsExactly(0x03, 't', 'm', 'p', '.', 'q', '-', '1');
        assertThat(r.lastHeader("jms.prop.i")).containsExactly(0x05, 0, 0, 0, 3);
        assertThat(r.lastHeader("jms.prop.JMSXGroupID")).isNull();
        assertThat(r.headers()).allSatisfy(h -> assertThat(h.key()).startsWith("jms."));
    }

    @Test
    void shouldProduceTheWorkedExampleOfTheClassDoc() {
        JmsMessageData data = JmsMessageData.builder().body(BodyType.TEXT, BodyCodec.encodeText("hi")).priority(7)
                .groupId("g1").property("count", 7).timestamp(1000).build();
        JmsRecord r = JmsRecordCodec.encode(data);
        assertThat(r.key()).containsExactly(0x67, 0x31);
        assertThat(r.value()).containsExactly(0x68, 0x69);
        assertThat(r.timestamp()).isEqualTo(1000L);
        assertThat(r.headers()).extracting(Header::key).containsExactly("jms.body.type", "jms.priority",
                "jms.prop.count");
        assertThat(r.headers().get(0).value()).containsExactly(0x74, 0x65, 0x78, 0x74);
        assertThat(r.headers().get(1).value()).containsExactly(0x07);
        assertThat(r.headers().get(2).value()).containsExactly(0x05, 0, 0, 0, 0x07);
    }

    @Test
    void shouldLeaveOutHeadersWhoseValueIsTheDefault() {
        JmsMessageData data = JmsMessageData.builder().body(BodyType.TEXT, BodyCodec.encodeText("hi"))
                .timestamp(5).build();
        JmsRecord r = JmsRecordCodec.encode(data);
        assertThat(r.headers()).extracting(Header::key).containsExactly("jms.body.type");
        assertThat(r.key()).isNull();
        JmsMessageData back = JmsRecordCodec.decode(r);
        assertThat(back.deliveryMode()).isEqualTo(JmsMessageData.PERSISTENT);
        assertThat(back.priority()).isEqualTo(4);
        assertThat(back.expiration()).isZero();
        assertThat(back.deliveryTime()).isEqualTo(5);
        assertThat(back).isEqualTo(data);
    }

    @Test
    void shouldWriteNoTimestampForJmsTimestampZero() {
        JmsRecord r = JmsRecordCodec.encode(JmsMessageData.builder().build());
        assertThat(r.timestamp()).isNull();
        assertThat(JmsRecordCodec.decode(r).timestamp()).isZero();
    }

    @Test
    void shouldReadPlainKafkaRecordAsBytesMessageWithDefaults() {
        JmsMessageData d = JmsRecordCodec.decode(record(ascii("customer-7"), new byte[] {1, 2},
                new RecordHeader("traceparent", ascii("00-abc"))));
        assertThat(d.bodyType()).isEqualTo(BodyType.BYTES);
        assertThat(d.body()).containsExactly(1, 2);
        assertThat(d.groupId()).isEqualTo("customer-7");
        assertThat(d.timestamp()).isEqualTo(1_000L);
        assertThat(d.deliveryTime()).isEqualTo(1_000L);
        assertThat(d.properties()).isEmpty();
        assertThat(d.messageId()).isNull();
        assertThat(d.destination()).isNull();
    }

    @Test
    void shouldReadTextMarkerAsTextBody() {
        JmsMessageData d = JmsRecordCodec.decode(record(null, "hello".getBytes(StandardCharsets.UTF_8),
                new RecordHeader("jms.body.type", ascii("text"))));
        assertThat(d.bodyType()).isEqualTo(BodyType.TEXT);
        assertThat(BodyCodec.decodeText(d.body())).isEqualTo("hello");
    }

    @Test
    void shouldDecodeBinaryKeyLeniently() {
        JmsMessageData d = JmsRecordCodec.decode(record(new byte[] {'a', (byte) 0xFF}, null));
        assertThat(d.groupId()).isEqualTo("a\ufffd");
    }

    @Test
    void shouldIgnoreUnknownJmsHeadersFromNewerWriters() {
        JmsMessageData d = JmsRecordCodec.decode(record(null, null, new RecordHeader("jms.future", new byte[] {9})));
        assertThat(d.bodyType()).isEqualTo(BodyType.BYTES);
    }

    @Test
    void shouldRoundTripCorrelationIdBytes() {
        JmsMessageData data = JmsMessageData.builder().correlationIdBytes(new byte[] {0, (byte) 0xFF}).build();
        JmsRecord r = JmsRecordCodec.encode(data);
        assertThat(r.lastHeader("jms.correlation.id.bytes")).containsExactly(0, 0xFF);
        assertThat(r.lastHeader("jms.correlation.id")).isNull();
        assertThat(JmsRecordCodec.decode(r).correlationIdBytes()).containsExactly(0, 0xFF);
        assertThat(JmsRecordCodec.decode(r).correlationId()).isNull();
    }

    @Test
    void shouldConvertToProducerRecordAndFromConsumerRecord() {
        JmsRecord r = JmsRecordCodec.encode(everything());
        ProducerRecord<byte[], byte[]> pr = r.toProducerRecord("orders", 2);
        assertThat(pr.partition()).isEqualTo(2);
        assertThat(pr.timestamp()).isEqualTo(1_700_000_000_000L);
        RecordHeaders headers = new RecordHeaders(pr.headers().toArray());
        ConsumerRecord<byte[], byte[]> cr = new ConsumerRecord<>("orders", 2, 10L, pr.timestamp(),
                TimestampType.CREATE_TIME, 0, 0, pr.key(), pr.value(), headers, Optional.empty());
        assertThat(JmsRecordCodec.decode(JmsRecord.of(cr))).isEqualTo(everything());
    }

    @Test
    void shouldRefuseToEncodeInvalidValues() {
        assertThatThrownBy(() -> JmsRecordCodec.encode(JmsMessageData.builder().priority(10).build()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("priority");
        assertThatThrownBy(() -> JmsRecordCodec.encode(JmsMessageData.builder().deliveryMode(3).build()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("delivery mode");
        assertThatThrownBy(() -> JmsRecordCodec.encode(JmsMessageData.builder().property("a-b", 1).build()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("a-b");
        assertThatThrownBy(() -> JmsRecordCodec.encode(JmsMessageData.builder().property("JMSXGroupID", "g").build()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("record key");
        assertThatThrownBy(() -> JmsRecordCodec.encode(JmsMessageData.builder().property("c", 'c').build()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    private static JmsRecordFormatException decodeFailure(Header... headers) {
        try {
            JmsRecordCodec.decode(record(null, null, headers));
        } catch (JmsRecordFormatException e) {
            return e;
        }
        throw new AssertionError("expected a JmsRecordFormatException");
    }

    @Test
    void shouldNameHeaderAndOffsetForOutOfRangePriority() {
        JmsRecordFormatException e = decodeFailure(new RecordHeader("jms.priority", new byte[] {10}));
        assertThat(e.field()).isEqualTo("jms.priority");
        assertThat(e.offset()).isZero();
        assertThat(e.getMessage()).isEqualTo(
                "Malformed JMS record: header 'jms.priority' at byte offset 0: value 10 is outside 0..9");
    }

    @Test
    void shouldNameHeaderAndOffsetForWrongLengthFixedHeaders() {
        JmsRecordFormatException e = decodeFailure(new RecordHeader("jms.delivery.mode", new byte[] {2, 0}));
        assertThat(e.field()).isEqualTo("jms.delivery.mode");
        assertThat(e.offset()).isEqualTo(1);
        e = decodeFailure(new RecordHeader("jms.expiration", new byte[] {0, 0, 0, 0}));
        assertThat(e.field()).isEqualTo("jms.expiration");
        assertThat(e.offset()).isZero();
        assertThat(e.getMessage()).contains("expected 8 byte(s)").contains("found 4");
        e = decodeFailure(new RecordHeader("jms.delivery.time", null));
        assertThat(e.field()).isEqualTo("jms.delivery.time");
        e = decodeFailure(new RecordHeader("jms.delivery.mode", new byte[] {0}));
        assertThat(e.getMessage()).contains("outside 1..2");
    }

    @Test
    void shouldReportUnknownBodyType() {
        JmsRecordFormatException e = decodeFailure(new RecordHeader("jms.body.type", ascii("xml")));
        assertThat(e.field()).isEqualTo("jms.body.type");
        assertThat(e.getMessage()).contains("unknown body type 'xml'");
    }

    @Test
    void shouldReportInvalidUtf8InStringHeaderWithOffset() {
        byte[] bad = {'a', 'b', 'c', (byte) 0x80};
        JmsRecordFormatException e = decodeFailure(new RecordHeader("jms.type", bad));
        assertThat(e.field()).isEqualTo("jms.type");
        assertThat(e.offset()).isEqualTo(3);
    }

    @Test
    void shouldRejectAValueOnABodylessMessageRecord() {
        JmsRecord r = record(null, new byte[] {1}, new RecordHeader("jms.body.type", ascii("message")));
        assertThatThrownBy(() -> JmsRecordCodec.decode(r))
                .isInstanceOfSatisfying(JmsRecordFormatException.class, e -> {
                    assertThat(e.field()).isEqualTo(JmsRecordFormatException.VALUE);
                    assertThat(e.getMessage()).contains("must be null");
                });
        JmsRecord ok = record(null, null, new RecordHeader("jms.body.type", ascii("message")));
        assertThat(JmsRecordCodec.decode(ok).bodyType()).isEqualTo(BodyType.MESSAGE);
    }

    @Test
    void shouldRejectDuplicatedHeader() {
        JmsRecordFormatException e = decodeFailure(new RecordHeader("jms.type", ascii("a")),
                new RecordHeader("jms.type", ascii("b")));
        assertThat(e.field()).isEqualTo("jms.type");
        assertThat(e.offset()).isEqualTo(JmsRecordFormatException.NO_OFFSET);
        assertThat(e.getMessage()).contains("more than once");
    }

    @Test
    void shouldRejectBothCorrelationIdForms() {
        JmsRecordFormatException e = decodeFailure(new RecordHeader("jms.correlation.id", ascii("a")),
                new RecordHeader("jms.correlation.id.bytes", ascii("b")));
        assertThat(e.field()).isEqualTo("jms.correlation.id.bytes");
        assertThat(e.getMessage()).contains("not both");
    }

    @Test
    void shouldRejectInvalidPropertyNamesAndGroupIdProperty() {
        JmsRecordFormatException e = decodeFailure(new RecordHeader("jms.prop.my-prop", new byte[] {0}));
        assertThat(e.field()).isEqualTo("jms.prop.my-prop");
        assertThat(e.getMessage()).contains("'my-prop'");
        e = decodeFailure(new RecordHeader("jms.prop.JMSXGroupID", new byte[] {0x09, 'g'}));
        assertThat(e.getMessage()).contains("record key");
        e = decodeFailure(new RecordHeader("jms.prop.", new byte[] {0}));
        assertThat(e.getMessage()).contains("null or empty");
    }

    @Test
    void shouldPropagatePropertyValueErrorsWithHeaderName() {
        JmsRecordFormatException e = decodeFailure(new RecordHeader("jms.prop.n", new byte[] {0x06, 1}));
        assertThat(e.field()).isEqualTo("jms.prop.n");
        assertThat(e.offset()).isEqualTo(1);
    }

    @Test
    void shouldRejectMalformedDestinationHeader() {
        JmsRecordFormatException e = decodeFailure(new RecordHeader("jms.destination", new byte[] {0x05, 'q'}));
        assertThat(e.field()).isEqualTo("jms.destination");
        assertThat(e.offset()).isZero();
    }
}
