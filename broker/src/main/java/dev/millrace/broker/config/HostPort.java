package dev.millrace.broker.config;

import java.net.InetSocketAddress;

/**
 * A host (name or IP address, as written in the settings) and a port. The text form is
 * {@code host:port}, which is how the controller identifies a voter: the same voter must keep the
 * same text across restarts.
 *
 * <p>Immutable; thread-safe.
 */
public record HostPort(String host, int port) {

    public HostPort {
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException("host must not be blank");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port must be 1..65535, was " + port);
        }
    }

    /** An unresolved socket address; resolve it where it is bound or connected to. */
    public InetSocketAddress toSocketAddress() {
        return InetSocketAddress.createUnresolved(host, port);
    }

    @Override
    public String toString() {
        return host + ":" + port;
    }
}
