package dev.millrace.protocol.selector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.protocol.jms.BodyType;
import dev.millrace.protocol.jms.DestinationType;
import dev.millrace.protocol.jms.JmsDestination;
import dev.millrace.protocol.jms.JmsMessageData;
import dev.millrace.protocol.jms.JmsRecord;
import dev.millrace.protocol.jms.JmsRecordCodec;
import dev.millrace.protocol.jms.JmsRecordFormatException;

/** The record adapter over headers written by {@link JmsRecordCodec}. */
@Timeout(20)
class RecordSelectorContextTest {

    private static final long TIMESTAMP = 1_700_000_000_000L;

    private static JmsRecord everything() {
        return JmsRecordCodec.encode(JmsMessageData.builder()
                .body(BodyType.TEXT, "hi".getBytes(StandardCharsets.UTF_8))
                .messageId("ID:abc")
                .correlationId("corr")
                .type("order")
                .deliveryMode(JmsMessageData.NON_PERSISTENT)
                .priority(9)
                .timestamp(TIMESTAMP)
                .expiration(TIMESTAMP + 60_000)
                .deliveryTime(TIMESTAMP + 5_000)
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
                .property("city", "Z\u00fcrich \uD83D\uDE00")
                .property("nothing", null)
                .property("JMSXGroupSeq", 3)
                .property("neg", -200)
                .property("big", Long.MIN_VALUE)
                .build());
    }

    private static Headers headersOf(JmsRecord record) {
        return new RecordHeaders(record.headers().toArray(new Header[0]));
    }

    private RecordSelectorContext contextOf(JmsRecord record, int deliveryCount) {
        long ts = record.timestamp() == null ? 0 : record.timestamp();
        return reset(new RecordSelectorContext(), headersOf(record), record.key(), ts, deliveryCount);
    }

    /** Points {@code ctx} at the headers; {@link EncodedHeadersSelectorContextTest} passes them encoded. */
    RecordSelectorContext reset(RecordSelectorContext ctx, Headers headers, byte[] key, long timestampMs,
                                int deliveryCount) {
        return ctx.reset(headers, key, timestampMs, deliveryCount);
    }

    private static boolean matches(String selector, RecordSelectorContext ctx) {
        return Selector.compile(selector).matches(ctx);
    }

    @Test
    void shouldReadEveryPropertyTypeWrittenByTheCodec() {
        RecordSelectorContext ctx = contextOf(everything(), 3);
        for (String selector : List.of("b", "b = TRUE", "y = 1", "s = 2", "i = 3", "l = 4", "f = 5.5", "d = 6.5",
                "str = 'seven'", "str <> 'eight'", "str LIKE 'sev%'", "str IN ('six', 'seven')",
                "city = 'Z\u00fcrich \uD83D\uDE00'", "city LIKE 'Z_rich _'", "nothing IS NULL", "absent IS NULL",
                "JMSXGroupSeq = 3", "y + s * i = 7", "l / s = 2", "f + d = 12", "neg = -200", "neg < -199.5",
                "big = -9223372036854775808", "str IS NOT NULL", "NOT (str = 'x')")) {
            assertThat(matches(selector, ctx)).as(selector).isTrue();
        }
        for (String selector : List.of("b = FALSE", "i = 4", "str = 'seve'", "str = 'sevenx'", "i = '3'",
                "str > 1", "city = 'Zurich \uD83D\uDE00'", "nothing = 1", "absent = 1", "neg > 0")) {
            assertThat(matches(selector, ctx)).as(selector).isFalse();
        }
    }

    @Test
    void shouldReadTheSelectableHeaderFields() {
        RecordSelectorContext ctx = contextOf(everything(), 3);
        for (String selector : List.of("JMSPriority = 9", "JMSDeliveryMode = 'NON_PERSISTENT'",
                "JMSDeliveryMode <> 'PERSISTENT'", "JMSType = 'order'", "JMSMessageID = 'ID:abc'",
                "JMSMessageID LIKE 'ID:%'", "JMSCorrelationID = 'corr'", "JMSTimestamp = 1700000000000",
                "JMSXGroupID = 'group-\u00e9'", "JMSXGroupID LIKE 'group-_'", "JMSXDeliveryCount = 3",
                "JMSDeliveryMode IN ('NON_PERSISTENT')", "JMSPriority BETWEEN 5 AND 9")) {
            assertThat(matches(selector, ctx)).as(selector).isTrue();
        }
    }

