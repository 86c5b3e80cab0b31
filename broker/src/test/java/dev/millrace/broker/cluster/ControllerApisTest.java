package dev.millrace.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

import org.apache.kafka.common.message.BrokerHeartbeatRequestData;
import org.apache.kafka.common.requests.BrokerHeartbeatRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.broker.controller.Controller;
import dev.millrace.broker.controller.Controller.BrokerHeartbeatReply;

@Timeout(10)
class ControllerApisTest {

    private final List<Integer> unreachable = new CopyOnWriteArrayList<>();

    /** A controller that answers heartbeats and records the unreachable hints; nothing else is called. */
    private final Controller controller = (Controller) Proxy.newProxyInstance(getClass().getClassLoader(),
            new Class<?>[] {Controller.class}, (proxy, method, args) -> switch (method.getName()) {
                case "brokerHeartbeat" -> CompletableFuture.completedFuture(new BrokerHeartbeatReply(true, false,
                        false));
                case "brokerUnreachable" -> {
                    unreachable.add((Integer) args[0]);
                    yield null;
                }
                default -> throw new UnsupportedOperationException(method.getName());
            });

    @Test
    void shouldTellTheControllerWhenTheConnectionOfABrokersHeartbeatsCloses() {
        ControllerApis apis = new ControllerApis(controller);
        apis.handle("connection-a", heartbeat(2)).orElseThrow().join();
        apis.handle("connection-b", heartbeat(3)).orElseThrow().join();

        apis.onConnectionClosed("connection-of-a-client");
        assertThat(unreachable).isEmpty();

        apis.onConnectionClosed("connection-a");
        apis.onConnectionClosed("connection-a"); // told once per connection
        assertThat(unreachable).containsExactly(2);
    }

    private static BrokerHeartbeatRequest heartbeat(int brokerId) {
        return new BrokerHeartbeatRequest.Builder(new BrokerHeartbeatRequestData().setBrokerId(brokerId)
                .setBrokerEpoch(7)).build();
    }
}
