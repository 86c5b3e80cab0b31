package dev.millrace.broker.network;

/**
 * The limits a listener puts on its connections, against clients that misbehave by accident or on purpose.
 * Each is a broker setting with Kafka's name:
 *
 * <ul>
 *   <li>{@code maxRequestBytes} ({@code socket.request.max.bytes}): a size prefix above it (or below 0) closes the
 *       connection as soon as the four size bytes are read, before any of the frame is buffered;
 *   <li>{@code maxConnections} ({@code max.connections}): connections open at once on the listener; one more is
 *       closed as soon as it is accepted;
 *   <li>{@code maxConnectionsPerIp} ({@code max.connections.per.ip}): the same, counted per client IP address;
 *   <li>{@code idleTimeoutMs} ({@code connections.max.idle.ms}): a connection that neither sends a byte nor has a
 *       response written for this long, while no request of it is being handled, is closed.
 * </ul>
 *
 * <p>Immutable; thread-safe.
 */
public record ConnectionLimits(int maxRequestBytes, int maxConnections, int maxConnectionsPerIp, long idleTimeoutMs) {

    /** Kafka's defaults: 100 MiB requests, no connection limits, ten minutes of idleness. */
    public static final ConnectionLimits DEFAULTS = new ConnectionLimits(100 * 1024 * 1024, Integer.MAX_VALUE,
            Integer.MAX_VALUE, 600_000);

    public ConnectionLimits {
        checkPositive(maxRequestBytes, "maxRequestBytes");
        checkPositive(maxConnections, "maxConnections");
        checkPositive(maxConnectionsPerIp, "maxConnectionsPerIp");
        checkPositive(idleTimeoutMs, "idleTimeoutMs");
    }

    /** These limits with another largest request size. */
    public ConnectionLimits withMaxRequestBytes(int bytes) {
        return new ConnectionLimits(bytes, maxConnections, maxConnectionsPerIp, idleTimeoutMs);
    }

    private static void checkPositive(long value, String name) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + " must be positive, was " + value);
        }
    }
}
