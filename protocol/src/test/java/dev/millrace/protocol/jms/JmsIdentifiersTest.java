package dev.millrace.protocol.jms;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

@Timeout(20)
class JmsIdentifiersTest {

    @ParameterizedTest
    @ValueSource(strings = {"a", "_x", "$y", "JMSXGroupID", "JMS_millrace_x", "\u00e9t\u00e9", "a1", "Nulls", "ISO"})
    void shouldAcceptIdentifiers(String name) {
        assertThat(JmsIdentifiers.invalidPropertyNameReason(name)).isNull();
    }

    @ParameterizedTest
    @ValueSource(strings = {"1a", "a-b", "a b", "a.b", "-", "a\u0000b"})
    void shouldRefuseNonIdentifiers(String name) {
        assertThat(JmsIdentifiers.invalidPropertyNameReason(name)).isNotNull();
    }

    @ParameterizedTest
    @ValueSource(strings = {"NULL", "TRUE", "FALSE", "NOT", "AND", "OR", "BETWEEN", "LIKE", "IN", "IS", "ESCAPE",
        "null", "And", "escape"})
    void shouldRefuseSelectorWordsInAnyCase(String name) {
        assertThat(JmsIdentifiers.invalidPropertyNameReason(name)).contains("reserved");
    }

    @Test
    void shouldRefuseNullAndEmpty() {
        assertThat(JmsIdentifiers.invalidPropertyNameReason(null)).contains("null or empty");
        assertThat(JmsIdentifiers.invalidPropertyNameReason("")).contains("null or empty");
    }
}
