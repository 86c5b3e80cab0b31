package dev.millrace.protocol.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

@Timeout(20)
class TypedValueCodecTest {

    static Stream<Arguments> propertyValuesAndBytes() {
        return Stream.of(
                Arguments.of(null, new byte[] {0x00}),
                Arguments.of(true, new byte[] {0x01, 0x01}),
                Arguments.of(false, new byte[] {0x01, 0x00}),
                Arguments.of((byte) -2, new byte[] {0x02, (byte) 0xFE}),
                Arguments.of((short) 0x1234, new byte[] {0x03, 0x12, 0x34}),
                Arguments.of(7, new byte[] {0x05, 0, 0, 0, 7}),
                Arguments.of(-1L, new byte[] {0x06, -1, -1, -1, -1, -1, -1, -1, -1}),
                Arguments.of(1.0f, new byte[] {0x07, 0x3F, (byte) 0x80, 0, 0}),
                Arguments.of(-2.0d, new byte[] {0x08, (byte) 0xC0, 0, 0, 0, 0, 0, 0, 0}),
                Arguments.of("red", new byte[] {0x09, 0x72, 0x65, 0x64}),
                Arguments.of("", new byte[] {0x09}),
                Arguments.of("\u00e9", new byte[] {0x09, (byte) 0xC3, (byte) 0xA9}));
    }

    @ParameterizedTest
    @MethodSource("propertyValuesAndBytes")
    void shouldEncodePropertyInDocumentedHeaderForm(Object value, byte[] expected) {
        assertThat(TypedValueCodec.encodeProperty(value)).containsExactly(expected);
        assertThat(TypedValueCodec.decodeProperty("jms.prop.p", expected)).isEqualTo(value);
    }

    @Test
    void shouldRoundTripSpecialFloatingPointBitPatterns() {
        for (double d : new double[] {Double.NaN, Double.NEGATIVE_INFINITY, -0.0d, Double.MIN_VALUE}) {
            Object back = TypedValueCodec.decodeProperty("jms.prop.d", TypedValueCodec.encodeProperty(d));
            assertThat(Double.doubleToRawLongBits((Double) back)).isEqualTo(Double.doubleToRawLongBits(d));
        }
        Object nan = TypedValueCodec.decodeProperty("jms.prop.f", TypedValueCodec.encodeProperty(Float.NaN));
        assertThat((Float) nan).isNaN();
    }

