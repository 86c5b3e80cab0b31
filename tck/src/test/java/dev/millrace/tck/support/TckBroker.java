package dev.millrace.tck.support;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;

/**
 * The broker the suite runs against, started once per run by {@link TckExtension}: either Millrace or, with
 * {@code -Dtck.target=artemis} ({@code -Partemis}), ActiveMQ Artemis. Tests never see it: they reach it through JNDI,
 * with the environment of {@link #jndiResource()} in which {@code ${tck.broker}} is replaced by {@link #address()}.
 * Implementations are started by one thread and closed by one thread; {@link #address()} is safe to call from any.
 */
interface TckBroker extends AutoCloseable {

    /** What {@code ${tck.broker}} stands for in the JNDI properties: the broker's address in its client's syntax. */
    String address();

    /** Class-path resource with the JNDI environment for this broker. */
    String jndiResource();

    /** Starts the broker named by {@code target} ({@code millrace} or {@code artemis}) with its data under {@code dir}. */
    static TckBroker start(String target, Path dir) throws Exception {
        return switch (target) {
            case "millrace" -> MillraceTckBroker.start(dir);
            case "artemis" -> ArtemisTckBroker.start(dir);
            default -> throw new IllegalArgumentException("tck.target must be millrace or artemis, not '" + target + "'");
        };
    }

    /** A port free at the time of the call on 127.0.0.1, for servers that cannot report an ephemeral one. */
    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
