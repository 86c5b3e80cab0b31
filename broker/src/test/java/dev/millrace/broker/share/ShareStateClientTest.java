package dev.millrace.broker.share;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.Node;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.protocol.ext.ShareState;

/**
 * A share-state coordinator that cannot be reached (its broker was killed) fails the sends to it, each as a failed
 * future, and the next send connects again: the failover chaos suite saw every later send to a killed broker throw
 * its first connect failure at once (a bare {@code getNow} on the failed connect), so that the broker was never
 * connected to again, even after it came back, and share fetches saving through it were answered
 * UNKNOWN_SERVER_ERROR for good.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShareStateClientTest {

    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    @Test
    void shouldConnectAgainAfterAFailedConnect() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, LOOPBACK)) {
            port = probe.getLocalPort();
        }
        Node coordinator = new Node(2, LOOPBACK.getHostAddress(), port);
        try (ShareStateClient client = new ShareStateClient(1, 5_000)) {
            CompletableFuture<ShareState.Response> first = client.send(coordinator, ShareState.Request.list("g"));
            assertThatThrownBy(first::join).isInstanceOf(CompletionException.class)
                    .hasCauseInstanceOf(IOException.class);

            CompletableFuture<ShareState.Response> second = client.send(coordinator, ShareState.Request.list("g"));
            assertThatThrownBy(second::join).as("still nothing listens: the send fails as a future")
                    .isInstanceOf(CompletionException.class).hasCauseInstanceOf(IOException.class);

            try (ServerSocket back = new ServerSocket(port, 1, LOOPBACK)) {
                back.setSoTimeout(10_000);
                client.send(coordinator, ShareState.Request.list("g"));
                try (Socket connected = back.accept()) {
                    assertThat(connected.isConnected()).as("the coordinator's broker is connected to again").isTrue();
                }
            }
        }
    }
}
