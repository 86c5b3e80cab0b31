package dev.millrace.jms.message;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Collections;
import java.util.Map;
import java.util.stream.Stream;

import jakarta.jms.JMSException;
import jakarta.jms.MessageFormatException;
import jakarta.jms.MessageNotWriteableException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

@Timeout(20)
class MillraceMapMessageTest {

    private final MillraceMapMessage m = new MillraceMapMessage();

    static Stream<Arguments> bodyTable() {
        return ConversionTable.cells(ConversionTable.BODY_TYPES).stream();
    }

    static void set(MillraceMapMessage m, String type, String name, Object v) throws JMSException {
        switch (type) {
            case "boolean": m.setBoolean(name, (Boolean) v); break;
            case "byte": m.setByte(name, (Byte) v); break;
            case "short": m.setShort(name, (Short) v); break;
            case "char": m.setChar(name, (Character) v); break;
            case "int": m.setInt(name, (Integer) v); break;
            case "long": m.setLong(name, (Long) v); break;
            case "float": m.setFloat(name, (Float) v); break;
            case "double": m.setDouble(name, (Double) v); break;
            case "String": m.setString(name, (String) v); break;
            default: m.setBytes(name, (byte[]) v); break;
        }
    }

    static Object get(MillraceMapMessage m, String type, String name) throws JMSException {
        switch (type) {
            case "boolean": return m.getBoolean(name);
            case "byte": return m.getByte(name);
            case "short": return m.getShort(name);
            case "char": return m.getChar(name);
            case "int": return m.getInt(name);
            case "long": return m.getLong(name);
            case "float": return m.getFloat(name);
            case "double": return m.getDouble(name);
            case "String": return m.getString(name);
            default: return m.getBytes(name);
        }
    }

    @ParameterizedTest(name = "{0} read as {1}")
    @MethodSource("bodyTable")
    void shouldFollowTheConversionTable(String written, String read, String expected) throws JMSException {
        set(m, written, "e", ConversionTable.SAMPLES.get(written));
        if (expected == null) {
            assertThatThrownBy(() -> get(m, read, "e")).isInstanceOf(MessageFormatException.class);
        } else {
            assertThat(ConversionTable.show(get(m, read, "e"))).isEqualTo(expected);
        }
    }

    @ParameterizedTest(name = "{0} via setObject read as {1}")
    @MethodSource("bodyTable")
    void shouldApplyTheTableToSetObject(String written, String read, String expected) throws JMSException {
        m.setObject("e", ConversionTable.SAMPLES.get(written));
        if (expected == null) {
            assertThatThrownBy(() -> get(m, read, "e")).isInstanceOf(MessageFormatException.class);
        } else {
            assertThat(ConversionTable.show(get(m, read, "e"))).isEqualTo(expected);
        }
    }

    @Test
    void shouldReadMissingEntriesAsValueOfNull() throws JMSException {
        assertThat(m.itemExists("x")).isFalse();
        assertThat(m.getString("x")).isNull();
        assertThat(m.getBytes("x")).isNull();
        assertThat(m.getObject("x")).isNull();
        assertThat(m.getBoolean("x")).isFalse();
        assertThatThrownBy(() -> m.getInt("x")).isInstanceOf(NumberFormatException.class);
        assertThatThrownBy(() -> m.getLong("x")).isInstanceOf(NumberFormatException.class);
        assertThatThrownBy(() -> m.getDouble("x")).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> m.getChar("x")).isInstanceOf(NullPointerException.class);
    }

    @Test
    void shouldRefuseNullOrEmptyNamesAndInvalidObjects() {
        assertThatThrownBy(() -> m.setInt(null, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> m.setString("", "x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> m.setObject("o", new Object())).isInstanceOf(MessageFormatException.class);
    }

    @Test
    void shouldCopyByteArraysInAndOut() throws JMSException {
        byte[] in = {1, 2, 3};
        m.setBytes("b", in);
        in[0] = 9;
        byte[] out = m.getBytes("b");
        out[1] = 9;
        assertThat(m.getBytes("b")).containsExactly(1, 2, 3);
        m.setBytes("part", new byte[] {1, 2, 3, 4}, 1, 2);
        assertThat(m.getBytes("part")).containsExactly(2, 3);
        assertThat((byte[]) m.getObject("part")).containsExactly(2, 3);
    }

    @Test
    void shouldEnumerateNamesAndClear() throws JMSException {
        m.setInt("a", 1);
        m.setString("b", null);
        assertThat(m.itemExists("b")).isTrue();
        assertThat(Collections.list(m.getMapNames())).containsExactlyInAnyOrder("a", "b");
        m.clearBody();
        assertThat(Collections.list(m.getMapNames())).isEmpty();
    }

    @Test
    void shouldBeReadOnlyOnReceiveUntilClearBody() throws JMSException {
        m.setInt("a", 1);
        m.onReceived();
        assertThatThrownBy(() -> m.setInt("b", 2)).isInstanceOf(MessageNotWriteableException.class);
        assertThatThrownBy(() -> m.setObject("b", 2)).isInstanceOf(MessageNotWriteableException.class);
        assertThatThrownBy(() -> m.setBytes("b", new byte[1], 0, 1)).isInstanceOf(MessageNotWriteableException.class);
        assertThat(m.getInt("a")).isEqualTo(1);
        m.clearBody();
        m.setInt("b", 2);
        assertThat(m.itemExists("a")).isFalse();
    }

    @Test
    void shouldReturnBodyAsMapAndTreatEmptyMapAsNoBody() throws JMSException {
        assertThat(m.getBody(String.class)).isNull();
        assertThat(m.isBodyAssignableTo(String.class)).isTrue();
        m.setInt("a", 1);
        m.setBytes("b", new byte[] {2});
        @SuppressWarnings("unchecked")
        Map<String, Object> body = m.getBody(Map.class);
        assertThat(body).containsEntry("a", 1).containsKey("b");
        body.put("c", 3);
        assertThat(m.itemExists("c")).isFalse();
        assertThat(m.getBody(Object.class)).isInstanceOf(Map.class);
        assertThat(m.isBodyAssignableTo(Map.class)).isTrue();
        assertThat(m.isBodyAssignableTo(String.class)).isFalse();
        assertThatThrownBy(() -> m.getBody(String.class)).isInstanceOf(MessageFormatException.class);
    }
}