    @Test
    void shouldRefuseNonPropertyTypesWhenEncoding() {
        assertThatThrownBy(() -> TypedValueCodec.encodeProperty('c')).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> TypedValueCodec.encodeProperty(new byte[1]))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> TypedValueCodec.encodeProperty(new Object()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldNameHeaderAndOffsetWhenIntPropertyIsTruncated() {
        assertThatThrownBy(() -> TypedValueCodec.decodeProperty("jms.prop.count", new byte[] {0x05, 0, 0}))
                .isInstanceOfSatisfying(JmsRecordFormatException.class, e -> {
                    assertThat(e.field()).isEqualTo("jms.prop.count");
                    assertThat(e.offset()).isEqualTo(1);
                    assertThat(e.getMessage()).contains("jms.prop.count").contains("byte offset 1")
                            .contains("expected 4 byte(s)");
                });
    }

    @Test
    void shouldRejectTrailingBytesAfterFixedSizeValue() {
        assertThatThrownBy(() -> TypedValueCodec.decodeProperty("jms.prop.b", new byte[] {0x02, 1, 2}))
                .isInstanceOfSatisfying(JmsRecordFormatException.class, e -> {
                    assertThat(e.offset()).isEqualTo(2);
                    assertThat(e.getMessage()).contains("trailing");
                });
    }

    @Test
    void shouldRejectEmptyHeaderValueAtOffsetZero() {
        assertThatThrownBy(() -> TypedValueCodec.decodeProperty("jms.prop.e", new byte[0]))
                .isInstanceOfSatisfying(JmsRecordFormatException.class, e -> assertThat(e.offset()).isZero());
        assertThatThrownBy(() -> TypedValueCodec.decodeProperty("jms.prop.e", null))
                .isInstanceOf(JmsRecordFormatException.class);
    }

    @Test
    void shouldRejectUnknownTag() {
        assertThatThrownBy(() -> TypedValueCodec.decodeProperty("jms.prop.x", new byte[] {0x7F}))
                .isInstanceOfSatisfying(JmsRecordFormatException.class, e -> {
                    assertThat(e.offset()).isZero();
                    assertThat(e.getMessage()).contains("unknown type tag 0x7F");
                });
    }

    @Test
    void shouldRejectCharAndBytesTagsForProperties() {
        assertThatThrownBy(() -> TypedValueCodec.decodeProperty("jms.prop.c", new byte[] {0x04, 0, 0x41}))
                .hasMessageContaining("char").hasMessageContaining("not allowed for a property");
        assertThatThrownBy(() -> TypedValueCodec.decodeProperty("jms.prop.c", new byte[] {0x0A, 0, 0, 0, 0}))
                .hasMessageContaining("byte[]");
    }

    @Test
    void shouldRejectBooleanOtherThanZeroOrOne() {
        assertThatThrownBy(() -> TypedValueCodec.decodeProperty("jms.prop.flag", new byte[] {0x01, 0x02}))
                .isInstanceOfSatisfying(JmsRecordFormatException.class, e -> {
                    assertThat(e.offset()).isEqualTo(1);
                    assertThat(e.getMessage()).contains("0x02");
                });
    }

    @Test
    void shouldReportOffsetOfInvalidUtf8InStringProperty() {
        byte[] bytes = {0x09, 0x61, 0x62, (byte) 0xFF, 0x63};
        assertThatThrownBy(() -> TypedValueCodec.decodeProperty("jms.prop.s", bytes))
                .isInstanceOfSatisfying(JmsRecordFormatException.class, e -> {
                    assertThat(e.field()).isEqualTo("jms.prop.s");
                    assertThat(e.offset()).isEqualTo(3);
                    assertThat(e.getMessage()).contains("UTF-8");
                });
    }
    @ParameterizedTest
    @MethodSource("propertyValuesAndBytes")
    void shouldReadPropertyPrimitivesAsDecodePropertyDoes(Object value, byte[] bytes) {
        byte tag = TypedValueCodec.propertyTag("jms.prop.p", bytes);
        assertThat(tag).isEqualTo(bytes[0]);
        if (value instanceof Boolean) {
            assertThat(TypedValueCodec.booleanPropertyValue(bytes)).isEqualTo(value);
        } else if (value instanceof Float || value instanceof Double) {
            assertThat(TypedValueCodec.approximatePropertyValue(bytes)).isEqualTo(((Number) value).doubleValue());
        } else if (value instanceof Number) {
            assertThat(TypedValueCodec.exactPropertyValue(bytes)).isEqualTo(((Number) value).longValue());
        }
    }

    @Test
    void shouldCheckPropertyLengthsAndTagsWithoutDecoding() {
        assertThatThrownBy(() -> TypedValueCodec.propertyTag("jms.prop.p", new byte[0]))
                .isInstanceOf(JmsRecordFormatException.class).hasMessageContaining("jms.prop.p");
        assertThatThrownBy(() -> TypedValueCodec.propertyTag("jms.prop.p", new byte[] {0x05, 0, 0, 0}))
                .isInstanceOf(JmsRecordFormatException.class).hasMessageContaining("4 byte(s), found 3");
        assertThatThrownBy(() -> TypedValueCodec.propertyTag("jms.prop.p", new byte[] {0x01, 0x02}))
                .isInstanceOf(JmsRecordFormatException.class).hasMessageContaining("0x02");
        assertThatThrownBy(() -> TypedValueCodec.propertyTag("jms.prop.p", new byte[] {0x0A, 0, 0, 0, 0}))
                .isInstanceOf(JmsRecordFormatException.class).hasMessageContaining("not allowed for a property");
        assertThatThrownBy(() -> TypedValueCodec.propertyTag("jms.prop.p", new byte[] {0x33}))
                .isInstanceOf(JmsRecordFormatException.class).hasMessageContaining("unknown type tag 0x33");
        assertThat(TypedValueCodec.exactPropertyValue(new byte[] {0x03, (byte) 0xFF, (byte) 0xFE})).isEqualTo(-2);
        assertThat(TypedValueCodec.exactPropertyValue(TypedValueCodec.encodeProperty(Long.MIN_VALUE)))
                .isEqualTo(Long.MIN_VALUE);
    }
}
