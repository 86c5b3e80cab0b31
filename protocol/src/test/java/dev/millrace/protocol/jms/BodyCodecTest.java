package dev.millrace.protocol.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(20)
class BodyCodecTest {

    @Test
    void shouldEncodeMapInDocumentedLayout() {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("a", 'Z');
        map.put("bb", "hi");
        byte[] expected = {
            0, 0, 0, 2,
            0, 0, 0, 1, 'a', 0x04, 0x00, 'Z',
            0, 0, 0, 2, 'b', 'b', 0x09, 0, 0, 0, 2, 'h', 'i'};
        assertThat(BodyCodec.encodeMap(map)).containsExactly(expected);
    }

    @Test
    void shouldRoundTripMapWithEveryValueType() {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("bool", true);
        map.put("byte", (byte) 1);
        map.put("short", (short) 2);
        map.put("char", '\u20ac');
        map.put("int", 3);
        map.put("long", 4L);
        map.put("float", 5.5f);
        map.put("double", 6.25d);
        map.put("string", "s\u00fc");
        map.put("bytes", new byte[] {1, 2, 3});
        map.put("null", null);
        Map<String, Object> back = BodyCodec.decodeMap(BodyCodec.encodeMap(map));
        assertThat(back.keySet()).containsExactlyElementsOf(map.keySet());
        assertThat(back).containsEntry("char", '\u20ac').containsEntry("null", null).containsEntry("float", 5.5f);
        assertThat((byte[]) back.get("bytes")).containsExactly(1, 2, 3);
        back.remove("bytes");
        map.remove("bytes");
        assertThat(back).isEqualTo(map);
    }

    @Test
    void shouldEncodeStreamInDocumentedLayoutAndRoundTrip() {
        List<Object> values = Arrays.asList(null, (short) 258, new byte[0], "x", 1.5d, 'q', (byte) 9, true, 3, 4L, 2f);
        byte[] encoded = BodyCodec.encodeStream(values);
        assertThat(Arrays.copyOfRange(encoded, 0, 8)).containsExactly(0, 0, 0, 11, 0x00, 0x03, 0x01, 0x02);
        List<Object> back = BodyCodec.decodeStream(encoded);
        assertThat(back).hasSize(11);
        assertThat((byte[]) back.get(2)).isEmpty();
        back.set(2, null);
        List<Object> expected = Arrays.asList(null, (short) 258, null, "x", 1.5d, 'q', (byte) 9, true, 3, 4L, 2f);
        assertThat(back).isEqualTo(expected);
    }

    @Test
    void shouldTreatNullValueAsEmptyMapAndStream() {
        assertThat(BodyCodec.decodeMap(null)).isEmpty();
        assertThat(BodyCodec.decodeStream(null)).isEmpty();
    }

    @Test
    void shouldRejectEntryCountLargerThanTheBytesCanHold() {
        byte[] bytes = {0x7F, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x00};
        assertThatThrownBy(() -> BodyCodec.decodeStream(bytes))
                .isInstanceOfSatisfying(JmsRecordFormatException.class, e -> {
                    assertThat(e.field()).isEqualTo(JmsRecordFormatException.VALUE);
                    assertThat(e.offset()).isZero();
                    assertThat(e.getMessage()).contains("entry count 2147483647");
                });
    }

    @Test
    void shouldReportOffsetOfTruncatedStringInMap() {
        byte[] bytes = {0, 0, 0, 1, 0, 0, 0, 1, 'k', 0x09, 0, 0, 0, 5, 'a', 'b'};
        assertThatThrownBy(() -> BodyCodec.decodeMap(bytes))
                .isInstanceOfSatisfying(JmsRecordFormatException.class, e -> {
                    assertThat(e.offset()).isEqualTo(10);
                    assertThat(e.getMessage()).contains("String length 5 exceeds the 2 remaining byte(s)");
                });
    }

    @Test
    void shouldRejectNegativeLength() {
        byte[] bytes = {0, 0, 0, 1, 0x0A, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF};
        assertThatThrownBy(() -> BodyCodec.decodeStream(bytes))
                .isInstanceOfSatisfying(JmsRecordFormatException.class, e -> {
                    assertThat(e.offset()).isEqualTo(5);
                    assertThat(e.getMessage()).contains("negative byte[] length -1");
                });
    }

    @Test
    void shouldRejectTrailingBytesAfterLastEntry() {
        byte[] bytes = {0, 0, 0, 1, 0x02, 7, 0x55};
        assertThatThrownBy(() -> BodyCodec.decodeStream(bytes))
                .isInstanceOfSatisfying(JmsRecordFormatException.class, e -> assertThat(e.offset()).isEqualTo(6));
    }

    @Test
    void shouldRejectUnknownTagInStreamAtItsOffset() {
        byte[] bytes = {0, 0, 0, 2, 0x02, 7, 0x33};
        assertThatThrownBy(() -> BodyCodec.decodeStream(bytes))
                .isInstanceOfSatisfying(JmsRecordFormatException.class, e -> {
                    assertThat(e.offset()).isEqualTo(6);
                    assertThat(e.getMessage()).contains("unknown type tag 0x33");
                });
    }

    @Test
    void shouldRejectDuplicateAndEmptyMapNames() {
        byte[] duplicate = {0, 0, 0, 2, 0, 0, 0, 1, 'k', 0x00, 0, 0, 0, 1, 'k', 0x00};
        assertThatThrownBy(() -> BodyCodec.decodeMap(duplicate))
                .isInstanceOfSatisfying(JmsRecordFormatException.class, e -> {
                    assertThat(e.offset()).isEqualTo(10);
                    assertThat(e.getMessage()).contains("duplicate map entry name 'k'");
                });
        byte[] empty = {0, 0, 0, 1, 0, 0, 0, 0, 0x00};
        assertThatThrownBy(() -> BodyCodec.decodeMap(empty)).hasMessageContaining("empty map entry name");
        assertThatThrownBy(() -> BodyCodec.encodeMap(Map.of("", 1))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldRefuseNonBodyValuesWhenEncoding() {
        assertThatThrownBy(() -> BodyCodec.encodeStream(List.of(new Object())))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldDecodeTextStrictlyAndKeepNullAsNull() {
        String text = "gr\u00fc\u00dfe \ud83d\ude00";
        assertThat(BodyCodec.encodeText(text)).hasSize(12);
        assertThat(BodyCodec.decodeText(BodyCodec.encodeText(text))).isEqualTo(text);
        assertThat(BodyCodec.encodeText(null)).isNull();
        assertThat(BodyCodec.decodeText(null)).isNull();
        assertThatThrownBy(() -> BodyCodec.decodeText(new byte[] {'o', 'k', (byte) 0xC3}))
                .isInstanceOfSatisfying(JmsRecordFormatException.class, e -> {
                    assertThat(e.field()).isEqualTo(JmsRecordFormatException.VALUE);
                    assertThat(e.offset()).isEqualTo(2);
                });
    }
}
