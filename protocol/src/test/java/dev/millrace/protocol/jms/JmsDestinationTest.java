package dev.millrace.protocol.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

@Timeout(20)
class JmsDestinationTest {

    @Test
    void shouldEncodeTypeByteThenAsciiName() {
        assertThat(new JmsDestination(DestinationType.QUEUE, "q.1").encode()).containsExactly(0x01, 'q', '.', '1');
        assertThat(new JmsDestination(DestinationType.TOPIC, "t").encode()).containsExactly(0x02, 't');
        assertThat(new JmsDestination(DestinationType.TEMPORARY_QUEUE, "t").encode()).containsExactly(0x03, 't');
        assertThat(new JmsDestination(DestinationType.TEMPORARY_TOPIC, "t").encode()).containsExactly(0x04, 't');
    }

    @ParameterizedTest
    @EnumSource(DestinationType.class)
    void shouldRoundTripEveryType(DestinationType type) {
        JmsDestination d = new JmsDestination(type, "orders_EU-1");
        assertThat(JmsDestination.decode("jms.reply.to", d.encode())).isEqualTo(d);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", ".", "..", "a/b", "sp ace", "caf\u00e9"})
    void shouldRefuseNamesKafkaCannotUseAsTopics(String name) {
        assertThat(JmsDestination.invalidNameReason(name)).isNotNull();
        assertThatThrownBy(() -> new JmsDestination(DestinationType.QUEUE, name))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldRefuseOverlongNameAndNullName() {
        assertThat(JmsDestination.invalidNameReason("x".repeat(249))).isNull();
        assertThat(JmsDestination.invalidNameReason("x".repeat(250))).contains("250").contains("249");
        assertThat(JmsDestination.invalidNameReason(null)).contains("null or empty");
    }

    @Test
    void shouldNameInvalidCharacterAndIndex() {
        assertThat(JmsDestination.invalidNameReason("ab/c")).contains("'/'").contains("index 2");
    }

    @Test
    void shouldRejectUnknownTypeByteWithHeaderAndOffset() {
        assertThatThrownBy(() -> JmsDestination.decode("jms.destination", new byte[] {0x09, 'q'}))
                .isInstanceOfSatisfying(JmsRecordFormatException.class, e -> {
                    assertThat(e.field()).isEqualTo("jms.destination");
                    assertThat(e.offset()).isZero();
                    assertThat(e.getMessage()).contains("unknown destination type 0x09");
                });
    }

    @Test
    void shouldRejectEmptyOrInvalidNameAtOffsetOne() {
        assertThatThrownBy(() -> JmsDestination.decode("jms.reply.to", new byte[] {0x01}))
                .isInstanceOfSatisfying(JmsRecordFormatException.class, e -> assertThat(e.offset()).isEqualTo(1));
        assertThatThrownBy(() -> JmsDestination.decode("jms.reply.to", new byte[] {0x01, 'a', ' '}))
                .isInstanceOfSatisfying(JmsRecordFormatException.class, e -> assertThat(e.offset()).isEqualTo(1));
        assertThatThrownBy(() -> JmsDestination.decode("jms.reply.to", new byte[0]))
                .isInstanceOfSatisfying(JmsRecordFormatException.class, e -> assertThat(e.offset()).isZero());
    }
}