    @Test
    void shouldNeverReadTheNonSelectableHeaderFieldsEvenWhenSet() {
        RecordSelectorContext ctx = contextOf(everything(), 3);
        assertThat(matches("JMSExpiration IS NULL AND JMSDeliveryTime IS NULL AND JMSDestination IS NULL "
                + "AND JMSReplyTo IS NULL AND JMSRedelivered IS NULL", ctx)).isTrue();
        assertThat(ctx.get("JMSExpiration")).isNull();
    }

    @Test
    void shouldUseTheCodecDefaultsForAbsentHeaders() {
        JmsRecord bare = JmsRecordCodec.encode(JmsMessageData.builder().build());
        RecordSelectorContext ctx = contextOf(bare, 0);
        assertThat(bare.headers()).extracting(Header::key).doesNotContain("jms.priority", "jms.delivery.mode");
        for (String selector : List.of("JMSPriority = 4", "JMSDeliveryMode = 'PERSISTENT'", "JMSType IS NULL",
                "JMSMessageID IS NULL", "JMSCorrelationID IS NULL", "JMSXGroupID IS NULL",
                "JMSXDeliveryCount IS NULL", "JMSTimestamp = 0")) {
            assertThat(matches(selector, ctx)).as(selector).isTrue();
        }
        assertThat(Selector.compile("JMSType = 'x'").evaluate(ctx)).isNull();
    }

    @Test
    void shouldTreatACorrelationIdSetAsBytesAsNull() {
        JmsRecord record = JmsRecordCodec.encode(JmsMessageData.builder().correlationIdBytes(new byte[] {1, 2})
                .build());
        assertThat(matches("JMSCorrelationID IS NULL", contextOf(record, 1))).isTrue();
    }

    @Test
    void shouldReadPropertiesAKafkaProducerSetByHand() {
        Headers headers = new RecordHeaders()
                .add("jms.prop.count", new byte[] {0x05, 0, 0, 0, 7})
                .add("jms.prop.color", new byte[] {0x09, 'r', 'e', 'd'})
                .add("trace-id", new byte[] {1, 2, 3});
        RecordSelectorContext ctx = reset(new RecordSelectorContext(), headers, null, 5L, 1);
        assertThat(matches("count = 7 AND color = 'red' AND JMSTimestamp = 5", ctx)).isTrue();
    }

    @Test
    void shouldAgreeWithTheCodecOnBoxedValues() {
        JmsRecord record = everything();
        JmsMessageData data = JmsRecordCodec.decode(record);
        RecordSelectorContext ctx = contextOf(record, 2);
        data.properties().forEach((name, value) -> assertThat(ctx.get(name)).as(name).isEqualTo(value));
        assertThat(ctx.get("JMSPriority")).isEqualTo(9);
        assertThat(ctx.get("JMSTimestamp")).isEqualTo(TIMESTAMP);
        assertThat(ctx.get("JMSDeliveryMode")).isEqualTo("NON_PERSISTENT");
        assertThat(ctx.get("JMSXGroupID")).isEqualTo("group-\u00e9");
        assertThat(ctx.get("JMSXDeliveryCount")).isEqualTo(2);
        assertThat(ctx.get("absent")).isNull();
    }

    @Test
    void shouldReadHeaderArraysAndJmsRecordsAlike() {
        JmsRecord record = everything();
        String selector = "i = 3 AND str = 'seven' AND JMSPriority = 9 AND JMSXGroupID = 'group-\u00e9'";
        RecordSelectorContext ctx = new RecordSelectorContext();
        assertThat(matches(selector, ctx.reset(record.headers().toArray(new Header[0]), record.key(), TIMESTAMP, 1)))
                .isTrue();
        assertThat(matches(selector, ctx.reset(record, 1))).isTrue();
        assertThat(matches("JMSTimestamp = 1700000000000", ctx)).isTrue();
    }

