package dev.millrace.broker.controller;

import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Where clients of one listener reach a broker: the listener's advertised host and port. A broker registers one per
 * listener ({@code listeners}), by listener name, so that Metadata and FindCoordinator answer a client with the
 * addresses of the listener it connected to, on every broker.
 *
 * <p>Immutable; thread-safe.
 */
public record ListenerEndpoint(String host, int port) {

    public ListenerEndpoint {
        Objects.requireNonNull(host, "host");
    }

    /** An unmodifiable copy of {@code listeners} sorted by name (null: none). */
    static Map<String, ListenerEndpoint> sorted(Map<String, ListenerEndpoint> listeners) {
        return listeners == null || listeners.isEmpty() ? Map.of()
                : java.util.Collections.unmodifiableMap(new TreeMap<>(listeners));
    }

    @Override
    public String toString() {
        return host + ":" + port;
    }
}
