package dev.millrace.broker.server;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.common.utils.Time;

import dev.millrace.broker.config.BrokerConfigLoader;

/** Starts in-process brokers on loopback with ephemeral ports, for integration tests. */
public final class TestBrokers {

    private TestBrokers() {
    }

    /**
     * A started broker on 127.0.0.1: any free listener port, a free quorum port, data in {@code dataDir},
     * single-partition offsets, transaction-state and delay topics and no initial rebalance delay, then
     * {@code settings} on top.
     */
    static BrokerServer start(Path dataDir, Map<String, String> settings) throws Exception {
        Map<String, String> all = new HashMap<>(Map.of("host", "127.0.0.1", "port", "0",
                "data.dir", dataDir.toString(), "controller.port", String.valueOf(freePort()),
                "offsets.topic.num.partitions", "1", "group.initial.rebalance.delay.ms", "0",
                "transaction.state.log.num.partitions", "1", "delay.topic.num.partitions", "1"));
        all.putAll(settings);
        BrokerServer broker = new BrokerServer(BrokerConfigLoader.fromMap(all), Time.SYSTEM);
        broker.start();
        return broker;
    }

    static String bootstrap(BrokerServer broker) {
        return "127.0.0.1:" + broker.boundAddress().getPort();
    }

    /**
     * A port for a test node to listen on: chosen at random below the kernel's ephemeral range (32768 and up here),
     * where outgoing connections of this and the other test JVM take their local ports and could take it between
     * this choice and the bind, checked bindable on 127.0.0.1, and never handed out twice in this JVM.
     */
    public static int freePort() throws IOException {
        while (true) {
            int port = 15_000 + java.util.concurrent.ThreadLocalRandom.current().nextInt(17_000);
            if (!HANDED_OUT.add(port)) {
                continue;
            }
            try (ServerSocket socket = new ServerSocket()) {
                socket.setReuseAddress(false);
                socket.bind(new java.net.InetSocketAddress("127.0.0.1", port));
                return port;
            } catch (IOException taken) {
                // in use: try another
            }
        }
    }

    private static final java.util.Set<Integer> HANDED_OUT = java.util.concurrent.ConcurrentHashMap.newKeySet();
}