    @Test
    void shouldForgetThePreviousRecordOnReset() {
        RecordSelectorContext ctx = new RecordSelectorContext();
        Selector selector = Selector.compile("i = 3 AND str = 'seven'");
        assertThat(selector.matches(ctx.reset(everything(), 1))).isTrue();
        JmsRecord other = JmsRecordCodec.encode(JmsMessageData.builder().property("i", 4).property("str", "seven")
                .build());
        assertThat(selector.matches(ctx.reset(other, 1))).isFalse();
        assertThat(selector.matches(ctx.reset(everything(), 1))).isTrue();
    }

    @Test
    void shouldReportAMalformedPropertyTheSelectorReads() {
        Headers headers = new RecordHeaders()
                .add("jms.prop.count", new byte[] {0x05, 0, 7}) // an int needs 4 bytes
                .add("jms.prop.kind", new byte[] {0x04, 0, 'x'}) // char: not a property type
                .add("jms.prop.ok", new byte[] {0x05, 0, 0, 0, 1});
        RecordSelectorContext ctx = reset(new RecordSelectorContext(), headers, null, 0, 1);
        assertThatThrownBy(() -> matches("count = 7", ctx)).isInstanceOf(JmsRecordFormatException.class)
                .hasMessageContaining("jms.prop.count");
        assertThatThrownBy(() -> matches("kind IS NULL", ctx)).isInstanceOf(JmsRecordFormatException.class)
                .hasMessageContaining("jms.prop.kind");
        assertThat(matches("ok = 1", ctx)).as("malformed headers the selector does not read do not matter")
                .isTrue();
        Headers badPriority = new RecordHeaders().add("jms.priority", new byte[] {12});
        assertThatThrownBy(() -> matches("JMSPriority > 1", reset(ctx, badPriority, null, 0, 1)))
                .isInstanceOf(JmsRecordFormatException.class).hasMessageContaining("jms.priority");
    }

    @Test
    void shouldNotDecodeAStringToCompareItWithALiteral() {
        // invalid UTF-8 is only found by decoding; equality with a literal compares bytes
        Headers headers = new RecordHeaders().add(new RecordHeader("jms.prop.s", new byte[] {0x09, (byte) 0xC3}));
        RecordSelectorContext ctx = reset(new RecordSelectorContext(), headers, null, 0, 1);
        assertThat(matches("s = 'x'", ctx)).isFalse();
        assertThatThrownBy(() -> matches("s LIKE 'x%'", ctx)).isInstanceOf(JmsRecordFormatException.class);
    }

    @Test
    void shouldAllocateNothingPerMessageOnTheCommonPaths() {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long thread = Thread.currentThread().getId();
        JmsRecord record = everything();
        Headers headers = headersOf(record);
        Header[] array = record.headers().toArray(new Header[0]);
        byte[] key = record.key();
        Selector selector = Selector.compile("JMSPriority > 4 AND i = 3 AND l >= 4 AND str = 'seven' AND d > 6 "
                + "AND JMSDeliveryMode = 'NON_PERSISTENT' AND str IN ('six', 'seven') AND b AND i BETWEEN 1 AND 5 "
                + "AND JMSType <> 'x' AND absent IS NULL AND y + s * i = 7");
        RecordSelectorContext ctx = new RecordSelectorContext();
        int iterations = 20_000;
        for (int i = 0; i < iterations; i++) { // warm up (and fill the identifier-to-header-key cache)
            assertThat(selector.matches(reset(ctx, headers, key, TIMESTAMP, 1))).isTrue();
        }
        long before = threads.getThreadAllocatedBytes(thread);
        int matched = 0;
        for (int i = 0; i < iterations; i++) {
            if (selector.matches(reset(ctx, headers, key, TIMESTAMP, 1))) {
                matched++;
            }
            if (selector.matches(ctx.reset(array, key, TIMESTAMP, 1))) {
                matched++;
            }
        }
        long allocated = threads.getThreadAllocatedBytes(thread) - before;
        assertThat(matched).isEqualTo(2 * iterations);
        // one 16-byte object per evaluation would be 640,000 bytes; allow for the measurement's own noise
        assertThat(allocated).as("bytes allocated by %d evaluations", 2 * iterations).isLessThan(4_096);
    }
}
