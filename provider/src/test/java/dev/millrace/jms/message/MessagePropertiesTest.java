package dev.millrace.jms.message;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;

import jakarta.jms.JMSException;
import jakarta.jms.MessageFormatException;
import jakarta.jms.MessageNotWriteableException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Jakarta Messaging 3.1 section 3.5: property names, types, the conversion table, read-only mode. */
@Timeout(20)
class MessagePropertiesTest {

    private final MillraceMessage message = new MillraceMessage();

    static Stream<Arguments> propertyTable() {
        return ConversionTable.cells(ConversionTable.PROPERTY_TYPES).stream();
    }

    private static void set(MillraceMessage m, String type, String name, Object v) throws JMSException {
        switch (type) {
            case "boolean": m.setBooleanProperty(name, (Boolean) v); break;
            case "byte": m.setByteProperty(name, (Byte) v); break;
            case "short": m.setShortProperty(name, (Short) v); break;
            case "int": m.setIntProperty(name, (Integer) v); break;
            case "long": m.setLongProperty(name, (Long) v); break;
            case "float": m.setFloatProperty(name, (Float) v); break;
            case "double": m.setDoubleProperty(name, (Double) v); break;
            default: m.setStringProperty(name, (String) v); break;
        }
    }

    static Object get(MillraceMessage m, String type, String name) throws JMSException {
        switch (type) {
            case "boolean": return m.getBooleanProperty(name);
            case "byte": return m.getByteProperty(name);
            case "short": return m.getShortProperty(name);
            case "int": return m.getIntProperty(name);
            case "long": return m.getLongProperty(name);
            case "float": return m.getFloatProperty(name);
            case "double": return m.getDoubleProperty(name);
            default: return m.getStringProperty(name);
        }
    }

    @ParameterizedTest(name = "{0} read as {1}")
    @MethodSource("propertyTable")
    void shouldFollowTheConversionTable(String written, String read, String expected) throws JMSException {
        set(message, written, "p", ConversionTable.SAMPLES.get(written));
        if (expected == null) {
            assertThatThrownBy(() -> get(message, read, "p")).isInstanceOf(MessageFormatException.class);
        } else {
            assertThat(ConversionTable.show(get(message, read, "p"))).isEqualTo(expected);
        }
    }

    @ParameterizedTest(name = "{0} via setObjectProperty read as {1}")
    @MethodSource("propertyTable")
    void shouldApplyTheSameTableToObjectProperties(String written, String read, String expected) throws JMSException {
        message.setObjectProperty("p", ConversionTable.SAMPLES.get(written));
        assertThat(message.getObjectProperty("p")).isEqualTo(ConversionTable.SAMPLES.get(written));
        if (expected == null) {
            assertThatThrownBy(() -> get(message, read, "p")).isInstanceOf(MessageFormatException.class);
        } else {
            assertThat(ConversionTable.show(get(message, read, "p"))).isEqualTo(expected);
        }
    }

    @Test
    void shouldReturnTheBoxedTypeThatWasSet() throws JMSException {
        message.setByteProperty("b", (byte) 1);
        message.setFloatProperty("f", 1f);
        assertThat(message.getObjectProperty("b")).isInstanceOf(Byte.class);
        assertThat(message.getObjectProperty("f")).isInstanceOf(Float.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"byte", "short", "int", "long"})
    void shouldThrowNumberFormatExceptionForUnparsableString(String type) throws JMSException {
        message.setStringProperty("p", "abc");
        assertThatThrownBy(() -> get(message, type, "p")).isInstanceOf(NumberFormatException.class);
    }

    @Test
    void shouldThrowNumberFormatExceptionForUnparsableFloatingString() throws JMSException {
        message.setStringProperty("p", "1.2.3");
        assertThatThrownBy(() -> message.getFloatProperty("p")).isInstanceOf(NumberFormatException.class);
        assertThatThrownBy(() -> message.getDoubleProperty("p")).isInstanceOf(NumberFormatException.class);
        message.setStringProperty("q", "300");
        assertThatThrownBy(() -> message.getByteProperty("q")).isInstanceOf(NumberFormatException.class);
    }

