package dev.millrace.broker.controller;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/** Fixtures shared by the controller tests: loopback ports and waiting for an image. */
final class ControllerTestSupport {

    static final String LOOPBACK = "127.0.0.1";
    static final long AWAIT_SECONDS = 15;

    private ControllerTestSupport() {
    }

    /** A port that was free on 127.0.0.1 a moment ago; a test picks it once and keeps it across restarts. */
    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(LOOPBACK))) {
            return socket.getLocalPort();
        }
    }

    /** Waits, without polling, until the controller's image satisfies {@code condition}. */
    static MetadataImage awaitImage(Controller controller, Predicate<MetadataImage> condition) throws Exception {
        CompletableFuture<MetadataImage> reached = new CompletableFuture<>();
        controller.registerListener((previous, current) -> {
            if (condition.test(current)) {
                reached.complete(current);
            }
        });
        MetadataImage now = controller.image();
        if (condition.test(now)) {
            reached.complete(now);
        }
        return reached.get(AWAIT_SECONDS, TimeUnit.SECONDS);
    }

    static <T> T await(CompletableFuture<T> future) throws Exception {
        return future.get(AWAIT_SECONDS, TimeUnit.SECONDS);
    }
}
