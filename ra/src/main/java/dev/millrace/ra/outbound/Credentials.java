package dev.millrace.ra.outbound;

import java.util.Objects;

import dev.millrace.jms.MillraceConnectionFactory;
import jakarta.resource.spi.ConnectionRequestInfo;

/**
 * The user and password a physical connection is opened with: the application's
 * ({@code createConnection(user, password)}, carried as this {@link ConnectionRequestInfo}) or the factory's
 * {@code user}/{@code password} options. The container pools connections per credentials: a managed connection
 * matches a request only with equal credentials.
 *
 * <p>Immutable.
 */
record Credentials(String user, String password) implements ConnectionRequestInfo {

    /** The credentials of a request: {@code info}'s, or the factory's when the application gave none. */
    static Credentials of(MillraceConnectionFactory settings, ConnectionRequestInfo info) {
        if (info instanceof Credentials c) {
            return c;
        }
        return new Credentials(settings.getUser(), settings.getPassword());
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Credentials c && Objects.equals(user, c.user) && Objects.equals(password, c.password);
    }

    @Override
    public int hashCode() {
        return Objects.hash(user, password);
    }

    @Override
    public String toString() {
        return "Credentials[user=" + user + "]";
    }
}