    @Test
    void shouldReadAbsentPropertyAsValueOfNull() throws JMSException {
        assertThat(message.propertyExists("missing")).isFalse();
        assertThat(message.getStringProperty("missing")).isNull();
        assertThat(message.getObjectProperty("missing")).isNull();
        assertThat(message.getBooleanProperty("missing")).isFalse();
        assertThatThrownBy(() -> message.getByteProperty("missing")).isInstanceOf(NumberFormatException.class);
        assertThatThrownBy(() -> message.getShortProperty("missing")).isInstanceOf(NumberFormatException.class);
        assertThatThrownBy(() -> message.getIntProperty("missing")).isInstanceOf(NumberFormatException.class);
        assertThatThrownBy(() -> message.getLongProperty("missing")).isInstanceOf(NumberFormatException.class);
        assertThatThrownBy(() -> message.getFloatProperty("missing")).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> message.getDoubleProperty("missing")).isInstanceOf(NullPointerException.class);
    }

    @Test
    void shouldKeepANullValuedPropertyThatReadsLikeAnAbsentOne() throws JMSException {
        message.setStringProperty("n", null);
        assertThat(message.propertyExists("n")).isTrue();
        assertThat(message.getStringProperty("n")).isNull();
        assertThatThrownBy(() -> message.getIntProperty("n")).isInstanceOf(NumberFormatException.class);
    }

    @Test
    void shouldRefuseObjectPropertiesOfOtherClasses() {
        assertThatThrownBy(() -> message.setObjectProperty("c", 'c')).isInstanceOf(MessageFormatException.class);
        assertThatThrownBy(() -> message.setObjectProperty("b", new byte[1]))
                .isInstanceOf(MessageFormatException.class);
        assertThatThrownBy(() -> message.setObjectProperty("o", List.of()))
                .isInstanceOf(MessageFormatException.class).hasMessageContaining("java.util");
        assertThat(message.propertyExists("c")).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"NULL", "TRUE", "FALSE", "NOT", "AND", "OR", "BETWEEN", "LIKE", "IN", "IS", "ESCAPE",
        "and", "1st", "a-b", "with space", "a.b"})
    void shouldRefuseNamesThatAreNotSelectorIdentifiers(String name) {
        assertThatThrownBy(() -> message.setIntProperty(name, 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(name);
        assertThatThrownBy(() -> message.setObjectProperty(name, "x")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldRefuseNullAndEmptyNames() {
        assertThatThrownBy(() -> message.setStringProperty(null, "x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> message.setBooleanProperty("", true)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldAcceptIdentifierNames() throws JMSException {
        message.setIntProperty("_under", 1);
        message.setIntProperty("$dollar", 2);
        message.setIntProperty("JMS_millrace_hint", 3);
        message.setIntProperty("Island", 4);
        assertThat(message.getIntProperty("Island")).isEqualTo(4);
    }

    @Test
    void shouldMakePropertiesReadOnlyOnReceiveUntilClearProperties() throws JMSException {
        message.setStringProperty("a", "1");
        message.onReceived();
        assertThatThrownBy(() -> message.setStringProperty("b", "2")).isInstanceOf(MessageNotWriteableException.class);
        assertThatThrownBy(() -> message.setObjectProperty("a", "3")).isInstanceOf(MessageNotWriteableException.class);
        assertThat(message.getStringProperty("a")).isEqualTo("1");
        message.setJMSType("headers stay writable");
        assertThat(message.getJMSType()).isEqualTo("headers stay writable");

        message.clearProperties();
        assertThat(message.propertyExists("a")).isFalse();
        assertThat(Collections.list(message.getPropertyNames())).isEmpty();
        message.setStringProperty("b", "2");
        assertThat(message.getStringProperty("b")).isEqualTo("2");
    }

    @Test
    void shouldEnumerateEveryPropertyNameOnce() throws JMSException {
        message.setIntProperty("one", 1);
        message.setStringProperty("two", "2");
        message.setIntProperty("one", 11);
        message.setStringProperty("JMSXGroupID", "g");
        assertThat(Collections.list(message.getPropertyNames())).containsExactlyInAnyOrder("one", "two", "JMSXGroupID");
    }

    @Test
    void shouldEnforceJmsxPropertyTypes() throws JMSException {
        message.setStringProperty("JMSXGroupID", "g");
        message.setIntProperty("JMSXGroupSeq", 2);
        message.setStringProperty("JMSXUserID", "u");
        message.setStringProperty("JMSXAppID", "app");
        assertThatThrownBy(() -> message.setStringProperty("JMSXGroupSeq", "2"))
                .isInstanceOf(MessageFormatException.class).hasMessageContaining("Integer");
        assertThatThrownBy(() -> message.setIntProperty("JMSXGroupID", 1)).isInstanceOf(MessageFormatException.class);
        assertThatThrownBy(() -> message.setLongProperty("JMSXDeliveryCount", 1L))
                .isInstanceOf(MessageFormatException.class);
        assertThat(message.getIntProperty("JMSXGroupSeq")).isEqualTo(2);
    }

    @Test
    void shouldSetDeliveryCountAndRedeliveredEvenWhenReadOnly() throws JMSException {
        message.onReceived();
        message.setDeliveryCount(1);
        assertThat(message.getIntProperty("JMSXDeliveryCount")).isEqualTo(1);
        assertThat(message.getJMSRedelivered()).isFalse();
        message.setDeliveryCount(3);
        assertThat(message.getIntProperty("JMSXDeliveryCount")).isEqualTo(3);
        assertThat(message.getJMSRedelivered()).isTrue();
        assertThatThrownBy(() -> message.setDeliveryCount(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
