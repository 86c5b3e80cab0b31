package dev.millrace.broker.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A broker that cannot be reached (it was killed) fails the requests sent to it, each as a failed future, and the
 * next request connects again. The failover chaos suite saw 503 Produce and TxnOffsetCommit requests answered
 * UNKNOWN_SERVER_ERROR for up to 22 s after a kill: the transaction verification's sender kept its failed connect to
 * the coordinator's broker and threw that first failure out of every later call at once (a bare {@code getNow}),
 * synchronously, past the verifier's mapping of failures to COORDINATOR_NOT_AVAILABLE, so transactional producers
 * (the delayed-delivery service among them) got a non-retriable error until the coordinator moved.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BrokerRequestSenderTest {

    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    @Test
    void shouldFailAsAFutureAndConnectAgainAfterAFailedConnect() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, LOOPBACK)) {
            port = probe.getLocalPort();
        }
        InetSocketAddress address = new InetSocketAddress(LOOPBACK, port);
        try (BrokerRequestSender sender = new BrokerRequestSender(1, id -> Optional.of(address), 5_000)) {
            CompletableFuture<ApiVersionsResponse> first = sender.send(2, new ApiVersionsRequest.Builder(), (short) 3);
            assertThatThrownBy(first::join).isInstanceOf(CompletionException.class)
                    .hasCauseInstanceOf(IOException.class);

            CompletableFuture<ApiVersionsResponse> second = sender.send(2, new ApiVersionsRequest.Builder(),
                    (short) 3);
            assertThatThrownBy(second::join).as("still nothing listens: the request fails as a future")
                    .isInstanceOf(CompletionException.class).hasCauseInstanceOf(IOException.class);

            try (ServerSocket back = new ServerSocket(port, 1, LOOPBACK)) {
                back.setSoTimeout(10_000);
                sender.send(2, new ApiVersionsRequest.Builder(), (short) 3);
                try (Socket connected = back.accept()) {
                    assertThat(connected.isConnected()).as("the broker is connected to again").isTrue();
                }
            }
        }
    }
}
