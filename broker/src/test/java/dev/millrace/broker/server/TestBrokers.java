package dev.millrace.broker.server;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.common.utils.Time;

import dev.millrace.broker.config.BrokerConfigLoader;
import dev.millrace.broker.testing.TestPorts;

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

    /** A port for a test node to listen on, reserved against every test JVM on this machine ({@link TestPorts}). */
    public static int freePort() throws IOException {
        return TestPorts.reserve();
    }
}
