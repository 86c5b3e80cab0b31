package dev.millrace.tck;

import static dev.millrace.tck.support.Jms.RECEIVE_MS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.millrace.tck.support.Jms;
import dev.millrace.tck.support.TckTest;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageFormatException;
import jakarta.jms.Queue;
import jakarta.jms.Session;

/**
 * The property type conversion table of 3.5.4, every cell, on a message that went through the broker: a property
 * written as one type and read as another either converts (the table's X) or throws MessageFormatException. Numbers
 * are 12 of each type, the boolean is true, the String is "12" (so every numeric read of it parses).
 */
@TckTest
@Timeout(30)
@DisplayName("3.5.4 Property type conversion table")
class PropertyConversionTest {

    private static final List<String> TYPES = List.of("boolean", "byte", "short", "int", "long", "float", "double",
            "String");
    /** The cells marked X in the table: written type to the types it may be read as (besides itself). */
    private static final Map<String, List<String>> ALLOWED = new LinkedHashMap<>();

    static {
        ALLOWED.put("boolean", List.of("boolean", "String"));
        ALLOWED.put("byte", List.of("byte", "short", "int", "long", "String"));
        ALLOWED.put("short", List.of("short", "int", "long", "String"));
        ALLOWED.put("int", List.of("int", "long", "String"));
        ALLOWED.put("long", List.of("long", "String"));
        ALLOWED.put("float", List.of("float", "double", "String"));
        ALLOWED.put("double", List.of("double", "String"));
        ALLOWED.put("String", TYPES);
    }

    private static Message received;

    @BeforeAll
    static void sendOneMessageWithEveryType(Jms jms) throws Exception {
        Session s = jms.session();
        Message m = s.createMessage();
        m.setBooleanProperty("boolean", true);
        m.setByteProperty("byte", (byte) 12);
        m.setShortProperty("short", (short) 12);
        m.setIntProperty("int", 12);
        m.setLongProperty("long", 12L);
        m.setFloatProperty("float", 12f);
        m.setDoubleProperty("double", 12d);
        m.setStringProperty("String", "12");
        Queue q = jms.queue();
        s.createProducer(q).send(m);
        received = s.createConsumer(q).receive(RECEIVE_MS);
        assertThat(received).as("message received").isNotNull();
    }

    static List<Arguments> cells() {
        List<Arguments> cells = new ArrayList<>();
        for (String written : TYPES) {
            for (String read : TYPES) {
                cells.add(Arguments.of(written, read, ALLOWED.get(written).contains(read)));
            }
        }
        return cells;
    }

    @ParameterizedTest(name = "3.5.4 conversion table: {0} property read as {1} (allowed: {2})")
    @MethodSource("cells")
    void shouldConvertOrRefuseAsTheTableSays(String written, String read, boolean allowed) throws Exception {
        if (allowed) {
            assertThat(read(received, written, read)).isEqualTo(expected(written, read));
        } else {
            assertThatThrownBy(() -> read(received, written, read)).isInstanceOf(MessageFormatException.class);
        }
    }

    private static Object read(Message m, String name, String as) throws JMSException {
        return switch (as) {
            case "boolean" -> m.getBooleanProperty(name);
            case "byte" -> m.getByteProperty(name);
            case "short" -> m.getShortProperty(name);
            case "int" -> m.getIntProperty(name);
            case "long" -> m.getLongProperty(name);
            case "float" -> m.getFloatProperty(name);
            case "double" -> m.getDoubleProperty(name);
            default -> m.getStringProperty(name);
        };
    }

    private static Object expected(String written, String as) {
        return switch (as) {
            case "boolean" -> written.equals("boolean"); // Boolean.valueOf("12") is false
            case "byte" -> (byte) 12;
            case "short" -> (short) 12;
            case "int" -> 12;
            case "long" -> 12L;
            case "float" -> 12f;
            case "double" -> 12d;
            default -> switch (written) {
                case "boolean" -> "true";
                case "float", "double" -> "12.0";
                default -> "12";
            };
        };
    }
}
