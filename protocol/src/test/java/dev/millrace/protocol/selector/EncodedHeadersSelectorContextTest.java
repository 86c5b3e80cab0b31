package dev.millrace.protocol.selector;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.IdentityHashMap;
import java.util.Map;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.internals.ByteUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.protocol.jms.JmsRecordFormatException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Every {@link RecordSelectorContextTest} case again, with the headers given still encoded as a v2 record holds them
 * (behind a few bytes of something else, so positions are absolute), plus what only the encoded form can get wrong.
 */
@Timeout(60)
class EncodedHeadersSelectorContextTest extends RecordSelectorContextTest {

    private static final int LEAD = 3;

    /** Encoded once per headers object, so that the allocation test measures the context, not the encoding. */
    private final Map<Headers, Encoded> encoded = new IdentityHashMap<>();

    private record Encoded(ByteBuffer buffer, int count) {
    }

    @Override
    RecordSelectorContext reset(RecordSelectorContext ctx, Headers headers, byte[] key, long timestampMs,
                                int deliveryCount) {
        Encoded e = encoded.computeIfAbsent(headers, h -> new Encoded(encode(h), h.toArray().length));
        return ctx.reset(e.buffer(), LEAD, e.count(), key, timestampMs, deliveryCount);
    }

    private static ByteBuffer encode(Headers headers) {
        ByteBuffer buffer = ByteBuffer.allocate(4096);
        buffer.put(new byte[] {9, 9, 9});
        for (Header h : headers) {
            byte[] k = h.key().getBytes(StandardCharsets.UTF_8);
            ByteUtils.writeVarint(k.length, buffer);
            buffer.put(k);
            if (h.value() == null) {
                ByteUtils.writeVarint(-1, buffer);
            } else {
                ByteUtils.writeVarint(h.value().length, buffer);
                buffer.put(h.value());
            }
        }
        buffer.put(new byte[] {7, 7});
        return buffer.flip();
    }

    @Test
    void shouldReadAHeaderWithANullValueAsEmptyAndTheLastOfRepeatedHeaders() {
        Headers headers = new RecordHeaders().add("jms.prop.n", null)
                .add("jms.prop.c", new byte[] {0x09, 'a'}).add("jms.prop.c", new byte[] {0x09, 'b'});
        RecordSelectorContext ctx = reset(new RecordSelectorContext(), headers, null, 0, 1);
        assertThat(Selector.compile("c = 'b'").matches(ctx)).isTrue();
        assertThatThrownBy(() -> Selector.compile("n IS NULL").matches(ctx))
                .as("an empty property value has no type tag").isInstanceOf(JmsRecordFormatException.class);
    }

    @Test
    void shouldReportHeadersThatRunPastTheBuffer() {
        ByteBuffer buffer = ByteBuffer.allocate(32);
        ByteUtils.writeVarint(10, buffer);
        buffer.put("jms.prop.c".getBytes(StandardCharsets.UTF_8));
        ByteUtils.writeVarint(20, buffer); // 20 value bytes promised, 2 present
        buffer.put(new byte[] {0x09, 'x'});
        buffer.flip();
        RecordSelectorContext ctx = new RecordSelectorContext().reset(buffer, 0, 1, null, 0, 1);
        assertThatThrownBy(() -> Selector.compile("c = 'x'").matches(ctx))
                .isInstanceOf(JmsRecordFormatException.class).hasMessageContaining("header 0 runs past");
        RecordSelectorContext twoHeaders = new RecordSelectorContext().reset(buffer, 0, 2, null, 0, 1);
        assertThatThrownBy(() -> Selector.compile("c = 'x'").matches(twoHeaders))
                .isInstanceOf(JmsRecordFormatException.class);
    }
}
