package dev.millrace.protocol.selector;

import java.util.HashMap;
import java.util.Map;

/** Test helpers: evaluate a selector against a map of identifiers to values. */
final class Selectors {

    private Selectors() {
    }

    /** A map from alternating names and values; values may be null. */
    static Map<String, Object> values(Object... namesAndValues) {
        Map<String, Object> map = new HashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            map.put((String) namesAndValues[i], namesAndValues[i + 1]);
        }
        return map;
    }

    /** TRUE, FALSE or null (UNKNOWN). */
    static Boolean eval(String selector, Object... namesAndValues) {
        Map<String, Object> map = values(namesAndValues);
        return Selector.compile(selector).evaluate(map::get);
    }

    static boolean matches(String selector, Object... namesAndValues) {
        Map<String, Object> map = values(namesAndValues);
        return Selector.compile(selector).matches(map::get);
    }
}
