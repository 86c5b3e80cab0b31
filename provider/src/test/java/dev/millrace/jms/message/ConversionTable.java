package dev.millrace.jms.message;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.params.provider.Arguments;

/**
 * The JMS 3.1 conversion tables written out cell by cell, independently of the code under test: for each written type
 * a sample value and, for each type it may be read as, the String form of the expected result. A missing cell must
 * throw MessageFormatException.
 */
final class ConversionTable {

    static final List<String> PROPERTY_TYPES =
            List.of("boolean", "byte", "short", "int", "long", "float", "double", "String");
    static final List<String> BODY_TYPES =
            List.of("boolean", "byte", "short", "char", "int", "long", "float", "double", "String", "byte[]");

    static final Map<String, Object> SAMPLES = Map.of(
            "boolean", true, "byte", (byte) 1, "short", (short) 2, "char", 'c', "int", 3, "long", 4L,
            "float", 5.5f, "double", 6.5d, "String", "7", "byte[]", new byte[] {8});

    private static final Map<String, Map<String, String>> ALLOWED = Map.of(
            "boolean", Map.of("boolean", "true", "String", "true"),
            "byte", Map.of("byte", "1", "short", "1", "int", "1", "long", "1", "String", "1"),
            "short", Map.of("short", "2", "int", "2", "long", "2", "String", "2"),
            "char", Map.of("char", "c", "String", "c"),
            "int", Map.of("int", "3", "long", "3", "String", "3"),
            "long", Map.of("long", "4", "String", "4"),
            "float", Map.of("float", "5.5", "double", "5.5", "String", "5.5"),
            "double", Map.of("double", "6.5", "String", "6.5"),
            "String", Map.of("boolean", "false", "byte", "7", "short", "7", "int", "7", "long", "7",
                    "float", "7.0", "double", "7.0", "String", "7"),
            "byte[]", Map.of("byte[]", "[8]"));

    private ConversionTable() {
    }

    /** Every (written type, read type, expected String or null for MessageFormatException) cell over {@code types}. */
    static List<Arguments> cells(List<String> types) {
        List<Arguments> cells = new ArrayList<>();
        for (String written : types) {
            for (String read : types) {
                cells.add(Arguments.of(written, read, ALLOWED.get(written).get(read)));
            }
        }
        return cells;
    }

    static String show(Object value) {
        return value instanceof byte[] ? java.util.Arrays.toString((byte[]) value) : String.valueOf(value);
    }
}
