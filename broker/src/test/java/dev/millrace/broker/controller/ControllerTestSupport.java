package dev.millrace.broker.controller;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import org.apache.kafka.common.Uuid;

import dev.millrace.broker.controller.Controller.BrokerHeartbeat;
import dev.millrace.broker.controller.Controller.BrokerHeartbeatReply;
import dev.millrace.broker.controller.Controller.BrokerRegistration;

/** Fixtures shared by the controller tests: loopback ports and waiting for an image. */
final class ControllerTestSupport {

    static final String LOOPBACK = "127.0.0.1";
    static final long AWAIT_SECONDS = 15;
    static final String CLUSTER_ID = ImageFixtures.CLUSTER_ID;

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

    /** The incarnation id tests give broker {@code brokerId}: fixed, so that a restart registers idempotently. */
    static Uuid incarnation(int brokerId) {
        return new Uuid(7, brokerId);
    }

    /**
     * Registers broker {@code brokerId} (fixed incarnation, no rack) and heartbeats once, caught up with
     * the controller's image, so that it is unfenced; @return its epoch.
     */
    static long registerUnfenced(Controller controller, int brokerId) throws Exception {
        return registerUnfenced(controller, brokerId, null);
    }

    static long registerUnfenced(Controller controller, int brokerId, String rack) throws Exception {
        long epoch = await(controller.registerBroker(new BrokerRegistration(brokerId, CLUSTER_ID,
                incarnation(brokerId), LOOPBACK, 9000 + brokerId, rack)));
        BrokerHeartbeatReply reply = await(controller.brokerHeartbeat(new BrokerHeartbeat(brokerId, epoch,
                controller.image().appliedIndex(), false, false)));
        if (reply.fenced()) {
            throw new AssertionError("broker " + brokerId + " is still fenced after a caught-up heartbeat: " + reply);
        }
        return epoch;
    }

    static <T> T await(CompletableFuture<T> future) throws Exception {
        return future.get(AWAIT_SECONDS, TimeUnit.SECONDS);
    }
}
